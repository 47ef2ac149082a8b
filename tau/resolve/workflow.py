"""Resolving a managed workflow: the manifest (or a `workflow.file` wrapper) plus the layers.

Managed workflows resolve a smaller set of settings than direct configs: namespace and
LocalQueue (flag → manifest/wrapper policy → TauWorkspace), the ServiceAccount and
workload identity (flag → TauWorkspace), default priority classes, and `runtime.env_kv`
through one Key Vault (`--key-vault` for bare secret names, `--tenant-id`,
`--workload-identity-client-id`). They do not select a TauCluster workload profile: the
manifest's `compute` block is the workload's shape. Every value records its source.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import yaml

from tau import keys
from tau.errors import UsageError, ValidationError
from tau.jsontypes import JSONObject
from tau.render.intent import Provenance as RenderProvenance
from tau.render.intent import Resources
from tau.render.workflow import (
    DEFAULT_IMAGE,
    FINETUNES,
    TRAINER,
    EnvVar,
    ExtraMount,
    KeyVault,
    WorkflowIntent,
)
from tau.resolve.layers import (
    PLACEHOLDER_NAMESPACE,
    PLACEHOLDER_QUEUE,
    PLACEHOLDER_SERVICE_ACCOUNT,
    DescriptorLayer,
    Overrides,
    WorkspaceLayer,
    choose_namespace,
)
from tau.resolve.provenance import Layer, Source
from tau.resolve.provenance import Provenance as ProvenanceTable
from tau.runconfig import manifest as spec
from tau.runconfig.managed import ManagedManifest
from tau.runconfig.models import RunConfig, Workflow

if TYPE_CHECKING:
    from tau.runconfig.loader import LoadedConfig

T = TypeVar("T")

RESEARCHER = "researcher (workflow manifest)"
EXTRA_DEST = re.compile(r"^[A-Za-z0-9._-]+$")
# What a `workflow.file` wrapper may set; every other field is the manifest's.
WRAPPER_FIELDS = frozenset(
    {
        "name",
        "entrypoint",
        "script",
        "run.entrypoint",
        "run.script",
        "run.main_script",
        "run.smoke_pairs",
        "run.workload_kind",
        "workflow.file",
        "workflow.script",
        "workflow.main_script",
        "workflow.workload_kind",
        "workflow.extra_scripts",
        "workflow.upstream_checkpoint",
        "workflow.secret_payload",
        "workflow.smoke_pairs",
        "policy.workspace",
        "policy.namespace",
        "policy.queue",
        "runtime.env_kv",
    }
)


@dataclass
class WorkflowResolution:
    """Same reading surface as `tau.resolve.direct.Resolution` for the dry-run printers."""

    intent: WorkflowIntent
    provenance: ProvenanceTable
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Wrapper:
    """The direct config whose `workflow.file` names the manifest, with its `workflow` block
    (always set: `workflow.file` is what makes the config a wrapper)."""

    loaded: LoadedConfig
    config: RunConfig
    workflow: Workflow


@dataclass(frozen=True)
class Located:
    """Where a manifest lives and what it says (the wrapper's view merged in)."""

    path: Path
    raw: bytes
    data: JSONObject
    wrapper: Wrapper | None
    warnings: list[str]


def _where(path: Path, dotted: str) -> Source:
    return Source(Layer.FILE, f"{path} ({dotted})")


def locate(loaded: LoadedConfig) -> Located:
    """The manifest a loaded config names: itself, or its `workflow.file`."""
    config = loaded.config
    if isinstance(config, ManagedManifest):
        return Located(loaded.path, Path(loaded.path).read_bytes(), config.data, None, [])
    from tau.runconfig import load

    workflow = config.workflow
    assert workflow is not None and workflow.file  # only a workflow.file config resolves here
    wrapper = Wrapper(loaded, config, workflow)
    _check_wrapper(loaded)
    target = (loaded.base_dir / workflow.file).resolve()
    if not target.is_file():
        raise UsageError(
            f"{loaded.path}: workflow.file {workflow.file!r} does not exist ({target})",
            hint="point workflow.file at the SDK-generated manifest (relative to this config)",
        )
    manifest = load(target)
    if not isinstance(manifest.config, ManagedManifest):
        raise ValidationError(
            f"{loaded.path}: workflow.file {target} is not a managed workflow manifest "
            "(schema_version: 1 and no engine)",
            owner=RESEARCHER,
        )
    warnings = [str(w) for w in manifest.warnings]
    return Located(target, target.read_bytes(), manifest.config.data, wrapper, warnings)


def _check_wrapper(wrapper: LoadedConfig) -> None:
    data = wrapper.source.data or {}
    extra = sorted(p for p in _leaves(data) if p not in WRAPPER_FIELDS)
    if extra:
        raise ValidationError(
            f"{wrapper.path}: with workflow.file the managed manifest defines the workload, so "
            f"these fields would have no effect: {', '.join(extra)}",
            hint="move them into the manifest or drop them",
            owner=RESEARCHER,
        )


def _leaves(data: object, prefix: str = "") -> list[str]:
    if not isinstance(data, dict) or prefix in ("runtime.env_kv",):
        return [prefix] if prefix else []
    out: list[str] = []
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and path not in WRAPPER_FIELDS:
            out.extend(_leaves(value, path))
        else:
            out.append(path)
    return out


def resolve_workflow(
    loaded: LoadedConfig,
    *,
    overrides: Overrides = Overrides(),
    descriptor: DescriptorLayer | None = None,
    workspace: WorkspaceLayer | None = None,
    code_sha: str | None = None,
    argv: tuple[str, ...] = (),
    submission_id: str | None = None,
    read: Callable[[Path], bytes] | None = None,
) -> WorkflowResolution:
    return _Resolver(loaded, overrides, descriptor, workspace, code_sha, argv, submission_id,
                     read or _read).run()  # fmt: skip


def _read(path: Path) -> bytes:
    return path.read_bytes()


class _Resolver:
    """One resolution: each setting is recorded with its source in `table` as it is decided."""

    source: Located  # the manifest being resolved: set first by run()

    def __init__(
        self,
        loaded: LoadedConfig,
        overrides: Overrides,
        descriptor: DescriptorLayer | None,
        workspace: WorkspaceLayer | None,
        code_sha: str | None,
        argv: tuple[str, ...],
        submission_id: str | None,
        read: Callable[[Path], bytes],
    ) -> None:
        self.loaded: LoadedConfig = loaded
        self.flags: Overrides = overrides
        self.descriptor: DescriptorLayer | None = descriptor
        self.workspace: WorkspaceLayer | None = workspace
        self.code_sha: str | None = code_sha
        self.argv: tuple[str, ...] = argv
        self.submission_id: str | None = submission_id
        self.read: Callable[[Path], bytes] = read
        self.table: ProvenanceTable = ProvenanceTable()
        self.warnings: list[str] = []
        self.notes: list[str] = []
        self.placeholders: list[str] = []

    @property
    def client(self) -> bool:
        return self.flags.dry_run == "client"

    def record(self, name: str, value: T, source: Source) -> T:
        return self.table.record(name, value, source)

    def unresolved(self, name: str, placeholder: str, how: str) -> str:
        if not self.client:
            raise ValidationError(
                f"{name} is unresolved: no flag, manifest or workspace provides it",
                hint=how,
                owner=RESEARCHER,
            )
        self.placeholders.append(name)
        return self.record(name, placeholder, Source(Layer.UNRESOLVED, how))

    def run(self) -> WorkflowResolution:
        if self.flags.run_name:
            raise UsageError(
                "managed workflow configs take the run name from the config file; remove "
                "positional NAME"
            )
        found = locate(self.loaded)
        self.source = found
        self.warnings.extend(found.warnings)
        manifest = self.typed(found)
        kind = manifest.kind()
        name = self.record("name", manifest.resource_name, _where(found.path, "name"))
        declared = manifest.workflow.workload_kind or manifest.run.workload_kind
        kind_source = (
            _where(found.path, "run.workload_kind")
            if declared
            else Source(Layer.DERIVED, "eval block" if manifest.is_eval else "single pod")
        )
        self.record("workload kind", kind, kind_source)
        namespace = self.namespace(manifest)
        queue = self.queue(manifest)
        wpc, ppc = self.priorities(manifest)
        service_account, identity = self.service_account()
        key_vault = self.key_vault(manifest, service_account)
        if key_vault is not None and not service_account:
            service_account = self.unresolved(
                "service account",
                PLACEHOLDER_SERVICE_ACCOUNT,
                "runtime.env_kv reads Key Vault as a workload identity: pass --service-account "
                "or use a workspace with workload identity",
            )
        image = manifest.runtime.image or DEFAULT_IMAGE
        self.record(
            "image",
            image,
            _where(found.path, "runtime.image")
            if manifest.runtime.image
            else Source(Layer.DEFAULT),
        )
        compute = manifest.compute
        intent = WorkflowIntent(
            name=name,
            manifest_name=manifest.name,
            namespace=namespace,
            kind=kind,
            image=image,
            queue=queue,
            provenance=RenderProvenance(
                config_hash=self.config_hash(found),
                code_sha=self.code_sha,
                tau_command=self.argv,
                submission_id=self.submission_id,
            ),
            main_script=self.main_script(manifest),
            manifest=_redacted(found.raw, found.data),
            extra_scripts=self.extra_scripts(manifest),
            smoke_pairs=manifest.smoke_pairs,
            gpus=compute.gpus,
            workers=compute.workers,
            cpu_workers=manifest.eval.cpu_workers,
            head=Resources(compute.cpus, compute.memory, compute.cpu_limit, compute.memory_limit),
            worker=Resources(
                compute.worker_cpus,
                compute.worker_memory,
                compute.worker_cpu_limit,
                compute.worker_memory_limit,
            ),
            pip=tuple(manifest.runtime.pip or ()),
            env=self.env(manifest),
            data_pvc=manifest.storage.data_pvc or None,
            mounts=tuple(
                ExtraMount(m.name, m.mount_path, m.pvc, m.read_only)
                for m in manifest.storage.mounts
            ),
            node_selector=tuple(sorted(manifest.policy.node_selector.items())),
            gpu_class=manifest.policy.gpu_class,
            workload_priority_class=wpc,
            pod_priority_class=ppc,
            service_account=service_account,
            workload_identity=identity,
            key_vault=key_vault,
            upstream_checkpoint=self.upstream(manifest),
            checkpoint=manifest.artifacts.checkpoint,
            experiment=manifest.research.experiment,
            workspace=self.workspace.name if self.workspace else self.workspace_name(manifest),
            workspace_id=self.workspace.workspace_id if self.workspace else None,
            team=manifest.policy.team,
            lane=manifest.policy.lane,
            restricted=self.restricted(),
        )
        if self.placeholders:
            self.warnings.append(
                "client dry-run could not resolve "
                + ", ".join(self.placeholders)
                + "; rendered self-describing placeholders (connect a workspace with "
                "`tau workspace connection`, or pass the flags)"
            )
        return WorkflowResolution(intent, self.table, self.warnings, self.notes, self.placeholders)

    def restricted(self) -> bool:
        """Restricted pods where the workspace namespace enforces Pod Security `restricted`
        (its pods would be refused otherwise); manifests have no setting of their own."""
        if self.workspace is None or self.workspace.pod_security != "restricted":
            return False
        what = f"TauWorkspace {self.workspace.name} namespace enforces Pod Security restricted"
        self.record("pod security", "restricted", Source(Layer.WORKSPACE, what))
        return True

    # --- the manifest, with the wrapper's fields -------------------------------------------

    def typed(self, found: Located) -> spec.Manifest:
        data = copy.deepcopy(found.data)
        wrapper = found.wrapper
        if wrapper is not None:
            self.merge_wrapper(data, wrapper)
        manifest, problems = spec.parse(data)
        if manifest is not None:
            problems = spec.problems(manifest)
        if problems:
            raise ValidationError(
                f"{found.path}: managed workflow manifest is not renderable "
                f"({len(problems)} problem{'s' if len(problems) > 1 else ''})",
                problems=[message for _, message in problems],
                owner=RESEARCHER,
            )
        assert manifest is not None
        return manifest

    def merge_wrapper(self, data: JSONObject, wrapper: Wrapper) -> None:
        run, flow = data.setdefault("run", {}), data.setdefault("workflow", {})
        config, wrapper_flow = wrapper.config, wrapper.workflow
        script = (
            wrapper_flow.main_script
            or wrapper_flow.script
            or (config.run and config.run.main_script)
            or config.entrypoint_value
        )
        if script:
            flow["main_script"] = str((self.loaded.base_dir / script).resolve())
        run_block = config.run
        forwarded: dict[str, str | int | None] = {
            "workload_kind": wrapper_flow.workload_kind
            or (run_block.workload_kind if run_block else None),
            "smoke_pairs": wrapper_flow.smoke_pairs
            or (run_block.smoke_pairs if run_block else None),
            "upstream_checkpoint": wrapper_flow.upstream_checkpoint or None,  # not a run: field
        }
        for key, value in forwarded.items():
            if value is not None:
                flow[key] = value
        if wrapper_flow.extra_scripts:
            flow["extra_scripts"] = [
                _relative_to(self.loaded.base_dir, entry) for entry in wrapper_flow.extra_scripts
            ]
        if wrapper_flow.secret_payload:
            flow["secret_payload"] = wrapper_flow.secret_payload
        policy = data.setdefault("policy", {})
        wrapper_policy = config.policy
        placed = {
            "workspace": wrapper_policy.workspace if wrapper_policy else None,
            "namespace": wrapper_policy.namespace if wrapper_policy else None,
            "queue": wrapper_policy.queue if wrapper_policy else None,
        }
        for key, value in placed.items():
            if value:
                if policy.get(key) and policy[key] != value:
                    raise ValidationError(
                        f"{self.loaded.path}: policy.{key} {value!r} conflicts with the "
                        f"manifest's {policy[key]!r}",
                        owner=RESEARCHER,
                    )
                policy[key] = value
        kv = (config.runtime.env_kv if config.runtime else None) or {}
        if kv:
            merged = dict(data.setdefault("runtime", {}).get("env_kv") or {})
            for env_name, ref in kv.items():
                if env_name in merged and merged[env_name] != ref:
                    raise ValidationError(
                        f"{self.loaded.path}: runtime.env_kv.{env_name} conflicts with the "
                        "manifest's entry",
                        owner=RESEARCHER,
                    )
                merged[env_name] = ref
            data["runtime"]["env_kv"] = merged
        if not run:
            data.pop("run")

    def config_hash(self, found: Located) -> str:
        manifest = hashlib.sha256(found.raw).hexdigest()
        if found.wrapper is None:
            return manifest
        text = json.dumps({"wrapper": found.wrapper.loaded.config_hash, "manifest": manifest})
        return hashlib.sha256(text.encode()).hexdigest()

    def main_script(self, manifest: spec.Manifest) -> bytes:
        path = (self.source.path.parent / str(manifest.main_script)).resolve()
        try:
            return self.read(path)
        except OSError as error:
            raise UsageError(
                f"{self.source.path}: the trainer {manifest.main_script!r} cannot be read "
                f"({error.strerror or error})",
                hint="run.entrypoint (or workflow.main_script) is relative to the file that "
                "sets it",
            ) from None

    def extra_scripts(self, manifest: spec.Manifest) -> tuple[tuple[str, bytes], ...]:
        if manifest.workflow.secret_payload:
            raise UsageError(
                "workflow.secret_payload is not supported by this build",
                hint="reference existing Secrets with runtime.env valueFrom.secretKeyRef, or Key "
                "Vault with runtime.env_kv",
            )
        out: list[tuple[str, bytes]] = []
        seen = {TRAINER}
        for entry in manifest.workflow.extra_scripts:
            src, _, dest = entry.rpartition(":") if ":" in entry else (entry, "", "")
            dest = dest or Path(src).name
            if not EXTRA_DEST.match(dest) or dest in (".", ".."):
                raise UsageError(
                    f"workflow.extra_scripts {entry!r}: DEST must be one file name "
                    "(letters, digits, '.', '_', '-')"
                )
            if dest in seen:
                raise UsageError(
                    f"workflow.extra_scripts {entry!r}: {dest} is already shipped "
                    f"({TRAINER} is the trainer)"
                )
            seen.add(dest)
            path = (self.source.path.parent / src).resolve()
            if path.is_dir():
                raise UsageError(f"workflow.extra_scripts {entry!r}: {path} is a directory")
            try:
                out.append((dest, self.read(path)))
            except OSError as error:
                raise UsageError(
                    f"workflow.extra_scripts {entry!r}: {error.strerror or error}"
                ) from None
        return tuple(out)

    def env(self, manifest: spec.Manifest) -> tuple[EnvVar, ...]:
        out: list[EnvVar] = []
        for i, entry in enumerate(manifest.runtime.env):
            if entry.value_from is not None:
                ref = entry.value_from.get("secretKeyRef")
                if set(entry.value_from) != {"secretKeyRef"} or not isinstance(ref, dict):
                    raise ValidationError(
                        f"runtime.env[{i}] ({entry.name}): valueFrom supports secretKeyRef only",
                        owner=RESEARCHER,
                    )
                if not ref.get("name") or not ref.get("key"):
                    raise ValidationError(
                        f"runtime.env[{i}] ({entry.name}): secretKeyRef needs name and key",
                        owner=RESEARCHER,
                    )
                out.append(EnvVar(entry.name, secret=(str(ref["name"]), str(ref["key"]))))
            else:
                out.append(EnvVar(entry.name, value=entry.value))
        return tuple(out)

    def upstream(self, manifest: spec.Manifest) -> str | None:
        explicit = manifest.workflow.upstream_checkpoint
        if explicit:
            return explicit
        if manifest.is_eval and manifest.eval.upstream:
            return f"{FINETUNES}/{manifest.eval.upstream}/artifacts/{manifest.artifacts.checkpoint}"
        return None

    # --- placement and identity ------------------------------------------------------------

    def workspace_name(self, manifest: spec.Manifest) -> str | None:
        return (
            self.flags.workspace
            or manifest.policy.workspace
            or (self.descriptor.workspace if self.descriptor else None)
        )

    def namespace(self, manifest: spec.Manifest) -> str:
        explicit: list[tuple[str, Source]] = []
        if self.flags.namespace:
            explicit.append((self.flags.namespace, Source(Layer.FLAG, "-n/--namespace")))
        if manifest.policy.namespace:
            explicit.append(
                (manifest.policy.namespace, _where(self.source.path, "policy.namespace"))
            )
        chosen = choose_namespace(explicit, self.workspace)
        if chosen:
            return self.record("namespace", *chosen)
        if self.workspace and self.workspace.namespace:
            target = self.workspace.namespace
            return self.record("namespace", target, Source(Layer.WORKSPACE, "target namespace"))
        return self.unresolved(
            "namespace", PLACEHOLDER_NAMESPACE, "set policy.namespace, pass -n, or connect a "
            "TauWorkspace"
        )  # fmt: skip

    def queue(self, manifest: spec.Manifest) -> str:
        declared = manifest.policy.queue
        workspace = self.workspace
        target = workspace.queue if workspace else None
        if workspace and declared and target and declared != target:
            raise ValidationError(
                f"queue {declared!r} ({self.source.path} policy.queue) conflicts with "
                f"TauWorkspace {workspace.name!r} LocalQueue {target!r}",
                owner=RESEARCHER,
            )
        if declared:
            return self.record("queue", declared, _where(self.source.path, "policy.queue"))
        if target:
            return self.record("queue", target, Source(Layer.WORKSPACE, "LocalQueue"))
        return self.unresolved(
            "queue", PLACEHOLDER_QUEUE, "set policy.queue or connect a TauWorkspace that "
            "provides a LocalQueue"
        )  # fmt: skip

    def priorities(self, manifest: spec.Manifest) -> tuple[str | None, str | None]:
        if manifest.policy.disable_default_priorities:
            self.record(
                "priority classes",
                "(none)",
                _where(self.source.path, "policy.disable_default_priorities"),
            )
            return None, None
        tier = self.workspace.priority_tier if self.workspace else None
        value = keys.PRIORITY_CLASS if tier == "priority" else keys.DEFAULT_PRIORITY_CLASS
        source = Source(Layer.WORKSPACE, "priority") if tier else Source(Layer.DEFAULT)
        self.record("workload_priority_class", value, source)
        self.record("pod_priority_class", value, source)
        return value, value

    def service_account(self) -> tuple[str | None, bool]:
        if self.flags.service_account:
            self.record(
                "service account",
                self.flags.service_account,
                Source(Layer.FLAG, "--service-account"),
            )
            return self.flags.service_account, bool(
                self.workspace and self.workspace.workload_identity
            )
        if self.workspace and self.workspace.service_account:
            self.record(
                "service account",
                self.workspace.service_account,
                Source(Layer.WORKSPACE, "workloadIdentity"),
            )
            return self.workspace.service_account, self.workspace.workload_identity
        return None, False

    def key_vault(self, manifest: spec.Manifest, service_account: str | None) -> KeyVault | None:
        flags = self.flags
        given = [
            flag
            for flag, value in (
                ("--key-vault", flags.key_vault),
                ("--tenant-id", flags.tenant_id),
                ("--workload-identity-client-id", flags.workload_identity_client_id),
            )
            if value
        ]
        entries = manifest.runtime.env_kv
        if not entries:
            if given:
                raise UsageError(
                    f"{', '.join(given)} feed runtime.env_kv, which {self.source.path} does not "
                    "declare",
                    hint="add runtime.env_kv entries or drop the flags",
                )
            return None
        resolved: list[tuple[str, str]] = []
        vaults: set[str] = set()
        for env_name, ref in sorted(entries.items()):
            vault, sep, secret = ref.strip().partition("/")
            if not sep:
                secret, vault = vault, flags.key_vault
                if not vault:
                    raise UsageError(
                        f"runtime.env_kv.{env_name}: bare secret name {secret!r} needs "
                        "--key-vault (or write it as vault/secret-name)"
                    )
            vaults.add(vault)
            resolved.append((env_name, secret))
        if len(vaults) > 1:
            raise UsageError(
                "runtime.env_kv entries must resolve to one Key Vault (got "
                f"{', '.join(sorted(vaults))}); one SecretProviderClass serves one vault"
            )
        missing = [
            flag
            for flag, value in (
                ("--tenant-id", flags.tenant_id),
                ("--workload-identity-client-id", flags.workload_identity_client_id),
            )
            if not value
        ]
        if missing:
            raise UsageError(
                f"runtime.env_kv needs {' and '.join(missing)} (the Entra tenant and the managed "
                "identity the pods authenticate to Key Vault as)"
            )
        (vault,) = vaults
        source = Source(Layer.FLAG, "--key-vault") if flags.key_vault else _where(
            self.source.path, "runtime.env_kv"
        )  # fmt: skip
        self.record("key vault", vault, source)
        return KeyVault(vault, flags.tenant_id, flags.workload_identity_client_id, tuple(resolved))


def _relative_to(base: Path, entry: str) -> str:
    src, sep, dest = entry.rpartition(":") if ":" in entry else (entry, "", "")
    path = str((base / src).resolve())
    return f"{path}:{dest}" if sep else path


def _redacted(raw: bytes, data: JSONObject) -> bytes:
    """The manifest copy for /manifest: secretKeyRef names and keys hidden, else unchanged."""
    from tau.render.meta import REDACTED

    runtime = data.get("runtime") if isinstance(data, dict) else None
    entries = runtime.get("env") if isinstance(runtime, dict) else None
    if not isinstance(entries, list):
        return raw
    doc = copy.deepcopy(data)
    changed = False
    for entry in doc["runtime"]["env"]:
        ref = (
            ((entry or {}).get("valueFrom") or {}).get("secretKeyRef")
            if isinstance(entry, dict)
            else None
        )
        if isinstance(ref, dict):
            ref.update({k: REDACTED for k in ("name", "key") if k in ref})
            changed = True
    if not changed:
        return raw
    return yaml.safe_dump(doc, sort_keys=False).encode()
