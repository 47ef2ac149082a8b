"""`tau serve deploy`: flags → profile (fail-closed) → LocalQueue → objects → cluster.

Client dry-run never sends an object: with `--workload-profile-snapshot` it reads nothing
at all, otherwise it reads the live profile and queue so the printed YAML is what deploy
would apply. Server dry-run and deploy apply server-side (`fieldManager: tau-serve`), so a
redeploy replaces exactly what the previous deploy set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau import keys
from tau.errors import RuntimeFailure
from tau.render import redact_secrets
from tau.render.endpoint import ServeIntent
from tau.serving import checkpoint as checkpoints
from tau.serving import plan
from tau.serving.kinds import KIND_RESOURCES, OBJECT_RESOURCES, owned_by_serve, render
from tau.serving.request import DeployRequest, check, checkpoint_request

if TYPE_CHECKING:
    from tau.kube import KubeClient

FIELD_MANAGER = "tau-serve"
OWNER = "researcher: service name"
# Serving is the `serving` lane, and its authorization boundary is the namespace handed over
# by the platform (the profile's ClusterQueues must feed that namespace's LocalQueue), as in
# upstream `tau serve`: a profile's team scope does not apply to serving.
LANE = "serving"
SCOPES = ("namespaces", "lanes")


@dataclass
class Deployed:
    intent: ServeIntent
    objects: list[dict[str, Any]]
    mode: str  # "client", "server" or "applied"
    notes: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    # The API server's Warning headers while applying (PodSecurity's, deprecations), in order.
    warnings: list[str] = field(default_factory=list)


def deploy(request: DeployRequest, *, client: KubeClient | None = None) -> Deployed:
    check(request)
    parsed = plan.parse(request)
    wanted = checkpoint_request(request)
    offline_checkpoint = checkpoints.offline(wanted)
    if request.snapshot:
        return _from_snapshot(request, parsed, offline_checkpoint)
    if client is None:
        from tau.kube import KubeClient

        client = KubeClient(None, request.context)
    from tau.profiles.live import read_profile_set
    from tau.serving.podsecurity import restricted_for
    from tau.serving.queue import resolve_queue

    selection = read_profile_set(client).select(
        request.profile, namespace=request.namespace, lane=LANE, scopes=SCOPES
    )
    queue = resolve_queue(client, request.namespace, selection.profile)
    chosen = checkpoints.live(client, request.namespace, wanted) if wanted.live else None
    restricted = restricted_for(client, request.namespace)
    intent = plan.build(
        request, parsed, selection, queue.name, chosen or offline_checkpoint, restricted
    )
    objects = render(intent)
    notes = [f"LocalQueue {queue.name} ({queue.source}) -> ClusterQueue {queue.cluster_queue}"]
    if request.dry_run == "client":
        return Deployed(intent, redact_secrets(objects), "client", notes)
    preflight(client, intent, objects)
    server_dry_run = request.dry_run == "server"
    warnings: list[str] = []
    for obj in objects:
        client.apply(
            OBJECT_RESOURCES[obj["kind"]],
            obj,
            field_manager=FIELD_MANAGER,
            dry_run=server_dry_run,
            warnings=warnings,
        )
    if server_dry_run:
        return Deployed(intent, objects, "server", notes, warnings=warnings)
    removed = remove_stale(client, intent, objects)
    return Deployed(intent, objects, "applied", notes, removed, warnings)


def _from_snapshot(request: DeployRequest, parsed: plan.Parsed, checkpoint: Any) -> Deployed:
    from tau.profiles.snapshot import load_snapshot

    selection = load_snapshot(Path(request.snapshot)).select(
        request.profile, namespace=request.namespace, lane=LANE, scopes=SCOPES
    )
    queue = selection.profile.get("defaultLocalQueue") or ""
    intent = plan.build(request, parsed, selection, queue, checkpoint, restricted=True)
    notes = [
        f'offline: LocalQueue "{queue}" is workload profile "{selection.name}"\'s'
        " defaultLocalQueue; deploy resolves the namespace's platform-managed default"
        " LocalQueue live"
    ]
    return Deployed(intent, redact_secrets(render(intent)), "client", notes)


def preflight(client: KubeClient, intent: ServeIntent, objects: list[dict[str, Any]]) -> None:
    """Refuse before applying anything: foreign objects of our names, missing PVC or Secret."""
    from tau.kube.errors import AuthorizationError
    from tau.kube.resources import PERSISTENT_VOLUME_CLAIMS, SECRETS

    for obj in objects:
        existing = client.get_or_none(OBJECT_RESOURCES[obj["kind"]], intent.name, intent.namespace)
        if existing is not None and not owned_by_serve(existing, intent.name):
            raise RuntimeFailure(
                f'{obj["kind"]} "{intent.name}" already exists in namespace'
                f' "{intent.namespace}" and was not deployed by tau serve; refusing to take it'
                " over",
                hint="choose another service name",
                owner=OWNER,
            )
    claims = [v.source for v in intent.volumes if v.kind == "pvc" and v.source]
    if intent.checkpoint:
        claims.insert(0, intent.checkpoint.pvc)
    for claim in claims:
        try:
            found = client.get_or_none(PERSISTENT_VOLUME_CLAIMS, claim, intent.namespace)
        except AuthorizationError:
            continue
        if found is None:
            flag = (
                "--checkpoint-pvc"
                if intent.checkpoint and claim == intent.checkpoint.pvc
                else "--volume"
            )
            raise RuntimeFailure(
                f'{flag}: PersistentVolumeClaim "{claim}" does not exist in namespace'
                f' "{intent.namespace}"; nothing was created',
                hint="use the serving PVC from your platform handoff",
                owner="platform operator (serving storage)",
            )
    for name, ref in intent.env_secret:
        try:
            secret = client.get_or_none(SECRETS, ref.secret, intent.namespace)
        except AuthorizationError:
            continue
        if secret is None or ref.key not in (secret.get("data") or {}):
            what = "does not exist" if secret is None else f'has no key "{ref.key}"'
            raise RuntimeFailure(
                f'--env-secret {name}: Secret "{ref.secret}" {what} in namespace'
                f' "{intent.namespace}"; nothing was created',
                owner="platform operator (serving secrets)",
            )


def remove_stale(
    client: KubeClient, intent: ServeIntent, objects: list[dict[str, Any]]
) -> list[str]:
    """A redeploy without --service-port or autoscaling removes the Service / HPA it left."""
    if intent.kind != "deployment":
        return []
    from tau.kube.deletion import delete

    rendered = {obj["kind"] for obj in objects}
    removed = []
    for resource in KIND_RESOURCES["deployment"][1:]:
        if resource.kind in rendered:
            continue
        existing = client.get_or_none(resource, intent.name, intent.namespace)
        if existing is not None and owned_by_serve(existing, intent.name):
            delete(client, resource, intent.name, intent.namespace)
            removed.append(f"{resource.kind.lower()}/{intent.name}")
    return removed


def success_lines(deployed: Deployed, context: str) -> list[str]:
    intent = deployed.intent
    where = f"-n {intent.namespace} --kind {intent.kind}" + (
        f" --context {context}" if context else ""
    )
    head = (
        f"(kind={intent.kind}, profile={intent.placement.profile}, image={intent.image},"
        f" ns={intent.namespace})"
    )
    if deployed.mode == "server":
        lines = [f"{_display(obj)} applied (server dry run)" for obj in deployed.objects]
        return [*lines, f"server dry run accepted service {intent.name} {head}"]
    return [
        *(f"removed {name}" for name in deployed.removed),
        f"deployed service {intent.name} {head}",
        f"track: tau serve status {intent.name} {where}",
    ]


def _display(obj: dict[str, Any]) -> str:
    group = obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else ""
    return f"{obj['kind'].lower()}{'.' + group if group else ''}/{obj['metadata']['name']}"


def checkpoint_note(intent: ServeIntent) -> str | None:
    if intent.checkpoint is None:
        return None
    return (
        f"checkpoint: {intent.checkpoint.path} on PVC {intent.checkpoint.pvc}"
        f" ({keys.ENV_MODEL_PATH})"
    )
