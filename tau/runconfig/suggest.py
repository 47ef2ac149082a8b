"""Nearest-valid-key suggestions ("did you mean") for unknown config keys."""

from __future__ import annotations

from collections.abc import Iterable


def distance(a: str, b: str, limit: int | None = None) -> int:
    """Levenshtein edit distance; with `limit`, any value above it may be returned as limit+1."""
    if a == b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if limit is not None and min(current) > limit:
            return limit + 1  # every later row only grows
        previous = current
    return previous[-1]


def threshold(leaf: str) -> int:
    """How many edits a suggestion may be away: clamp(len(leaf) / 3, 2, 6)."""
    return max(2, min(6, len(leaf) // 3))


def nearest(key: str, candidates: Iterable[str], limit: int | None = None) -> str | None:
    """The closest candidate within the edit threshold of `key`, or None."""
    best: tuple[int, str] | None = None
    limit = threshold(key) if limit is None else limit
    for candidate in sorted(set(candidates)):
        if abs(len(candidate) - len(key)) > limit:
            continue  # the distance is at least the length difference
        score = distance(key.lower(), candidate.lower(), limit)
        if score <= limit and (best is None or score < best[0]):
            best = (score, candidate)
    return best[1] if best else None


def suggest_path(path: str, known_paths: Iterable[str]) -> str | None:
    """Suggest a known dotted path for an unknown one.

    Tries, in order: a sibling whose name is close to the leaf; the same leaf name in another
    group (`gpus` at top level -> `compute.gpus`); when the parent itself is misspelled, a
    close match on the whole path among paths of the same depth.
    """
    known = set(known_paths)
    parent, _, leaf = path.rpartition(".")
    siblings = [p.rpartition(".")[2] for p in known if p.rpartition(".")[0] == parent]
    sibling = nearest(leaf, siblings)
    if sibling is not None:
        return f"{parent}.{sibling}" if parent else sibling
    same_leaf = [p for p in known if p.rpartition(".")[2] == leaf and p != path]
    if len(same_leaf) == 1:
        return same_leaf[0]
    if not parent or parent in known:
        return None
    depth = path.count(".")
    return nearest(path, [p for p in known if p.count(".") == depth], threshold(leaf))
