"""Volumes and mounts of rendered pods, and the init containers that fill them.

Durable data lives only on a platform-owned PVC at /data; node-local scratch is an
emptyDir at /mnt; content that must not travel through env or ConfigMaps (image assets,
a source tree) is copied by pinned init containers into emptyDirs.
"""

from __future__ import annotations

import base64
import hashlib
import json

from tau import keys
from tau.jsontypes import JSONObject
from tau.render.env import DATA_DIR, HOT_DIR
from tau.render.intent import ImageAsset, RunIntent, SourceImage
from tau.render.payload import PAYLOAD_RESOURCES, PROJECT_DECODER

HOT_VOLUME = "tau-hot"
SHM_VOLUME = "dshm"
SHM_PATH = "/dev/shm"
SHM_SIZE = "16Gi"
SCRIPT_VOLUME = "script"
SCRIPT_PATH = "/script"
ASSET_STAGE_PATH = "/tau-asset"
SOURCE_VOLUME = "tau-source"
SOURCE_STAGE_PATH = "/tau-source"
SOURCE_MOUNT_PATH = "/tau/source"
PROJECT_VOLUME = "tau-project"
PROJECT_STAGE_PATH = "/tau-project"
PROJECT_MOUNT_PATH = "/tau/project"
METRICS_RUNTIME_VOLUME = "tau-runtime"
METRICS_RUNTIME_PATH = "/var/run/tau"

# Copies "$1"/. into the staging dir, makes the tree writable for any UID and the
# entrypoint executable, so a non-root main container can run it.
SOURCE_COPY_SCRIPT = (
    f'set -eu\ncp -a "$1"/. {SOURCE_STAGE_PATH}/\nchmod -R a+rwX {SOURCE_STAGE_PATH}\n'
    f'chmod a+x "{SOURCE_STAGE_PATH}/$2"\n'
)


def empty_dir(name: str, *, memory_limit: str | None = None) -> JSONObject:
    spec: JSONObject = {}
    if memory_limit:
        spec = {"medium": "Memory", "sizeLimit": memory_limit}
    return {"name": name, "emptyDir": spec}


def pvc_volumes(intent: RunIntent) -> list[JSONObject]:
    return [
        {"name": volume.name, "persistentVolumeClaim": {"claimName": volume.claim}}
        for volume in intent.volumes
    ]


def user_mounts(intent: RunIntent) -> list[JSONObject]:
    mounts = []
    for mount in intent.mounts:
        entry: JSONObject = {"name": mount.volume, "mountPath": mount.path}
        if mount.read_only:
            entry["readOnly"] = True
        mounts.append(entry)
    return mounts


def hot_volume_and_mount(intent: RunIntent) -> tuple[list[JSONObject], list[JSONObject]]:
    """Node-local scratch at /mnt, present whenever durable /data is mounted."""
    if not intent.data_mounted:
        return [], []
    return [empty_dir(HOT_VOLUME)], [{"name": HOT_VOLUME, "mountPath": HOT_DIR}]


def shm_volume_and_mount() -> tuple[list[JSONObject], list[JSONObject]]:
    return (
        [empty_dir(SHM_VOLUME, memory_limit=SHM_SIZE)],
        [{"name": SHM_VOLUME, "mountPath": SHM_PATH}],
    )


def asset_volume_name(asset: ImageAsset) -> str:
    return f"tau-asset-{asset.name}"


def image_assets(
    intent: RunIntent,
) -> tuple[list[JSONObject], list[JSONObject], list[JSONObject]]:
    """Per asset: an init container copying the pinned image's tree, its emptyDir, and a
    read-only mount in the main container. Returns (init containers, volumes, mounts)."""
    inits, volumes, mounts = [], [], []
    for asset in intent.image_assets:
        volume = asset_volume_name(asset)
        inits.append(
            {
                "name": volume,
                "image": asset.image,
                "command": ["/bin/cp"],
                "args": ["-a", "--", f"{asset.source_path.rstrip('/')}/.", f"{ASSET_STAGE_PATH}/"],
                "volumeMounts": [{"name": volume, "mountPath": ASSET_STAGE_PATH}],
            }
        )
        volumes.append(empty_dir(volume))
        mounts.append({"name": volume, "mountPath": asset.mount_path, "readOnly": True})
    return inits, volumes, mounts


def source_staging(
    source: SourceImage, entrypoint: str
) -> tuple[JSONObject, JSONObject, JSONObject]:
    """The `tau-source` init container, its emptyDir and the main container's mount."""
    init = {
        "name": SOURCE_VOLUME,
        "image": source.image,
        "command": ["/bin/sh"],
        "args": ["-c", SOURCE_COPY_SCRIPT, SOURCE_VOLUME, source.path, entrypoint],
        "volumeMounts": [{"name": SOURCE_VOLUME, "mountPath": SOURCE_STAGE_PATH}],
    }
    return init, empty_dir(SOURCE_VOLUME), {"name": SOURCE_VOLUME, "mountPath": SOURCE_MOUNT_PATH}


def project_staging(intent: RunIntent) -> tuple[JSONObject, JSONObject, JSONObject]:
    """The `tau-project` init container unpacking `run.working_dir`, its emptyDir, the mount."""
    assert intent.project is not None
    archive = intent.project.archive
    init = {
        "name": PROJECT_VOLUME,
        "image": intent.image,
        "command": ["python3", "-c", PROJECT_DECODER],
        "env": [
            {"name": keys.ENV_PAYLOAD_B64, "value": base64.b64encode(archive).decode()},
            {"name": keys.ENV_PAYLOAD_DIGEST, "value": hashlib.sha256(archive).hexdigest()},
            {"name": keys.ENV_PAYLOAD_TARGET_DIR, "value": PROJECT_STAGE_PATH},
        ],
        "resources": {kind: dict(values) for kind, values in PAYLOAD_RESOURCES.items()},
        "volumeMounts": [{"name": PROJECT_VOLUME, "mountPath": PROJECT_STAGE_PATH}],
    }
    mount = {"name": PROJECT_VOLUME, "mountPath": PROJECT_MOUNT_PATH}
    return init, empty_dir(PROJECT_VOLUME), mount


def storage_mounts_annotation(intent: RunIntent) -> str | None:
    """JSON list of durable mounts (sorted by path) so evidence tools can find outputs."""
    claims = {volume.name: volume.claim for volume in intent.volumes}
    entries = []
    for mount in sorted(intent.mounts, key=lambda m: m.path):
        if mount.volume not in claims:
            continue
        entry: JSONObject = {"source": mount.volume, "path": mount.path}
        if mount.read_only:
            entry["read_only"] = True
        entry["source_ref"] = f"pvc/{claims[mount.volume]}"
        entries.append(entry)
    return json.dumps(entries, separators=(",", ":")) if entries else None


def output_claim(intent: RunIntent) -> str | None:
    """The PVC holding `storage.output` (the deepest mount containing it), if any."""
    if not intent.output:
        return None
    claims = {volume.name: volume.claim for volume in intent.volumes}
    holding = [
        mount
        for mount in intent.mounts
        if not mount.read_only
        and (intent.output == mount.path or intent.output.startswith(mount.path.rstrip("/") + "/"))
    ]
    if not holding:
        return None
    return claims.get(max(holding, key=lambda mount: len(mount.path)).volume)


def data_claim(intent: RunIntent) -> str | None:
    """The PVC behind /data, recorded as the result PVC."""
    claims = {volume.name: volume.claim for volume in intent.volumes}
    for mount in intent.mounts:
        if mount.path == DATA_DIR:
            return claims.get(mount.volume)
    return None
