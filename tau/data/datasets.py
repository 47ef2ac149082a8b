"""The dataset registry: immutable versions, movable aliases, content verification, ingest.

A registry is a catalog, not a data plane: a record says what a dataset version is, where
its bytes live on the data PVC and how to check them. Records are write-once; only aliases
move, by compare-and-swap. Every verb here is a function of a `Root`.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from tau.data import layout
from tau.data.clock import Clock, utc_now
from tau.data.load import read
from tau.data.records import (
    RL,
    SCHEMA_VERSION,
    TOKENIZED_UINT16,
    Component,
    DatasetAlias,
    DatasetFile,
    DatasetRecord,
    DatasetSource,
    Eval,
    IngestedFile,
    IngestStatus,
    Pretrain,
    content_digest,
    dataset_problems,
)
from tau.data.refs import DATASET_DEFAULT_ALIAS, SEGMENT, DatasetRef, segment, version
from tau.data.root import ANY, Conflict, Exists, FileStat, Missing, Root, Scope
from tau.errors import RuntimeFailure, UsageError, ValidationError

SCOPE = (Scope(layout.DATASETS),)
RESEARCHER = "researcher (dataset registry)"


class NotRegistered(RuntimeFailure):
    """The named dataset, version or alias has no record."""


def _missing(what: str, root: Root, hint: str = "") -> NotRegistered:
    return NotRegistered(
        f"{what} is not registered in {root.label}",
        hint=hint or "list what is with `tau data dataset list`",
        owner=RESEARCHER,
    )


def names(root: Root) -> list[str]:
    return [n for n in root.listdir(layout.DATASETS) if not n.startswith(".")]


def versions(root: Root, name: str) -> list[str]:
    return [
        v
        for v in root.listdir(layout.dataset_dir(name))
        if v != "aliases" and not v.startswith(".")
    ]


def aliases(root: Root, name: str) -> list[DatasetAlias]:
    found = []
    for entry in root.listdir(layout.dataset_aliases(name)):
        if entry.endswith(".json") and not entry.startswith("."):
            alias = read(root, f"{layout.dataset_aliases(name)}/{entry}", DatasetAlias)
            if alias is not None:
                found.append(alias)
    return found


def get(root: Root, name: str, ver: str) -> DatasetRecord:
    record = read(
        root, layout.dataset_record(segment("dataset name", name), version(ver)), DatasetRecord
    )
    if record is None:
        raise _missing(f"dataset {name}@{ver}", root)
    return record


def get_alias(root: Root, name: str, alias: str) -> DatasetAlias:
    found = read(
        root,
        layout.dataset_alias(segment("dataset name", name), segment("alias", alias)),
        DatasetAlias,
    )
    if found is None:
        raise _missing(
            f"alias {name}:{alias}",
            root,
            hint=f"point it at a version with `tau data dataset alias set {name} {alias} VERSION`",
        )
    return found


def resolve(root: Root, ref: DatasetRef) -> DatasetRecord:
    """A bare name reads alias `latest`; `NAME@TOKEN` is a version first, then an alias."""
    if ref.token is None:
        return get(root, ref.name, get_alias(root, ref.name, DATASET_DEFAULT_ALIAS).version)
    record = read(root, layout.dataset_record(ref.name, ref.token), DatasetRecord)
    if record is not None:
        return record
    alias = (
        read(root, layout.dataset_alias(ref.name, ref.token), DatasetAlias)
        if SEGMENT.match(ref.token)
        else None
    )
    if alias is None:
        known = versions(root, ref.name)
        raise NotRegistered(
            f"dataset {ref.name} has no version or alias {ref.token!r} in {root.label}",
            hint=f"known versions: {', '.join(known)}" if known else "",
            owner=RESEARCHER,
        )
    return get(root, ref.name, alias.version)


def list_records(
    root: Root, *, purpose: str | None = None, tags: dict[str, str] | None = None
) -> tuple[list[DatasetRecord], list[str]]:
    """Every readable record (damaged ones become warnings, so one bad file hides nothing)."""
    records, warnings = [], []
    for name in names(root):
        for ver in versions(root, name):
            try:
                record = read(root, layout.dataset_record(name, ver), DatasetRecord)
            except RuntimeFailure as error:
                warnings.append(error.one_line())
                continue
            if record is None:
                continue
            if purpose and record.purpose != purpose:
                continue
            if any(record.tags.get(k) != v for k, v in (tags or {}).items()):
                continue
            records.append(record)
    return records, warnings


@dataclass
class PurposeOptions:
    """The purpose block's fields (`--tokenizer`, `--rl-kind`, `--eval-task`, ...)."""

    tokenizer: str | None = None
    format: str = TOKENIZED_UINT16
    sequence_packing: bool = False
    rl_kind: str | None = None
    rl_policy_run: str | None = None
    rl_reward_model: str | None = None
    rl_schema: str | None = None
    eval_task: str | None = None
    eval_split: str | None = None
    eval_metric: str | None = None


@dataclass
class Registration:
    name: str
    version: str
    purpose: str
    files: list[DatasetFile]
    assurance: str
    prefix: str
    source: DatasetSource | None = None
    components: list[Component] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    options: PurposeOptions = field(default_factory=PurposeOptions)


def build(reg: Registration, clock: Clock = utc_now) -> DatasetRecord:
    segment("dataset name", reg.name)
    version(reg.version)
    opts = reg.options
    record = DatasetRecord(
        schema_version=SCHEMA_VERSION,
        name=reg.name,
        version=reg.version,
        purpose=reg.purpose,
        source=reg.source,
        prefix=reg.prefix,
        files=sorted(reg.files, key=lambda f: f.path),
        assurance=reg.assurance,
        created_at=clock(),
        tags=dict(sorted(reg.tags.items())),
        components=reg.components,
    )
    if reg.purpose == "pretrain":
        if reg.assurance == "verified" and opts.format == TOKENIZED_UINT16:
            for file in record.files:
                if file.bytes % 2:
                    raise ValidationError(
                        f"file {file.path} has an odd byte count {file.bytes}, but --format "
                        f"{TOKENIZED_UINT16} stores uint16 tokens",
                        owner=RESEARCHER,
                    )
                if file.token_count is None:
                    file.token_count = file.bytes // 2
        record.pretrain = Pretrain(
            tokenizer=opts.tokenizer,
            format=opts.format,
            total_tokens=sum(f.token_count or 0 for f in record.files),
            sequence_packing=opts.sequence_packing,
        )
    elif reg.purpose == "rl":
        record.rl = RL(
            kind=opts.rl_kind,
            policy_run=opts.rl_policy_run,
            reward_model=opts.rl_reward_model,
            schema=opts.rl_schema,
        )
    elif reg.purpose == "eval":
        record.eval = Eval(task=opts.eval_task, split=opts.eval_split, metric=opts.eval_metric)
    record.total_bytes = sum(f.bytes for f in record.files)
    record.digest = content_digest(record.files)
    return record


def register(root: Root, record: DatasetRecord) -> DatasetRecord:
    problems = dataset_problems(record)
    if problems:
        raise ValidationError(
            f"dataset {record.name}@{record.version} cannot be registered "
            f"({len(problems)} problem{'s' if len(problems) > 1 else ''})",
            problems=problems,
            owner=RESEARCHER,
        )
    try:
        root.create(layout.dataset_record(record.name, record.version), record.to_bytes())
        root.commit()
    except Exists:
        raise UsageError(
            f"{record.name}@{record.version} already exists; datasets are immutable (register "
            "a new version)"
        ) from None
    return record


def scan(root: Root, path: str) -> list[DatasetFile]:
    """Hash every file under a data-root directory (`register --from`)."""
    try:
        stats = root.scan(path)
    except Missing:
        raise UsageError(
            f"--from {layout.in_pod(path)}: no such directory on {root.label}"
        ) from None
    if not stats:
        raise UsageError(f"--from {layout.in_pod(path)}: no files found on {root.label}")
    return [DatasetFile(path=s.path, bytes=s.bytes, sha256=s.sha256) for s in stats]


def set_alias(
    root: Root,
    name: str,
    alias: str,
    ver: str,
    *,
    expect: str | None = None,
    expect_absent: bool = False,
    clock: Clock = utc_now,
) -> DatasetAlias:
    """Point `name:alias` at a version; `--expect`/`--expect-absent` make it a CAS."""
    if expect and expect_absent:
        raise UsageError("--expect and --expect-absent cannot be combined")
    segment("alias", alias)
    record = get(root, name, ver)
    path = layout.dataset_alias(name, alias)
    current_raw = root.read(path)
    current = read(root, path, DatasetAlias)
    if expect_absent and current is not None:
        raise RuntimeFailure(
            f"alias {name}:{alias} already points at {current.version} (--expect-absent)",
            owner=RESEARCHER,
        )
    if expect and (current is None or current.version != expect):
        found = current.version if current else "nothing"
        raise RuntimeFailure(
            f"alias {name}:{alias} points at {found}, not {expect} (--expect); it moved since "
            "it was read",
            hint=f"re-read it with `tau data dataset alias get {name} {alias}`",
            owner=RESEARCHER,
        )
    moved = DatasetAlias(
        name=name,
        alias=alias,
        version=ver,
        digest=record.digest,
        record_path=layout.in_pod(layout.dataset_record(name, ver)),
        updated_at=clock(),
    )
    try:
        root.put(path, moved.to_bytes(), expect=current_raw if (expect or expect_absent) else ANY)
        root.commit()
    except Conflict:
        raise RuntimeFailure(
            f"alias {name}:{alias} was moved by someone else while this update ran",
            hint="re-read it and retry",
            owner=RESEARCHER,
        ) from None
    return moved


def remove(root: Root, name: str, ver: str) -> DatasetRecord:
    """Delete a version's record; refused while an alias points at it. Bytes stay."""
    record = get(root, name, ver)
    pointing = sorted(a.alias for a in aliases(root, name) if a.version == ver)
    if pointing:
        raise UsageError(
            f"{name}@{ver} is still the target of alias{'es' if len(pointing) > 1 else ''} "
            f"{', '.join(pointing)}; move them to another version first"
        )
    root.remove_tree(layout.dataset_version_dir(name, ver))
    root.commit()
    return record


@dataclass
class FileCheck:
    path: str
    status: str  # ok | missing | mismatch | unexpected
    expected: str = ""
    actual: str = ""


def verify(root: Root, name: str, ver: str, *, source: str = "") -> dict[str, Any]:
    """Re-hash the bytes (the record's prefix, or `--from`) and compare them to the record."""
    record = get(root, name, ver)
    location = source or record.prefix
    if not location:
        raise UsageError(
            f"{name}@{ver} records no location on the data PVC; pass --from PATH to verify a copy"
        )
    try:
        found = {s.path: s for s in root.scan(location)}
    except Missing:
        found = {}
    checks: list[FileCheck] = []
    for file in record.files:
        stat = found.pop(file.path, None)
        want = f"{file.bytes} bytes sha256:{file.sha256}"
        if stat is None:
            checks.append(FileCheck(file.path, "missing", want))
        elif stat.sha256 != file.sha256 or stat.bytes != file.bytes:
            checks.append(
                FileCheck(file.path, "mismatch", want, f"{stat.bytes} bytes sha256:{stat.sha256}")
            )
        else:
            checks.append(FileCheck(file.path, "ok", want, want))
    extra = [
        FileCheck(path, "unexpected", "", f"{stat.bytes} bytes")
        for path, stat in sorted(found.items())
    ]
    return {
        "name": name,
        "version": ver,
        "ok": all(c.status == "ok" for c in checks),
        "assurance": record.assurance,
        "location": layout.in_pod(location),
        "digest": record.digest,
        "files": [c.__dict__ for c in checks],
        "unexpected": [c.__dict__ for c in extra],
    }


def status(root: Root, name: str, ver: str) -> IngestStatus:
    record = get(root, name, ver)
    found = read(root, layout.ingest_status(name, ver), IngestStatus)
    if found is not None:
        return found
    return IngestStatus(
        name=name,
        version=ver,
        state="registered",
        destination=layout.in_pod(record.prefix) if record.prefix else "",
        total_files=len(record.files),
    )


def ingest(root: Root, name: str, ver: str, source: str, *, clock: Clock = utc_now) -> IngestStatus:
    """Copy a version's files from `source` into its recorded prefix, checking each one.

    Progress is recorded per file in `ingest-status.json`, so a rerun after an interruption
    copies only what is not yet proven.
    """
    record = get(root, name, ver)
    if not record.prefix:
        raise UsageError(f"{name}@{ver} records no prefix on the data PVC to ingest into")
    if posixpath.normpath(source) == posixpath.normpath(record.prefix):
        raise UsageError(f"--from {layout.in_pod(source)} is where {name}@{ver} already lives")
    previous = status(root, name, ver)
    if previous.state == "ready":
        return previous
    wanted = {f.path: f for f in record.files}
    done = [
        f
        for f in previous.completed_files
        if f.path in wanted
        and f.sha256 == wanted[f.path].sha256
        and f.bytes == wanted[f.path].bytes
    ]
    todo = [path for path in wanted if path not in {f.path for f in done}]
    state = IngestStatus(
        name=name,
        version=ver,
        state="ingesting",
        source=layout.in_pod(source),
        destination=layout.in_pod(record.prefix),
        started_at=previous.started_at or clock(),
        updated_at=clock(),
        total_files=len(record.files),
        completed_files=done,
    )
    path = layout.ingest_status(name, ver)
    root.put(path, state.to_bytes())
    wrong: list[str] = []

    def landed(stat: FileStat) -> None:
        want = wanted[stat.path]
        if stat.sha256 != want.sha256 or stat.bytes != want.bytes:
            wrong.append(f"{stat.path}: got {stat.bytes} bytes sha256:{stat.sha256[:12]}…")
            return
        state.completed_files.append(
            IngestedFile(path=stat.path, bytes=stat.bytes, sha256=stat.sha256)
        )
        state.updated_at = clock()
        root.put(path, state.to_bytes())

    try:
        root.copy(source, record.prefix, todo, landed)
    except Missing as error:
        wrong.append(f"{layout.in_pod(str(error))} does not exist")
    if wrong:
        state.state = "failed"
        state.error = "; ".join(wrong)[:2000]
    else:
        state.state = "ready"
    state.updated_at = clock()
    root.put(path, state.to_bytes())
    root.commit()
    if wrong:
        raise RuntimeFailure(
            f"ingest of {name}@{ver} failed: {wrong[0]}"
            + (f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""),
            hint="the source does not match the record; see "
            f"`tau data dataset status {name}@{ver}`",
            owner=RESEARCHER,
        )
    return state


def reference(record: DatasetRecord) -> dict[str, Any]:
    """The launch-time reference `ref` prints: name@version+digest and how to consume it."""
    durable = layout.in_pod(record.prefix) if record.prefix else None
    return {
        "name": record.name,
        "version": record.version,
        "purpose": record.purpose,
        "digest": record.digest,
        "manifest": layout.in_pod(layout.dataset_record(record.name, record.version)),
        "modes": {
            "durable_mount": {"path": durable},
            "hot_cache": {"path": f"/mnt/datasets/{record.name}/{record.version}"},
            "node_local_stage": {
                "account": record.account,
                "container": record.container,
                "prefix": record.prefix,
                "files": [f.model_dump(mode="json", exclude_none=True) for f in record.files],
            },
        },
        "recommended": "node_local_stage" if record.purpose == "pretrain" else "durable_mount",
        "tags": record.tags,
        "components": [c.model_dump(mode="json", exclude_none=True) for c in record.components],
    }


def env_prefix(name: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", name.upper()) + "_DATASET"


def env_lines(record: DatasetRecord, prefix: str) -> list[str]:
    """`-o env`: shell-sourceable lines naming the pinned version and where it is mounted."""
    if not re.match(r"^[A-Z_][A-Z0-9_]*$", prefix):
        raise UsageError(f"--env-prefix {prefix!r} must be an upper-case environment name")
    ref = reference(record)
    values = {
        "NAME": record.name,
        "VERSION": record.version,
        "DIGEST": record.digest,
        "MANIFEST": ref["manifest"],
        "PATH": ref["modes"]["durable_mount"]["path"] or "",
    }
    return [f"{prefix}_{key}={_shell(value)}" for key, value in values.items()]


def _shell(value: str) -> str:
    import shlex

    return shlex.quote(value)
