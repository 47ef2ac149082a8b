"""What a run mounts and where its results go: the /data PVC, extra volumes, the output
directory and image assets.

A durable output directory only exists on a mounted PVC, so the default output path is
derived (from the TauWorkspace output root, else the built-in root) only when /data is
mounted, and an explicit one must stay inside the workspace's root.
"""

from __future__ import annotations

from tau.errors import ValidationError
from tau.render.intent import ImageAsset, Mount, PvcVolume
from tau.resolve.layers import RESEARCHER, Stack
from tau.resolve.provenance import field_path
from tau.runconfig import models
from tau.runconfig.models import Storage

DEFAULT_OUTPUT_ROOT = "/data/checkpoints/workflows"


def resolve_storage(stack: Stack) -> tuple[tuple[PvcVolume, ...], tuple[Mount, ...]]:
    storage = stack.model.storage or Storage()
    claim = stack.model.data_pvc
    if claim:
        field = "data_pvc" if storage.data_pvc else "result_pvc"
        stack.record("data PVC (/data)", claim, stack.file(Storage, field))
        return (PvcVolume("data", claim),), (Mount("data", "/data"),)
    volumes = tuple(_parse_volume(spec) for spec in storage.volumes or ())
    mounts = tuple(_parse_mount(spec) for spec in storage.mounts or ())
    if len(volumes) == 1 and not mounts:
        mounts = (Mount(volumes[0].name, "/data"),)
    for mount in mounts:
        claim_of = {v.name: v.claim for v in volumes}.get(mount.volume)
        stack.record(f"mount {mount.path}", f"pvc/{claim_of}", stack.file(Storage, "mounts"))
    return volumes, mounts


def resolve_output(stack: Stack, name: str, data_mounted: bool) -> str | None:
    output = stack.model.storage.output if stack.model.storage else None
    dotted = field_path(Storage, "output")
    workspace = stack.workspace
    if output:
        root = workspace.output_root if workspace else None
        if workspace and root and not (output == root or output.startswith(root.rstrip("/") + "/")):
            raise ValidationError(
                f"{dotted} {output!r} is outside TauWorkspace {workspace.name!r} output root "
                f"{root!r}",
                owner=RESEARCHER,
            )
        return stack.record(dotted, output, stack.file(Storage, "output"))
    if not data_mounted:
        return None
    if workspace and workspace.output_root:
        value = f"{workspace.output_root.rstrip('/')}/{name}"
        return stack.record(dotted, value, stack.ws("output root"))
    value = f"{DEFAULT_OUTPUT_ROOT}/{name}"
    return stack.record(dotted, value, stack.default("PVC-backed run"))


def resolve_assets(stack: Stack) -> tuple[ImageAsset, ...]:
    assets = stack.model.storage.image_assets if stack.model.storage else None
    return tuple(_asset(asset) for asset in assets or ())


def _asset(asset: models.ImageAsset) -> ImageAsset:
    # The run config rules refuse an asset missing any of them before resolution.
    assert asset.name and asset.image and asset.source_path and asset.mount_path
    return ImageAsset(asset.name, asset.image, asset.source_path, asset.mount_path)


def _parse_volume(spec: str) -> PvcVolume:
    name, _, rest = spec.partition("=")
    kind, _, claim = rest.partition(":")
    if not name or kind != "pvc" or not claim:
        raise ValidationError(
            f"storage.volumes entry {spec!r} must be NAME=pvc:CLAIM (pvc volumes only)",
            owner=RESEARCHER,
        )
    return PvcVolume(name, claim)


def _parse_mount(spec: str) -> Mount:
    parts = spec.split(":")
    if len(parts) not in (2, 3) or not parts[0] or not parts[1].startswith("/"):
        raise ValidationError(
            f"storage.mounts entry {spec!r} must be NAME:/abs/path[:ro]", owner=RESEARCHER
        )
    read_only = len(parts) == 3 and parts[2] == "ro"
    if len(parts) == 3 and not read_only:
        raise ValidationError(
            f"storage.mounts entry {spec!r}: the only mount option is ro", owner=RESEARCHER
        )
    return Mount(parts[0], parts[1], read_only)
