"""The repository boundary and the checked-in workspace connection descriptor inside it.

The Git worktree is a trust boundary: a descriptor above it belongs to somebody else's
checkout (a home directory, a parent monorepo), so the search never looks past it.
`ConnectionSource` is what discovery hands on: the contract and where it came from.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml

from tau import safeyaml
from tau.api.connection import (
    DESCRIPTOR_PATH,
    OWNER,
    WorkspaceConnection,
    decoded_findings,
    refuse_credentials,
    validate_descriptor,
)
from tau.connection.yamlstrict import StrictYamlError, compose_one, construct
from tau.errors import UsageError, ValidationError


@dataclass(frozen=True)
class Repository:
    """A Git worktree root (or, outside Git, the start directory itself)."""

    root: Path
    real_root: Path
    git: bool

    def relative(self, path: Path) -> str:
        try:
            return Path(os.path.abspath(path)).relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def find_repository(start: str | os.PathLike[str] = ".") -> Repository:
    start_dir = Path(os.path.abspath(start))
    for directory in (start_dir, *start_dir.parents):
        if (directory / ".git").exists():
            return Repository(directory, directory.resolve(), True)
    return Repository(start_dir, start_dir.resolve(), False)


def is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


class DescriptorNotFound(UsageError):
    """No descriptor between the start directory and the repository boundary, no assignment."""


def find_descriptor(start: Path, repository: Repository) -> Path:
    """Walk upward (lexically) from `start` to the repository root, never above it."""
    current = Path(os.path.abspath(start))
    if not is_within(current, repository.root):
        current = repository.root
    while True:
        candidate = current / DESCRIPTOR_PATH
        if candidate.exists() or candidate.is_symlink():
            return candidate
        if current == repository.root:
            break
        current = current.parent
    raise DescriptorNotFound(
        "descriptor: Tau workspace connection descriptor not found: expected "
        f"{DESCRIPTOR_PATH} between {Path(os.path.abspath(start))} and repository boundary "
        f"{repository.root}",
        hint="commit the descriptor your platform handed you, or run "
        "`tau workspace connection assign <workspace> --context <ctx>` for this checkout only",
        owner=OWNER,
    )


def check_inside(path: Path, repository: Repository, what: str) -> Path:
    """`path` must lie in the repository both as written and after resolving symlinks."""
    lexical = Path(os.path.abspath(path))
    if not is_within(lexical, repository.root) or not is_within(
        lexical.resolve(), repository.real_root
    ):
        raise ValidationError(
            f"{what}: {path} escapes repository root {repository.root}",
            hint="keep it inside the Git worktree",
            owner=OWNER,
        )
    return lexical


def load_descriptor(path: Path, repository: Repository) -> WorkspaceConnection:
    lexical = check_inside(path, repository, "descriptor")
    shown = repository.relative(lexical)
    if not lexical.exists():
        raise DescriptorNotFound(f"descriptor: {shown} does not exist", owner=OWNER)
    if not lexical.resolve().is_file():
        raise ValidationError(f"descriptor: {shown} is not a regular file", owner=OWNER)
    try:
        text = lexical.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValidationError(
            f"descriptor: cannot read {shown} ({type(error).__name__})", owner=OWNER
        ) from None
    return parse_descriptor_text(text, shown)


# A descriptor is a screenful of YAML; the bound keeps every scan of it well under a second.
MAX_DESCRIPTOR_CHARS = 256 * 1024


def parse_descriptor_text(text: str, source: str) -> WorkspaceConnection:
    """Credential scan first (it must fire even on otherwise invalid files), then schema.

    The raw text is scanned before parsing, then every decoded scalar (YAML escapes can
    reassemble a token no raw line shows) before anything is validated or printed.
    """
    if len(text) > MAX_DESCRIPTOR_CHARS:
        raise ValidationError(
            f"descriptor: {source} is {len(text)} characters long; a connection descriptor "
            f"holds at most {MAX_DESCRIPTOR_CHARS}",
            owner=OWNER,
        )
    refuse_credentials(text, source)
    try:
        node = compose_one(text)
        refuse_credentials(text, source, decoded=decoded_findings(_scalars(node)))
        data = construct(node)
    except StrictYamlError as error:
        # Not YAML as a whole; its quoted scalars still decode one by one, and a token
        # hidden in one is the finding that matters more than the syntax error.
        refuse_credentials(text, source, decoded=decoded_findings(_quoted_scalars(text)))
        raise ValidationError(f"descriptor: {source}: {error}", owner=OWNER) from None
    if data is None:
        raise ValidationError(f"descriptor: {source} is empty", owner=OWNER)
    return validate_descriptor(data, source)


def _scalars(node: yaml.Node | None) -> Iterator[tuple[int, str, bool]]:
    for scalar, is_key in safeyaml.scalars(node):
        yield scalar.start_mark.line + 1, scalar.value, is_key


_DOUBLE_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _quoted_scalars(text: str) -> Iterator[tuple[int, str, bool]]:
    """Each double-quoted scalar of a text that does not parse, decoded on its own."""
    for match in _DOUBLE_QUOTED.finditer(text):
        quoted = match.group().replace("\n", "\n ")
        try:
            value = safeyaml.load(f"v: {quoted}")
        except (safeyaml.YamlRefused, RecursionError):
            continue
        if isinstance(value, dict) and isinstance(value.get("v"), str):
            yield text.count("\n", 0, match.start()) + 1, value["v"], False


SourceKind = Literal["descriptor", "assignment"]


@dataclass(frozen=True)
class ConnectionSource:
    """The effective connection contract of one project, and where it came from."""

    descriptor: WorkspaceConnection
    kind: SourceKind
    repository: Repository
    project: str | None
    project_root: Path
    path: Path

    @property
    def shown(self) -> str:
        if self.kind == "descriptor":
            return self.repository.relative(self.path)
        return f"local assignment {self.path}"

    @property
    def trust_identity(self) -> str:
        """The pinned identity of this checkout: real repository root + real contract path."""
        return f"{self.repository.real_root}\0{self.path.resolve()}"
