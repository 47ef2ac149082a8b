"""TauWorkloadProfileSnapshot: a ready profile revision frozen into a file.

Client dry-runs read it instead of the cluster; the same acceptance rules apply, so a
snapshot can never authorize anything the live status would not have.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tau import atomicfile, safeyaml
from tau.api.meta import API_VERSION
from tau.errors import ValidationError
from tau.jsontypes import JSONObject
from tau.profiles.select import PLATFORM, ProfileSet, ProfileUnavailable, consistent, ready_at

SNAPSHOT_KIND = "TauWorkloadProfileSnapshot"
SNAPSHOT_OWNER = "researcher: policy.workload_profile_snapshot"


def snapshot_from(profile_set: ProfileSet) -> JSONObject:
    """The snapshot envelope; every profile must be Ready at the snapshot's generation."""
    for profile in profile_set.profiles:
        ok, why = ready_at(profile, profile_set.generation)
        if not ok:
            raise ProfileUnavailable(
                f"cannot export: workload profile {profile.get('name')!r} is not ready: {why}",
                hint="export only a fully ready revision",
                owner=PLATFORM,
            )
    return {
        "apiVersion": API_VERSION,
        "kind": SNAPSHOT_KIND,
        "tauClusterGeneration": profile_set.generation,
        "profileSetHash": profile_set.profile_set_hash,
        "profiles": list(profile_set.profiles),
    }


def dump_snapshot(snapshot: JSONObject) -> str:
    return yaml.safe_dump(snapshot, sort_keys=False)


def write_snapshot(snapshot: JSONObject, path: Path) -> None:
    """Write atomically (a reader sees the old file or the new one), mode 0644."""
    atomicfile.write_text(Path(path), dump_snapshot(snapshot))


def load_snapshot(path: Path) -> ProfileSet:
    """A snapshot file as a `ProfileSet`; any tampering or unready profile is refused.

    Accepts what upstream's exporter writes (YAML or JSON, LF or CRLF line ends) under the
    same rules as upstream's decoder, so one snapshot serves either distribution.
    """
    path = Path(path)
    source = f"snapshot {path}"
    try:
        data = safeyaml.load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, safeyaml.YamlRefused) as error:
        raise ValidationError(f"{source}: cannot read: {error}", owner=SNAPSHOT_OWNER) from None
    if not isinstance(data, dict) or data.get("kind") != SNAPSHOT_KIND:
        raise ValidationError(f"{source}: not a {SNAPSHOT_KIND}", owner=SNAPSHOT_OWNER)
    if data.get("apiVersion") != API_VERSION:
        raise ValidationError(
            f"{source}: apiVersion must be {API_VERSION}, got {data.get('apiVersion')!r}",
            owner=SNAPSHOT_OWNER,
        )
    generation = data.get("tauClusterGeneration")
    if isinstance(generation, bool) or not isinstance(generation, int) or generation < 1:
        raise ValidationError(
            f"{source}: tauClusterGeneration must be an integer ≥ 1", owner=SNAPSHOT_OWNER
        )
    profiles = data.get("profiles")
    if not isinstance(profiles, list) or not all(isinstance(p, dict) for p in profiles):
        raise ValidationError(
            f"{source}: profiles must be a list of profiles", owner=SNAPSHOT_OWNER
        )
    for profile in profiles:
        ok, why = ready_at(profile, generation)
        if not ok:
            raise ValidationError(
                f"{source}: profile {profile.get('name')!r} is not ready: {why}",
                hint="re-export a ready revision with `tau cluster profiles export`",
                owner=SNAPSHOT_OWNER,
            )
    try:
        return consistent(
            generation, str(data.get("profileSetHash") or ""), tuple(profiles), source
        )
    except ProfileUnavailable as error:
        raise ValidationError(
            error.message,
            hint="re-export it with `tau cluster profiles export`",
            owner=SNAPSHOT_OWNER,
        ) from None
