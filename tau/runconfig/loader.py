"""Loading a run config file: YAML -> model, with every problem placed at file:line:column."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from tau.credentials import REDACTED, is_secret_name, redact
from tau.errors import UsageError
from tau.runconfig import catalog, managed, rules
from tau.runconfig.issues import ConfigError, ConfigIssue
from tau.runconfig.managed import ManagedManifest
from tau.runconfig.models import DURATION_FIELDS, RunConfig
from tau.runconfig.suggest import suggest_path
from tau.runconfig.yamlsource import Position, Source, YamlSyntaxError, parse

YamlPath = tuple[str | int, ...]

EVAL_MIGRATION = (
    "task: eval, eval.harness, and eval.model were removed; evaluation is an ordinary run. "
    "Pass model and results paths through runtime.env and keep storage.output for results"
)
_TYPE_NAMES = {
    "string_type": "a string",
    "int_type": "an integer",
    "bool_type": "a boolean (true or false)",
    "float_type": "a number",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping of fields",
    "model_attributes_type": "a mapping of fields",
}


@dataclass
class LoadedConfig:
    """A validated run config plus where each of its fields was written.

    `config` is a `RunConfig` for direct configs and a `ManagedManifest` for SDK manifests.
    """

    path: Path
    config: RunConfig | ManagedManifest
    source: Source
    warnings: list[ConfigIssue] = field(default_factory=list)

    @property
    def is_managed(self) -> bool:
        return isinstance(self.config, ManagedManifest)

    @property
    def base_dir(self) -> Path:
        """Config-relative paths (entrypoint, snapshots, workflow.file) resolve from here."""
        return self.path.parent

    def is_set(self, dotted_path: str) -> bool:
        """Whether the file wrote this field (as opposed to it taking its default)."""
        return self.where(dotted_path) is not None

    def position(self, dotted_path: str) -> Position | None:
        """Line and column of a dotted path such as `storage.image_assets[0].image`."""
        return self.source.position(parse_dotted(dotted_path))

    def where(self, dotted_path: str) -> str | None:
        """`file:line:column` of a field the file sets, else None (provenance for renderers)."""
        path = parse_dotted(dotted_path)
        position = self.source.keys.get(path)
        if position is None and path and isinstance(path[-1], int):
            position = self.source.values.get(path)  # list items have no key
        if position is None:
            return None
        return f"{self.path}:{position.line}:{position.column}"

    def entrypoint_path(self) -> Path | None:
        """The entrypoint on disk, resolved against the config's directory."""
        if not isinstance(self.config, RunConfig):
            return None
        entrypoint = self.config.entrypoint_value
        if not entrypoint or (self.config.run and self.config.run.source):
            return None
        path = self.base_dir / entrypoint
        try:
            return path.resolve()
        except RuntimeError:  # a symlink loop: readers report the file as unreadable
            return path.absolute()

    @property
    def config_hash(self) -> str:
        if isinstance(self.config, ManagedManifest):
            return self.config.sha256
        return config_hash(self.config)


def config_hash(config: RunConfig) -> str:
    """SHA-256 of the canonical JSON of the validated config (§3.2).

    Canonical: normalised values (aliases resolved), fields left at their defaults omitted,
    keys sorted, compact separators. Any field change changes it; script content does not.
    """
    import hashlib  # OpenSSL's load is noticeable on `tau run validate`, which never hashes

    data = config.model_dump(mode="json", exclude_defaults=True)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def parse_dotted(dotted_path: str) -> YamlPath:
    """`storage.image_assets[0].image` -> ("storage", "image_assets", 0, "image")."""
    parts: list[str | int] = []
    for segment in dotted_path.split("."):
        name, _, rest = segment.partition("[")
        if name:
            parts.append(name)
        while rest:
            index, _, rest = rest.partition("]")
            parts.append(int(index))
            rest = rest.lstrip("[")
    return tuple(parts)


def load(path: str | Path) -> LoadedConfig:
    """Read and validate one run config; raise ConfigError listing every problem."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise UsageError(
            f"{path}: cannot read run config ({error.strerror or error})",
            hint="pass an existing file with --config",
        ) from None
    return loads(raw, path)


def loads(raw: bytes, path: Path) -> LoadedConfig:
    """Validate config bytes as if read from `path` (tests and the property suite use this)."""
    file = str(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        issue = ConfigIssue(file, "", f"file is not UTF-8 text ({error.reason})")
        raise ConfigError(file, [issue]) from None
    try:
        source = parse(text)
    except YamlSyntaxError as error:
        pos = error.position
        raise ConfigError(
            file,
            [
                ConfigIssue(
                    file,
                    "",
                    f"YAML syntax error: {error.message}",
                    pos.line if pos else None,
                    pos.column if pos else None,
                )
            ],
        ) from None
    return _Validation(file, path, raw, source).run()


class _Validation:
    def __init__(self, file: str, path: Path, raw: bytes, source: Source) -> None:
        self.file = file
        self.path = path
        self.raw = raw
        self.source = source
        self.issues: list[ConfigIssue] = []
        self.hidden = _secret_values(source.data)

    def issue(self, path: YamlPath, message: str, *, at_value: bool = False) -> ConfigIssue:
        position = self.source.value_position(path) if at_value else self.source.position(path)
        for value in self.hidden:
            message = message.replace(value, REDACTED)
        return ConfigIssue(
            self.file,
            rules.dotted(path),
            message,
            position.line if position else None,
            position.column if position else None,
        )

    def add(self, path: YamlPath, message: str, *, at_value: bool = False) -> None:
        self.issues.append(self.issue(path, message, at_value=at_value))

    def fail_if_any(self) -> None:
        if self.issues:
            raise ConfigError(self.file, self.issues)

    def run(self) -> LoadedConfig:
        data = self.source.data
        if data is None:
            data = {}
        if not isinstance(data, dict):
            self.add(
                (),
                f"a run config must be a YAML mapping of fields, got {_kind(data)}",
                at_value=True,
            )
            self.fail_if_any()
        self.eval_migration(data)
        for path, message in self.source.problems:
            self.add(path, message)
        for path, message in _control_characters(data):
            self.add(path, message, at_value=True)
        if managed.is_managed(data):
            return self.managed(data)
        config = self.validate_model(data)
        self.fail_if_any()
        assert config is not None
        problems, warnings = rules.check(config, data)
        for path, message in problems:
            self.add(path, message)
        self.fail_if_any()
        self.local_imports(config, data)
        return LoadedConfig(self.path, config, self.source, [self.issue(p, m) for p, m in warnings])

    def local_imports(self, config: RunConfig, data: dict[str, Any]) -> None:
        from tau.runconfig.imports import unshipped_local_imports

        modules = unshipped_local_imports(config, self.path.parent)
        if modules:
            entrypoint = config.entrypoint_value
            where = rules.Checker(config, data).entrypoint_path()
            self.add(
                where,
                f'entrypoint "{entrypoint}" imports local modules that are not shipped with it: '
                f"{', '.join(modules)}; use run.source (Job) or run.working_dir (RayJob) to ship "
                "the project, or install them in the image",
            )
            self.fail_if_any()

    def eval_migration(self, data: dict[str, Any]) -> None:
        run = data.get("run")
        evaluation = data.get("eval")
        for path, value in (
            (("task",), data.get("task")),
            (("run", "task"), run.get("task") if isinstance(run, dict) else None),
        ):
            if isinstance(value, str) and value.strip().lower() == "eval":
                self.add(path, EVAL_MIGRATION)
                self.fail_if_any()
        if isinstance(evaluation, dict):
            for key in ("harness", "model"):
                if key in evaluation:
                    self.add(("eval", key), EVAL_MIGRATION)
                    self.fail_if_any()

    def managed(self, data: dict[str, Any]) -> LoadedConfig:
        storage = data.get("storage")
        if isinstance(storage, dict) and storage.get("publish"):
            self.add(
                ("storage", "publish"),
                "storage.publish: staged publication is not supported in managed workflow "
                "manifests",
            )
        self.fail_if_any()
        manifest = managed.parse(data, self.raw)
        warnings = [self.issue(path, message) for path, message in manifest.unknown]
        return LoadedConfig(self.path, manifest, self.source, warnings)

    def validate_model(self, data: dict[str, Any]) -> RunConfig | None:
        try:
            return RunConfig.model_validate(data)
        except pydantic.ValidationError as error:
            seen: dict[YamlPath, list[str]] = {}
            for item in error.errors(include_url=False, include_context=False):
                path = _yaml_path(data, item["loc"])
                if item["type"] == "extra_forbidden":
                    self.add(path, self.unknown_key(path))
                    continue
                expected = _TYPE_NAMES.get(item["type"])
                if expected is None:
                    message = item["msg"]
                    seen.setdefault(path, []).append(message)
                else:
                    seen.setdefault(path, []).append(expected)
            for path, messages in seen.items():
                value = _value_at(data, path)
                got = _kind(value)
                unique = list(dict.fromkeys(messages))
                generic = ".".join(str(p) for p in path if not isinstance(p, int))
                if generic in DURATION_FIELDS:
                    self.add(
                        path, f'expected a duration string such as "30s", got {got}', at_value=True
                    )
                elif all(m in _TYPE_NAMES.values() for m in unique):
                    hint = ""
                    if unique == ["a string"] and isinstance(value, int | float | bool):
                        hint = f'; quote it ("{_yaml_scalar(value)}")'
                    self.add(
                        path, f"expected {' or '.join(unique)}, got {got}{hint}", at_value=True
                    )
                else:
                    self.add(path, "; ".join(unique), at_value=True)
            return None

    def unknown_key(self, path: YamlPath) -> str:
        leaf = str(path[-1])
        shown = leaf if leaf.isidentifier() else json.dumps(leaf, ensure_ascii=False)
        message = f"field {shown} not found"
        generic = ".".join(str(p) for p in path if not isinstance(p, int))
        suggestion = suggest_path(generic, catalog.paths())
        if suggestion:
            message += f'; did you mean "{suggestion}"?'
        return message


def _secret_values(data: Any) -> list[str]:
    """Strings under secret-bearing fields (`runtime.env_secret`, `HF_TOKEN`), longest first.

    A token pasted where a Secret reference belongs must not come back in the error that
    says so; messages name the field instead.
    """
    found: set[str] = set()
    stack: list[tuple[bool, Any]] = [(False, data)]
    while stack:
        secret, value = stack.pop()
        if isinstance(value, dict):
            for key, child in value.items():
                stack.append((secret or (isinstance(key, str) and is_secret_name(key)), child))
        elif isinstance(value, list):
            stack.extend((secret, child) for child in value)
        elif secret and isinstance(value, str) and len(value) >= 4:
            found.add(value)
    return sorted(found, key=len, reverse=True)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _control_characters(data: Any) -> list[tuple[YamlPath, str]]:
    """Strings no field accepts: a NUL or terminal escape is never a path, name or command."""
    found: list[tuple[YamlPath, str]] = []
    stack: list[tuple[YamlPath, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(((*path, k), v) for k, v in value.items() if isinstance(k, str))
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in enumerate(value))
        elif isinstance(value, str):
            match = _CONTROL.search(value)
            if match:
                char = match.group().encode("unicode_escape").decode()
                found.append((path, f"contains the control character {char}; remove it"))
    return sorted(found, key=lambda item: [str(part) for part in item[0]])


def _yaml_path(data: Any, loc: tuple[Any, ...]) -> YamlPath:
    """The part of a pydantic error location that names real YAML keys and indices.

    Union branches and validator names add non-path entries (`int`, `str`, `[key]`); walking
    the data keeps only what exists, plus the final missing/unknown key.
    """
    path: list[str | int] = []
    node = data
    for part in loc:
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            path.append(part)
            node = node[part]
        else:
            break
    return tuple(path)


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _value_at(data: Any, path: YamlPath) -> Any:
    for part in path:
        data = data[part]
    return data


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}" if abs(value) < 10**12 else "a large integer"
    if isinstance(value, float):
        return f"number {value}"
    if isinstance(value, str):
        value = redact(value[:400])  # before cutting: a cut token no longer looks like one
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {shown!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
