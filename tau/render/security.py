"""The Kubernetes Restricted Pod Security profile, stamped onto every pod Tau renders.

Namespaces enforcing `pod-security.kubernetes.io/enforce: restricted` (a workspace's by
default) reject any pod that misses one field, so the fields are applied to the pod and to
every init, main and sidecar container Tau generates; a profile that needs root or extra
privileges cannot be honoured and fails rendering instead of failing admission later. `tau
run` targets (`runtime.security.mode`), managed workflows and `tau serve` endpoints share it.
"""

from __future__ import annotations

from tau.jsontypes import JSONObject
from tau.render.errors import PLATFORM, RenderError
from tau.render.intent import Placement

DEFAULT_UID = 65532
DEFAULT_GID = 65532
_SECCOMP = {"type": "RuntimeDefault"}
RUN_SETTING = "runtime.security.mode: restricted"
RUN_HINT = "select a profile without root/privileged settings or remove runtime.security.mode"


def check_restricted(
    placement: Placement, setting: str = RUN_SETTING, hint: str = RUN_HINT
) -> None:
    problems = []
    if placement.run_as_user == 0:
        problems.append("runs as root (runAsUser: 0)")
    if placement.run_as_group == 0:
        problems.append("runs with group root (runAsGroup: 0)")
    if placement.privileged:
        problems.append("requests privileged containers")
    if placement.allow_privilege_escalation:
        problems.append("allows privilege escalation")
    if placement.add_capabilities:
        problems.append(f"adds capabilities {', '.join(placement.add_capabilities)}")
    if problems:
        raise RenderError(
            f"{setting} cannot be honoured: workload profile "
            f"{placement.profile or '(none)'} {'; '.join(problems)}",
            hint=hint,
            owner=PLATFORM,
        )


def pod_security_context(uid: int = DEFAULT_UID, gid: int = DEFAULT_GID) -> JSONObject:
    return {
        "runAsNonRoot": True,
        "runAsUser": uid,
        "runAsGroup": gid,
        "seccompProfile": dict(_SECCOMP),
    }


def container_security_context(uid: int = DEFAULT_UID, gid: int = DEFAULT_GID) -> JSONObject:
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "privileged": False,
        "runAsNonRoot": True,
        "runAsUser": uid,
        "runAsGroup": gid,
        "seccompProfile": dict(_SECCOMP),
    }


def stamp_restricted(pod_spec: JSONObject, uid: int = DEFAULT_UID, gid: int = DEFAULT_GID) -> None:
    """Set the restricted fields on a finished pod spec and every container in it."""
    pod_spec["securityContext"] = pod_security_context(uid, gid)
    for kind in ("initContainers", "containers"):
        for container in pod_spec.get(kind, []):
            container["securityContext"] = container_security_context(uid, gid)


def apply_restricted(
    pod_spec: JSONObject,
    placement: Placement,
    setting: str = RUN_SETTING,
    hint: str = RUN_HINT,
) -> None:
    """The profile's explicit non-zero ids are kept; privileges it asks for are refused."""
    check_restricted(placement, setting, hint)
    stamp_restricted(
        pod_spec, placement.run_as_user or DEFAULT_UID, placement.run_as_group or DEFAULT_GID
    )


def profile_security(pod_spec: JSONObject, placement: Placement) -> None:
    """Outside restricted mode, carry over only what the profile explicitly asks for."""
    context: JSONObject = {}
    if placement.run_as_user is not None:
        context["runAsUser"] = placement.run_as_user
    if placement.run_as_group is not None:
        context["runAsGroup"] = placement.run_as_group
    if context:
        pod_spec["securityContext"] = context
    extra: JSONObject = {}
    if placement.privileged:
        extra["privileged"] = True
    if placement.allow_privilege_escalation is not None:
        extra["allowPrivilegeEscalation"] = placement.allow_privilege_escalation
    if placement.add_capabilities:
        extra["capabilities"] = {"add": list(placement.add_capabilities)}
    if extra:
        for container in pod_spec.get("containers", []):
            container["securityContext"] = dict(extra)
