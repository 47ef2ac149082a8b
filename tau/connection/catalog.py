"""The monorepo project catalog, `tau.projects.yaml` (schema `tau.projects.v1`).

A monorepo holds several projects, each with its own targets and connection descriptor.
Which project a command means must never be a guess: selection follows a fixed precedence
and every ambiguity is an error that lists the candidates.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from tau import keys
from tau.api.connection import DESCRIPTOR_PATH
from tau.connection.descriptor import Repository, is_within, load_descriptor
from tau.connection.yamlstrict import StrictYamlError, load_one
from tau.errors import TauError, UsageError, ValidationError

CATALOG_FILE = "tau.projects.yaml"
CATALOG_SCHEMA = "tau.projects.v1"
OWNER = "repository maintainers (tau.projects.yaml)"
SMOKE = "smoke"
DESCRIPTOR_NAME = PurePosixPath(DESCRIPTOR_PATH).name

_PROJECT_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_PROJECT_KEYS = {"path", "connection", "workspace"}


@dataclass(frozen=True)
class Project:
    name: str
    path: str
    root: Path
    connection: Path
    workspace: str | None = None

    def owns(self, path: Path) -> bool:
        return is_within(Path(os.path.abspath(path)), self.root)


@dataclass(frozen=True)
class Catalog:
    path: Path
    repository: Repository
    projects: dict[str, Project]

    @property
    def names(self) -> str:
        return ", ".join(sorted(self.projects))

    def get(self, name: str) -> Project:
        if name not in self.projects:
            raise UsageError(f"unknown Tau project {name!r}; valid projects: {self.names}")
        return self.projects[name]


def load_catalog(repository: Repository) -> Catalog | None:
    """The catalog at the exact Git worktree root, or None; non-Git dirs never have one."""
    if not repository.git:
        return None
    path = repository.root / CATALOG_FILE
    if not path.exists():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValidationError(f"{CATALOG_FILE}: cannot read ({type(error).__name__})") from None
    if not text.strip():
        raise ValidationError(f"{CATALOG_FILE}: catalog is empty", owner=OWNER)
    try:
        data = load_one(text, strings_only=True)
    except StrictYamlError as error:
        raise ValidationError(f"{CATALOG_FILE}: {error}", owner=OWNER) from None
    problems: list[str] = []
    projects = _parse(data, repository, problems)
    if problems:
        raise ValidationError(
            f"{CATALOG_FILE} is invalid ({len(problems)} problem(s))",
            problems=problems,
            owner=OWNER,
        )
    return Catalog(path, repository, projects)


def _parse(data: object, repository: Repository, problems: list[str]) -> dict[str, Project]:
    if not isinstance(data, dict):
        problems.append("the catalog must be a mapping with schema and projects")
        return {}
    for key in sorted(set(data) - {"schema", "projects"}):
        problems.append(f"{key}: unknown field")
    if data.get("schema") != CATALOG_SCHEMA:
        problems.append(f"schema: must be {CATALOG_SCHEMA}")
    entries = data.get("projects")
    if not isinstance(entries, dict) or not entries:
        problems.append("projects: at least one project is required")
        return {}
    projects: dict[str, Project] = {}
    for name, entry in entries.items():
        where = f"projects.{name}"
        if not _PROJECT_NAME.fullmatch(name):
            problems.append(f"{where}: project name must be a lowercase DNS label")
            continue
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be a mapping with path and connection")
            continue
        for key in sorted(set(entry) - _PROJECT_KEYS):
            problems.append(f"{where}.{key}: unknown field")
        root = _repo_path(entry.get("path"), f"{where}.path", repository, problems)
        connection = _repo_path(
            entry.get("connection"), f"{where}.connection", repository, problems
        )
        workspace = entry.get("workspace")
        if workspace is not None and (
            workspace != workspace.strip() or not _DNS_SUBDOMAIN.fullmatch(workspace)
        ):
            problems.append(f"{where}.workspace: {workspace!r} is not a DNS-1123 subdomain")
            workspace = None
        if root is None or connection is None:
            continue
        if not root.resolve().is_dir():
            problems.append(f"{where}.path: {entry['path']} is not a directory")
            continue
        if not connection.resolve().is_file():
            problems.append(f"{where}.connection: {entry['connection']} is not a regular file")
            continue
        try:
            descriptor = load_descriptor(connection, repository)
        except TauError as error:
            problems.append(f"{where}.connection: {error.one_line()}")
            continue
        if workspace and descriptor.workspace != workspace:
            problems.append(
                f"{where}: workspace {workspace!r} conflicts with connection workspace "
                f"{descriptor.workspace!r}"
            )
        projects[name] = Project(name, entry["path"], root, connection, workspace)
    _check_disjoint(projects, problems)
    return projects


def _repo_path(
    value: object, where: str, repository: Repository, problems: list[str]
) -> Path | None:
    if value is None:
        problems.append(f"{where}: required field is missing")
        return None
    text = str(value)
    if text != text.strip():
        problems.append(f"{where}: must not have surrounding whitespace")
        return None
    if "\\" in text:
        problems.append(f"{where}: use forward slashes")
        return None
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text):
        problems.append(f"{where}: must be repository-relative, not absolute")
        return None
    if any(part in ("", ".", "..") for part in text.split("/")):
        problems.append(f"{where}: empty, '.' and '..' path components are not allowed")
        return None
    path = repository.root / text
    if not is_within(path.resolve(), repository.real_root):
        problems.append(f"{where}: {text} escapes the repository")
        return None
    current = path
    while current != repository.root:
        if (current / ".git").exists():
            problems.append(f"{where}: {text} is at or below a Git submodule")
            return None
        current = current.parent
    return path


def _check_disjoint(projects: dict[str, Project], problems: list[str]) -> None:
    items = sorted(projects.values(), key=lambda project: project.name)
    for index, first in enumerate(items):
        for second in items[index + 1 :]:
            lexical = is_within(first.root, second.root) or is_within(second.root, first.root)
            real_a, real_b = first.root.resolve(), second.root.resolve()
            physical = is_within(real_a, real_b) or is_within(real_b, real_a)
            if lexical or physical:
                problems.append(
                    f"project roots must be disjoint: {first.name}={first.path} and "
                    f"{second.name}={second.path}"
                )


def project_targets(project: Project) -> dict[str, Path]:
    """Checked-in targets of a project: every `tau/*.yaml|yml` but the descriptor."""
    folder = project.root / "tau"
    found: dict[str, Path] = {}
    if not folder.is_dir():
        return found
    for entry in sorted(folder.iterdir()):
        if entry.suffix not in (".yaml", ".yml") or entry.name == DESCRIPTOR_NAME:
            continue
        if not entry.is_file() or not is_within(entry.resolve(), project.root.resolve()):
            continue
        if entry.stem in found:
            raise ValidationError(
                f"project {project.name!r} target {entry.stem!r} has both tau/{entry.stem}.yaml "
                f"and tau/{entry.stem}.yml; keep exactly one extension",
                owner=OWNER,
            )
        found[entry.stem] = entry
    return found


def default_config(project: Project) -> Path | None:
    present = [
        project.root / name for name in keys.CONFIG_FILE_NAMES if (project.root / name).is_file()
    ]
    if len(present) > 1:
        names = ", ".join(path.name for path in present)
        raise ValidationError(
            f"project {project.name!r} has multiple default Tau configs ({names}); keep one",
            owner=OWNER,
        )
    return present[0] if present else None


def select_project(
    catalog: Catalog,
    *,
    project: str = "",
    config: str | os.PathLike[str] | None = None,
    cwd: str | os.PathLike[str] = ".",
    target: str = "",
) -> Project:
    """Submission selection: --project, --config owner, CWD, unique target, only project."""
    selected = catalog.get(project) if project else None
    if config is not None:
        config_path = Path(os.path.abspath(config))
        owners = [p for p in catalog.projects.values() if p.owns(config_path)]
        if selected is not None:
            if selected not in owners:
                raise UsageError(f"--project {project!r} does not own --config {config}")
            return selected
        if not owners:
            known = ", ".join(f"{p.name}={p.path}" for p in catalog.projects.values())
            raise UsageError(
                f"--config {config} is not owned by any Tau project; known project paths: {known}"
            )
        return owners[0]
    if selected is not None:
        return selected
    containing = _containing(catalog, cwd)
    if containing is not None:
        return containing
    if target and target != SMOKE:
        holders = sorted(p.name for p in catalog.projects.values() if target in project_targets(p))
        if len(holders) == 1:
            return catalog.projects[holders[0]]
        if len(holders) > 1:
            raise UsageError(
                f"run target {target!r} exists in projects: {', '.join(holders)}; "
                "rerun with --project <name>"
            )
    if len(catalog.projects) == 1:
        return next(iter(catalog.projects.values()))
    raise UsageError(
        f"Tau project is ambiguous; rerun with --project <name>. Valid projects: {catalog.names}"
    )


def select_lifecycle_project(
    catalog: Catalog, *, project: str = "", cwd: str | os.PathLike[str] = "."
) -> Project:
    """Lifecycle and connection selection: --project, CWD, only project. Never by name."""
    if project:
        return catalog.get(project)
    containing = _containing(catalog, cwd)
    if containing is not None:
        return containing
    if len(catalog.projects) == 1:
        return next(iter(catalog.projects.values()))
    raise UsageError(
        "lifecycle routing is ambiguous; rerun with --project <name>. "
        f"Valid projects: {catalog.names}"
    )


def _containing(catalog: Catalog, cwd: str | os.PathLike[str]) -> Project | None:
    here = Path(os.path.abspath(cwd))
    for candidate in catalog.projects.values():
        if candidate.owns(here) or is_within(here.resolve(), candidate.root.resolve()):
            return candidate
    return None


def check_workspace_binding(project: Project, workspace: str, source: str) -> None:
    """A catalog `workspace` binds the project: other sources must agree with it."""
    if project.workspace and workspace and workspace != project.workspace:
        raise ValidationError(
            f"{source} {workspace!r} conflicts with catalog connection workspace "
            f"{project.workspace!r} for project {project.name!r}",
            owner=OWNER,
        )
