"""Turn a connection contract into a verified, pinned connection on this machine.

Steps: version gate → credentials (the user's kubeconfig context, or AKS cluster-user
credentials) isolated into a candidate file → human review of anything new or changed →
live verification → the isolated kubeconfig, the pin and the readiness evidence are written.
Nothing is written before verification passes, so a failed attempt leaves the previous
working connection intact.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tau.api.connection import WorkspaceConnection, check_tau_version
from tau.connection import kubeconfig as kubeconfigs
from tau.connection import localstate
from tau.connection.aks import cluster_user_kubeconfig
from tau.connection.descriptor import ConnectionSource
from tau.connection.discovery import discover_connection
from tau.connection.localstate import ConnectionState
from tau.connection.verify import LiveWorkspace, verify_live
from tau.errors import RuntimeFailure, UsageError
from tau.jsontypes import JSONObject
from tau.keys import ENV_REVALIDATION_TIMEOUT
from tau.kube import KubeClient, UnavailableError
from tau.version import __version__

DEFAULT_REVALIDATION_TIMEOUT = 30.0


@dataclass
class Interaction:
    """How to talk to the human: `interactive` is false for pipes, CI and agents."""

    interactive: bool
    ask: Callable[[str], str]
    say: Callable[[str], None]

    def confirm(self, question: str) -> None:
        answer = self.ask(f"{question} [y/N] ").strip().lower()
        if answer in ("y", "yes"):
            return
        if answer in ("", "n", "no"):
            raise RuntimeFailure("workspace connection change was not confirmed")
        raise UsageError("workspace connection change was not confirmed: answer yes or no")


@dataclass(frozen=True)
class Connection:
    """A usable connection: where to send workloads and with which kubeconfig."""

    source: ConnectionSource
    state: ConnectionState
    kubeconfig: Path
    cached: bool
    live: LiveWorkspace | None = None

    @property
    def context(self) -> str:
        return self.state.context_name

    @property
    def namespace(self) -> str:
        return self.state.namespace

    @property
    def queue(self) -> str:
        return self.state.queue


def credentials(source: ConnectionSource) -> tuple[JSONObject, str]:
    """The isolated kubeconfig content for the descriptor's context, and its target fingerprint."""
    descriptor = source.descriptor
    if descriptor.access.method == "aks":
        merged = cluster_user_kubeconfig(descriptor)
    else:
        merged = kubeconfigs.load_merged()
    isolated = kubeconfigs.isolate(merged, descriptor.context_name)
    return isolated, kubeconfigs.cluster_fingerprint(merged, descriptor.context_name)


def review_block(source: ConnectionSource) -> str:
    descriptor = source.descriptor
    authorization = descriptor.authorization.mode
    if descriptor.authorization.requiredRole:
        authorization += f" (role {descriptor.authorization.requiredRole})"
    network = "not indicated"
    if descriptor.private_cluster and descriptor.network is not None:
        network = f"required: {descriptor.network.instructions}"
    lines = [
        "Review this workspace connection before Tau uses it:",
        f"  Descriptor:       {source.shown}",
        f"  Workspace:        {descriptor.workspace}",
        f"  Access method:    {descriptor.access.method}",
        f"  Context:          {descriptor.context_name}",
        f"  System namespace: {descriptor.system_namespace}",
        f"  Authorization:    {authorization}",
        f"  Private network:  {network}",
    ]
    if descriptor.access.aks is not None:
        lines.append(f"  AKS resource:     {descriptor.access.aks.resourceID}")
        lines.append(f"  Entra tenant:     {descriptor.access.aks.tenantID}")
    return "\n".join(lines)


def connect(
    source: ConnectionSource,
    interaction: Interaction,
    *,
    use_cache: bool = False,
    base: Path | None = None,
) -> Connection:
    """Verify and pin `source`; with `use_cache`, fresh readiness evidence skips the cluster."""
    descriptor = source.descriptor
    check_tau_version(descriptor, __version__)
    state_file = localstate.state_path(source, base)
    state = localstate.load_state(state_file)
    final_kubeconfig = localstate.kubeconfig_path(source, base)
    # Local kubeconfig contexts are read up front (drift includes their target); AKS
    # credentials are fetched only when needed and only after a human approved the contract.
    isolated: dict[str, Any] | None = None
    fingerprint = ""
    if descriptor.access.method == "kubeconfig":
        isolated, fingerprint = credentials(source)

    changes = localstate.pin_changes(state, source, fingerprint) if state else []
    if state is not None and not changes and use_cache and localstate.is_fresh(state):
        existing = Path(state.kubeconfig_path)
        unchanged = isolated is None or kubeconfigs.same_content(existing, isolated)
        if existing.is_file() and unchanged:
            return Connection(source, state, existing, cached=True)

    approved_now = False
    if state is None:
        _review(
            interaction,
            "this repository has not been connected with Tau on this machine",
            [],
            source,
            "Approve and connect?",
        )
        approved_now = True
    elif changes:
        _review(
            interaction,
            "configured workspace connection changed",
            changes,
            source,
            f'Pin workspace "{descriptor.workspace}" on Kubernetes context '
            f'"{descriptor.context_name}" for this repository?',
        )
        approved_now = True

    candidate = final_kubeconfig.parent / f".candidate-{secrets.token_hex(6)}.yaml"

    def acquire_and_verify() -> tuple[JSONObject, str, LiveWorkspace]:
        acquired, target = (isolated, fingerprint) if isolated else credentials(source)
        return acquired, target, _verify_with_candidate(acquired, candidate, descriptor)

    if interaction.interactive:
        isolated, fingerprint, live = acquire_and_verify()
    else:
        isolated, fingerprint, live = _bounded(acquire_and_verify, candidate)

    if state is not None and not approved_now:
        contract = localstate.contract_changes(
            state, live.uid, live.namespace, live.queue, live.service_account
        )
        if contract:
            if not interaction.interactive:
                raise localstate.review_error(
                    "cached workspace connection contract changed", contract
                )
            interaction.say("The live workspace contract changed:\n  " + "\n  ".join(contract))
            interaction.confirm(
                f'Pin the updated namespace "{live.namespace}" and LocalQueue "{live.queue}" '
                f'for workspace "{descriptor.workspace}"?'
            )

    kubeconfigs.write_isolated(final_kubeconfig, isolated)
    stamp = localstate.rfc3339(localstate.now())
    configured_at = stamp if approved_now or state is None else state.configured_at
    new_state = ConnectionState(
        workspace=descriptor.workspace,
        access_method=descriptor.access.method,
        access_identity=descriptor.access_identity,
        access_fingerprint=fingerprint,
        authorization_mode=descriptor.authorization.mode,
        context_name=descriptor.context_name,
        system_namespace=descriptor.system_namespace,
        kubeconfig_path=str(final_kubeconfig),
        namespace=live.namespace,
        queue=live.queue,
        cluster_queue=live.cluster_queue or None,
        service_account=live.service_account,
        required_role=descriptor.authorization.requiredRole or "",
        repository_root=str(source.repository.real_root),
        descriptor_path=str(source.path.resolve()),
        descriptor_digest=descriptor.digest,
        workspace_uid=live.uid,
        configured_at=configured_at,
        verified_at=stamp,
    )
    localstate.save_state(state_file, new_state)
    if state is not None and state.kubeconfig_path != str(final_kubeconfig):
        _remove_orphan(Path(state.kubeconfig_path), state_file.parent, final_kubeconfig.parent)
    localstate.write_active_workspace(new_state, base)
    return Connection(source, new_state, final_kubeconfig, cached=False, live=live)


def _review(
    interaction: Interaction,
    reason: str,
    changes: list[str],
    source: ConnectionSource,
    question: str,
) -> None:
    if not interaction.interactive:
        raise localstate.review_error(reason, changes)
    interaction.say(review_block(source))
    if changes:
        interaction.say("Changes since the last approval:\n  " + "\n  ".join(changes))
    interaction.confirm(question)


def _verify_with_candidate(
    isolated: JSONObject, candidate: Path, descriptor: WorkspaceConnection
) -> LiveWorkspace:
    """Verify through a throwaway private copy, removed whatever happens."""
    kubeconfigs.write_isolated(candidate, isolated)
    kube = KubeClient(candidate, descriptor.context_name)
    try:
        return verify_live(kube, descriptor)
    except UnavailableError as error:
        if descriptor.private_cluster and descriptor.network is not None:
            error.hint = f"this is a private cluster: {descriptor.network.instructions}"
        raise
    finally:
        kube.close()
        candidate.unlink(missing_ok=True)


def revalidation_timeout() -> float:
    raw = os.environ.get(ENV_REVALIDATION_TIMEOUT, "").strip()
    try:
        return float(raw.removesuffix("s")) if raw else DEFAULT_REVALIDATION_TIMEOUT
    except ValueError:
        raise UsageError(
            f"{ENV_REVALIDATION_TIMEOUT}={raw!r} must be a number of seconds"
        ) from None


def _bounded(
    work: Callable[[], tuple[JSONObject, str, LiveWorkspace]], candidate: Path
) -> tuple[JSONObject, str, LiveWorkspace]:
    """Unattended revalidation may not wait forever on a sign-in nobody can complete."""
    timeout = revalidation_timeout()
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:
            outcome["error"] = error

    worker = threading.Thread(target=run, daemon=True, name="tau-revalidation")
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        candidate.unlink(missing_ok=True)
        raise localstate.ReviewRequired(
            "workspace connection requires interactive review: revalidation timed out after "
            f"{timeout:g}s",
            hint="run a tau command in a terminal once to complete sign-in",
            owner="researcher",
        )
    if "error" in outcome:
        raise outcome["error"]
    value: tuple[dict[str, Any], str, LiveWorkspace] = outcome["value"]
    return value


def _remove_orphan(old: Path, states: Path, kubeconfig_dir: Path) -> None:
    """Delete a superseded isolated kubeconfig unless another pin still uses it."""
    if old.parent != kubeconfig_dir or not old.exists():
        return
    for other in states.glob("*.json"):
        if str(old) in other.read_text(encoding="utf-8"):
            return
    old.unlink(missing_ok=True)


def ensure_connection(
    start: str | os.PathLike[str] = ".",
    *,
    project: str = "",
    interaction: Interaction,
    base: Path | None = None,
) -> Connection:
    """What `tau run` and lifecycle verbs call: discover, then reuse fresh evidence or verify."""
    source = discover_connection(start, project=project, config_dir=base)
    return connect(source, interaction, use_cache=True, base=base)
