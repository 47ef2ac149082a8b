"""Nearest-valid-key suggestions ("did you mean") for unknown config keys."""

from __future__ import annotations

from collections.abc import Iterable


def distance(a: str, b: str) -> int:
    """Levenshtein edit distance."""
    if a == b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def threshold(leaf: str) -> int:
    """How many edits a suggestion may be away: clamp(len(leaf) / 3, 2, 6)."""
    return max(2, min(6, len(leaf) // 3))


def nearest(key: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate within the edit threshold of `key`, or None."""
    best: tuple[int, str] | None = None
    limit = threshold(key)
    for candidate in sorted(set(candidates)):
        score = distance(key.lower(), candidate.lower())
        if score <= limit and (best is None or score < best[0]):
            best = (score, candidate)
    return best[1] if best else None


def suggest_path(path: str, known_paths: Iterable[str]) -> str | None:
    """Suggest a known dotted path for an unknown one.

    Tries, in order: a sibling whose name is close to the leaf; the same leaf name in another
    group (`gpus` at top level -> `compute.gpus`); a close match on the whole path.
    """
    known = sorted(set(known_paths))
    parent, _, leaf = path.rpartition(".")
    siblings = [p.rpartition(".")[2] for p in known if p.rpartition(".")[0] == parent]
    sibling = nearest(leaf, siblings)
    if sibling is not None:
        return f"{parent}.{sibling}" if parent else sibling
    same_leaf = [p for p in known if p.rpartition(".")[2] == leaf and p != path]
    if len(same_leaf) == 1:
        return same_leaf[0]
    depth = path.count(".")
    return nearest(path, [p for p in known if p.count(".") == depth])
