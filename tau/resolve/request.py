"""From a run config path and flags to a resolved, renderable run (client dry-run path).

Gathers the layers that exist offline — the validated config, the checked-in connection
descriptor, a workload-profile snapshot, the Git commit — and hands them to
`resolve_run`. Live TauWorkspace/TauCluster reads join here with the submission path.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from tau.errors import UsageError
from tau.resolve.direct import Resolution, resolve_run
from tau.resolve.layers import ConfigLayer, DescriptorLayer, Overrides
from tau.resolve.profile import snapshot_profile
from tau.runconfig.managed import ManagedManifest

if TYPE_CHECKING:
    from tau.resolve.workflow import WorkflowResolution
    from tau.runconfig.loader import LoadedConfig

R = TypeVar("R", "Resolution", "WorkflowResolution")


def resolve_request(
    loaded: LoadedConfig,
    overrides: Overrides,
    *,
    project: str = "",
    argv: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
) -> Resolution | WorkflowResolution:
    if isinstance(loaded.config, ManagedManifest) or loaded.config.is_managed_dispatch:
        from tau.resolve.workflow import resolve_workflow

        workflow = resolve_workflow(
            loaded,
            overrides=overrides,
            descriptor=_descriptor(loaded.base_dir, project),
            code_sha=git_head(loaded.base_dir),
            argv=argv,
        )
        return _warn_unbound(workflow)
    refuse_key_vault_flags(overrides)
    resolution = resolve_run(
        ConfigLayer(loaded),
        overrides=overrides,
        descriptor=_descriptor(loaded.base_dir, project),
        profile=snapshot_profile(loaded),
        env=os.environ if env is None else env,
        code_sha=git_head(loaded.base_dir),
        argv=argv,
    )
    return _warn_unbound(resolution)


def _warn_unbound(resolution: R) -> R:
    """Client dry-run reads no registry: `dataset:` references stay as written, said once."""
    from tau.data.binding import unbound_warning

    warning = unbound_warning(resolution.intent)
    if warning:
        resolution.warnings.append(warning)
    return resolution


def refuse_key_vault_flags(overrides: Overrides) -> None:
    """The Key Vault flags feed runtime.env_kv, which only managed workflows render."""
    given = [
        flag
        for flag, value in (
            ("--key-vault", overrides.key_vault),
            ("--tenant-id", overrides.tenant_id),
            ("--workload-identity-client-id", overrides.workload_identity_client_id),
        )
        if value
    ]
    if given:
        raise UsageError(
            f"{', '.join(given)}: runtime.env_kv is only supported for workflow.file managed "
            "configs; direct Job/RayJob configs must remove runtime.env_kv or use workflow.file"
        )


def _descriptor(start: Path, project: str) -> DescriptorLayer | None:
    """The checked-in (or locally assigned) connection; none is fine for client dry-run."""
    from tau.connection import DescriptorNotFound, discover_connection

    try:
        source = discover_connection(start, project=project)
    except DescriptorNotFound:
        return None
    descriptor = source.descriptor
    return DescriptorLayer(source.shown, descriptor.workspace, descriptor.cluster.contextName)


def git_head(directory: Path) -> str | None:
    """The commit the code comes from (provenance); None outside Git."""
    try:
        result = subprocess.run(
            ["git", "-C", str(directory), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    head = result.stdout.strip()
    return head if result.returncode == 0 and head else None
