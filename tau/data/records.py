"""The durable registry formats (`schema_version: 1`): dataset, alias, ingest and model records.

Records are read leniently (fields a newer TauGrid adds survive a round trip) and checked
strictly before they are written: a record is immutable once registered, so a bad one
would stay bad.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1
PURPOSES = ("pretrain", "rl", "eval")
ASSURANCES = ("verified", "manifest-supplied", "trusted")
RL_KINDS = ("prompts", "preferences", "trajectories")
SPLITS = ("train", "validation", "test")
INGEST_STATES = ("registered", "ingesting", "ready", "failed")
TOKENIZED_UINT16 = "tokenized-bin-uint16"
MODEL_KIND = "tau.model"
SHA256 = re.compile(r"^[0-9a-f]{64}$")


class Record(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)

    def to_bytes(self) -> bytes:
        data = self.model_dump(mode="json", exclude_none=True, by_alias=True)
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


class DatasetFile(Record):
    path: str
    bytes: int
    sha256: str
    token_count: int | None = None
    source: str | None = None
    domain: str | None = None
    split: str | None = None


class DatasetSource(Record):
    kind: str | None = None
    repo: str | None = None
    revision: str | None = None
    config: str | None = None


class Component(Record):
    source: str | None = None
    domain: str | None = None
    split: str | None = None
    license: str | None = None
    provenance: str | None = None


class Pretrain(Record):
    tokenizer: str | None = None
    format: str = TOKENIZED_UINT16
    total_tokens: int = 0
    sequence_packing: bool = False


class RL(Record):
    kind: str | None = None
    policy_run: str | None = None
    reward_model: str | None = None
    schema_: str | None = Field(default=None, alias="schema")


class Eval(Record):
    task: str | None = None
    split: str | None = None
    metric: str | None = None


class DatasetRecord(Record):
    schema_version: int = SCHEMA_VERSION
    name: str
    version: str
    purpose: str
    source: DatasetSource | None = None
    account: str = ""
    container: str = ""
    prefix: str = ""
    files: list[DatasetFile] = Field(default_factory=list)
    total_bytes: int = 0
    digest: str = ""
    assurance: str
    created_at: str
    tags: dict[str, str] = Field(default_factory=dict)
    components: list[Component] = Field(default_factory=list)
    pretrain: Pretrain | None = None
    rl: RL | None = None
    eval: Eval | None = None


class DatasetAlias(Record):
    schema_version: int = SCHEMA_VERSION
    name: str
    alias: str
    version: str
    digest: str
    record_path: str
    updated_at: str


class IngestedFile(Record):
    path: str
    bytes: int
    sha256: str


class IngestStatus(Record):
    schema_version: int = SCHEMA_VERSION
    name: str
    version: str
    state: str
    source: str = ""
    destination: str = ""
    started_at: str = ""
    updated_at: str = ""
    total_files: int = 0
    completed_files: list[IngestedFile] = Field(default_factory=list)
    error: str | None = None


class PrimaryMetric(Record):
    name: str | None = None
    value: float | None = None
    direction: Literal["lower", "higher"] | None = None


class ModelRecord(Record):
    schema_version: int = SCHEMA_VERSION
    kind: str = MODEL_KIND
    model: str
    run: str
    namespace: str | None = None
    resource_name: str | None = None
    created_at: str | None = None
    completed_at: str | None = None
    record_path: str | None = None
    registry_path: str | None = None
    artifacts_index: str | None = None
    model_metadata: dict[str, Any] = Field(default_factory=dict)
    tags: dict[str, str] = Field(default_factory=dict)
    metrics_path: str | None = None
    metrics: dict[str, float] = Field(default_factory=dict)
    primary_metric: PrimaryMetric = Field(default_factory=PrimaryMetric)
    artifacts: list[dict[str, Any]] = Field(default_factory=list)
    storage_probe: dict[str, Any] | None = None


class ModelAlias(Record):
    schema_version: int = SCHEMA_VERSION
    model: str
    alias: str
    run: str
    record_path: str | None = None
    updated_at: str


def content_digest(files: list[DatasetFile]) -> str:
    """`sha256:` over the sorted `"<sha256>  <path>"` lines, as `sha256sum` prints them."""
    lines = sorted(f"{f.sha256}  {f.path}" for f in files)
    text = "".join(line + "\n" for line in lines)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def dataset_problems(record: DatasetRecord) -> list[str]:
    """Every independent reason this record may not be registered."""
    problems: list[str] = []
    if record.purpose not in PURPOSES:
        problems.append(f"purpose {record.purpose!r} must be one of: {', '.join(PURPOSES)}")
    if record.assurance not in ASSURANCES:
        problems.append(f"assurance {record.assurance!r} must be one of: {', '.join(ASSURANCES)}")
    blocks = [b for b in PURPOSES if getattr(record, b) is not None]
    if record.purpose in PURPOSES and blocks != [record.purpose]:
        problems.append(
            f"exactly one purpose block ({record.purpose}) must be present, got: "
            f"{', '.join(blocks) or 'none'}"
        )
    if not record.files:
        problems.append("files: a dataset record lists at least one file")
    seen: set[str] = set()
    for i, file in enumerate(record.files):
        where = f"files[{i}] ({file.path!r})"
        clean = posixpath.normpath(file.path) if file.path else ""
        if (
            not file.path
            or file.path.startswith("/")
            or clean != file.path
            or clean == ".."
            or clean.startswith("../")
            or "\\" in file.path
            or "\n" in file.path
        ):
            problems.append(f"{where}: path must be a clean relative path (no '..', no leading /)")
        if file.path in seen:
            problems.append(f"{where}: duplicate path")
        seen.add(file.path)
        if file.bytes <= 0:
            problems.append(f"{where}: bytes must be > 0")
        if not SHA256.match(file.sha256):
            problems.append(f"{where}: sha256 must be 64 lowercase hex characters")
        if file.split is not None and file.split not in SPLITS:
            problems.append(f"{where}: split must be one of: {', '.join(SPLITS)}")
        uint16 = record.pretrain is not None and record.pretrain.format == TOKENIZED_UINT16
        if (
            record.assurance == "verified"
            and uint16
            and file.token_count is not None
            and file.token_count != file.bytes // 2
        ):
            problems.append(
                f"{where}: token_count {file.token_count} != bytes/2 ({file.bytes // 2}) for "
                f"{TOKENIZED_UINT16}"
            )
    for i, component in enumerate(record.components):
        if component.split is not None and component.split not in SPLITS:
            problems.append(f"components[{i}]: split must be one of: {', '.join(SPLITS)}")
    if record.rl is not None and record.rl.kind is not None and record.rl.kind not in RL_KINDS:
        problems.append(f"rl.kind {record.rl.kind!r} must be one of: {', '.join(RL_KINDS)}")
    return problems
