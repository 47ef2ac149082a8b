"""Fail-closed acceptance of a TauCluster profile set and selection of one profile.

Every check names what is wrong and who owns the fix: the platform owns TauCluster status,
the researcher owns the profile/namespace/team/lane they asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

from tau import keys
from tau.api.cluster import SINGLETON_NAME
from tau.errors import RuntimeFailure, ValidationError
from tau.jsontypes import JSONObject
from tau.profiles.normalize import (
    SCOPES,
    normal_label,
    normal_name,
    profile_set_hash,
    resolved_profiles,
)

PLATFORM = "platform operator (TauCluster cluster)"
RESEARCHER = "researcher: policy.profile / namespace / team / lane"


class ProfileUnavailable(RuntimeFailure):
    """The published profile set cannot be trusted (stale, unready, inconsistent)."""


@dataclass(frozen=True)
class Selection:
    profile: JSONObject
    generation: int
    profile_set_hash: str
    source: str

    @property
    def name(self) -> str:
        name: str = self.profile["name"]
        return name

    def stamps(self) -> dict[str, str]:
        """Annotations identifying the observed revision on every rendered object."""
        return {
            keys.TAU_CLUSTER_GENERATION: str(self.generation),
            keys.WORKLOAD_PROFILE_SET_HASH: self.profile_set_hash,
            keys.WORKLOAD_PROFILE: self.name,
        }


def ready_at(profile: JSONObject, generation: int) -> tuple[bool, str]:
    for cond in profile.get("conditions") or []:
        if cond.get("type") == keys.COND_READY:
            if cond.get("observedGeneration") != generation:
                return (
                    False,
                    f"its Ready condition is for generation {cond.get('observedGeneration')}",
                )
            if cond.get("status") != "True":
                return False, f"{cond.get('reason', '')}: {cond.get('message', '')}".strip(": ")
            return True, ""
    return False, "it has no Ready condition"


def applicability_problem(
    profile: JSONObject,
    namespace: str | None,
    team: str | None,
    lane: str | None,
    scopes: tuple[str, ...] = SCOPES,
) -> str:
    scope = profile.get("applicability") or {}
    asked = {"namespaces": namespace, "teams": team, "lanes": lane}
    for field, value in asked.items():
        if field not in scopes:
            continue
        allowed = scope.get(field) or []
        if not allowed:
            continue
        fn = normal_name if field == "namespaces" else normal_label
        if not value:
            return f"it is limited to {field} {', '.join(allowed)} and no {field[:-1]} was given"
        if fn(value) not in allowed:
            return f"{field[:-1]} {value!r} is not in {', '.join(allowed)}"
    return ""


@dataclass(frozen=True)
class ProfileSet:
    generation: int
    profile_set_hash: str
    profiles: tuple[JSONObject, ...]
    source: str

    def select(
        self,
        profile: str | None = None,
        *,
        namespace: str | None = None,
        team: str | None = None,
        lane: str | None = None,
        scopes: tuple[str, ...] = SCOPES,
    ) -> Selection:
        """The requested profile, or the unique ready and applicable one.

        `scopes` are the applicability scopes the calling command authorizes by; a command
        whose boundary is the namespace alone (serving) leaves `teams` out rather than
        inventing a team."""
        if profile:
            wanted = normal_name(profile)
            found = [p for p in self.profiles if p.get("name") == wanted]
            if not found:
                names = ", ".join(p["name"] for p in self.profiles) or "none"
                raise ValidationError(
                    f"workload profile {profile!r} is not published by {self.source}"
                    f" (profiles: {names})",
                    owner=RESEARCHER,
                )
            chosen = found[0]
            ok, why = ready_at(chosen, self.generation)
            if not ok:
                raise ProfileUnavailable(
                    f"workload profile {wanted!r} is not ready at generation"
                    f" {self.generation}: {why}",
                    owner=PLATFORM,
                )
            problem = applicability_problem(chosen, namespace, team, lane, scopes)
            if problem:
                raise ValidationError(
                    f"workload profile {wanted!r} does not apply here: {problem}", owner=RESEARCHER
                )
            return Selection(chosen, self.generation, self.profile_set_hash, self.source)
        usable = [
            p
            for p in self.profiles
            if ready_at(p, self.generation)[0]
            and not applicability_problem(p, namespace, team, lane, scopes)
        ]
        if len(usable) == 1:
            return Selection(usable[0], self.generation, self.profile_set_hash, self.source)
        scope = f"namespace={namespace or '-'} team={team or '-'} lane={lane or '-'}"
        if not usable:
            raise ValidationError(
                f"no ready workload profile of {self.source} applies to {scope}",
                hint="set policy.profile, or ask the platform for an applicable profile",
                owner=RESEARCHER,
            )
        names = ", ".join(p["name"] for p in usable)
        raise ValidationError(
            f"workload profile selection is ambiguous for {scope}: {names}",
            hint="set policy.profile to one of them",
            owner=RESEARCHER,
        )


def accept_status(tau_cluster: JSONObject) -> ProfileSet:
    """The TauCluster's published profile set, only if it is current, ready and consistent."""
    meta = tau_cluster.get("metadata") or {}
    if meta.get("name") != SINGLETON_NAME:
        raise ProfileUnavailable(
            f"TauCluster {meta.get('name')!r} is not the singleton {SINGLETON_NAME!r}",
            owner=PLATFORM,
        )
    generation = meta.get("generation")
    status = (tau_cluster.get("status") or {}).get("workloadProfiles")
    if not status:
        raise ProfileUnavailable(
            "TauCluster cluster publishes no workload profile status yet", owner=PLATFORM
        )
    if status.get("observedGeneration") != generation:
        raise ProfileUnavailable(
            f"TauCluster workload profiles are stale: observed generation"
            f" {status.get('observedGeneration')}, current {generation}",
            hint="wait for the controller to reconcile the new revision",
            owner=PLATFORM,
        )
    conditions = (tau_cluster.get("status") or {}).get("conditions") or []
    ready = next(
        (c for c in conditions if c.get("type") == keys.COND_WORKLOAD_PROFILES_READY), None
    )
    if ready is None or ready.get("observedGeneration") != generation:
        raise ProfileUnavailable(
            f"TauCluster condition WorkloadProfilesReady is missing for generation {generation}",
            owner=PLATFORM,
        )
    if ready.get("status") != "True":
        raise ProfileUnavailable(
            f"TauCluster workload profiles are not ready: {ready.get('reason')}:"
            f" {ready.get('message', '')}",
            owner=PLATFORM,
        )
    profiles = tuple(status.get("profiles") or [])
    return consistent(
        generation, status.get("profileSetHash") or "", profiles, "TauCluster cluster"
    )


def consistent(
    generation: int, published: str, profiles: tuple[JSONObject, ...], source: str
) -> ProfileSet:
    """The profile set if `published` is its hash; profiles come back in normal form (as
    upstream's decoder returns them), so selection compares names and scopes exactly."""
    if not published:
        raise ProfileUnavailable(f"{source} publishes no profileSetHash", owner=PLATFORM)
    try:
        computed = profile_set_hash(list(profiles))
        normalized = tuple(resolved_profiles(list(profiles)))
    except ValueError as error:
        raise ProfileUnavailable(
            f"{source} publishes a profile set that cannot be verified: {error}", owner=PLATFORM
        ) from None
    if computed != published:
        raise ProfileUnavailable(
            f"{source} profileSetHash {published[:12]}… does not match its profiles"
            f" ({computed[:12]}…); refusing drifted or edited profile data",
            owner=PLATFORM,
        )
    return ProfileSet(generation, published, normalized, source)
