"""Storage, output and image asset rules (reference §2.9, §2.10)."""

from __future__ import annotations

import posixpath

from tau.runconfig.images import is_digest_pinned, pin_problem
from tau.runconfig.models import (
    Storage,
)
from tau.runconfig.rules.base import (
    DNS_LABEL,
    MAX_IMAGE_ASSETS,
    RESERVED_MOUNTS,
    Base,
    Path,
    is_clean_absolute,
    is_under,
    overlaps,
)


class StorageRules(Base):
    def storage(self) -> None:
        storage = self.config.storage
        if storage is None:
            storage = Storage()
        job = self.engine == "job"
        if storage.data_pvc and storage.result_pvc and storage.data_pvc != storage.result_pvc:
            self.add(
                ("storage", "result_pvc"),
                "storage.result_pvc cannot differ from storage.data_pvc",
            )
        if (storage.volumes or storage.mounts) and not job:
            self.add(
                ("storage", "volumes" if storage.volumes else "mounts"),
                "RayJob run configs support storage.data_pvc/output, but not "
                "storage.volumes/mounts",
            )
        elif job:
            self.volume_specs(storage)
        mounts = self.mount_paths()
        self.output(storage, mounts)
        if storage.publish is not None:
            path: Path = ("storage", "publish")
            if storage.publish != "staged":
                self.add(path, "storage.publish must be one of: staged")
            elif not self.managed:
                if not mounts.get("/data"):
                    self.add(
                        path,
                        "storage.publish staged requires writable PVC output under /data "
                        "(set storage.data_pvc)",
                    )
                if job and self.nodes > 1:
                    self.add(
                        path,
                        "storage.publish staged requires a single Job pod (or engine: rayjob, "
                        "whose driver publishes)",
                    )
        checkpoint = storage.checkpoint
        if checkpoint is not None:
            path = ("storage", "checkpoint")
            if checkpoint != checkpoint.strip():
                self.add(
                    path,
                    "storage.checkpoint: must not have surrounding whitespace "
                    f"(got {checkpoint!r})",
                )
            elif (
                checkpoint.startswith("/")
                or "\\" in checkpoint
                or any(seg in ("", ".", "..") for seg in checkpoint.split("/"))
            ):
                self.add(
                    path,
                    "storage.checkpoint: must be a relative path inside the run's checkpoint "
                    f"dir, without '.' or '..' segments (got {checkpoint!r})",
                )
            elif not any(mounts.values()):
                self.add(
                    path,
                    "storage.checkpoint requires a writable durable PVC (set storage.data_pvc)",
                )

    def volume_specs(self, storage: Storage) -> None:
        if storage.data_pvc and storage.volumes:
            self.add(
                ("storage", "volumes"),
                "storage.data_pvc cannot be combined with storage.volumes for job run configs",
            )
        names: set[str] = set()
        for i, spec in enumerate(storage.volumes or []):
            name, sep, rest = spec.partition("=")
            kind, _, claim = rest.partition(":")
            where = ("storage", "volumes", i)
            if not sep or not DNS_LABEL.match(name) or not kind or not claim:
                self.add(where, f'storage.volumes[{i}] "{spec}" must be NAME=pvc:CLAIM')
            elif kind != "pvc":
                self.add(
                    where,
                    f'storage.volumes[{i}] "{spec}": only pvc volumes are supported '
                    "(NAME=pvc:CLAIM)",
                )
            elif name in names:
                self.add(where, f'storage.volumes[{i}]: duplicate volume name "{name}"')
            names.add(name)
        if storage.mounts and not storage.volumes:
            self.add(
                ("storage", "mounts"), "storage.mounts requires at least one storage.volumes entry"
            )
            return
        targets: set[str] = set()
        for i, spec in enumerate(storage.mounts or []):
            parts = spec.split(":")
            where = ("storage", "mounts", i)
            if (
                len(parts) not in (2, 3)
                or not parts[0]
                or not is_clean_absolute(parts[1])
                or (len(parts) == 3 and parts[2] not in ("ro", "rw"))
            ):
                self.add(where, f'storage.mounts[{i}] "{spec}" must be NAME:/absolute/path[:ro|rw]')
                continue
            if parts[0] not in names:
                self.add(where, f'storage.mounts[{i}] references unknown volume "{parts[0]}"')
            if parts[1] in targets:
                self.add(where, f'storage.mounts[{i}]: duplicate mount path "{parts[1]}"')
            targets.add(parts[1])

    def output(self, storage: Storage, mounts: dict[str, bool]) -> None:
        output = storage.output
        if output is None:
            return
        path: Path = ("storage", "output")
        if not output.startswith("/"):
            self.add(path, f'storage.output "{output}": must be an absolute path')
        elif not mounts:
            self.add(
                path,
                f'storage.output "{output}": no PVC supplied by storage.data_pvc or '
                "storage.volumes/mounts; output cannot be retrieved by `tau run get`",
            )
        elif not any(is_under(posixpath.normpath(output), m) for m in mounts):
            self.add(
                path,
                f'storage.output "{output}" is not under any mounted PVC path '
                f"[{', '.join(sorted(mounts))}]",
            )

    def image_assets(self) -> None:
        storage = self.config.storage
        assets = storage.image_assets if storage else None
        if not assets:
            return
        base: Path = ("storage", "image_assets")
        if self.engine != "job":
            self.add(base, "storage.image_assets is only supported for engine: job")
        if len(assets) > MAX_IMAGE_ASSETS:
            self.add(base, f"storage.image_assets supports at most {MAX_IMAGE_ASSETS} entries")
        names: set[str] = set()
        targets: list[str] = []
        for i, asset in enumerate(assets):
            where = (*base, i)
            prefix = f"storage.image_assets[{i}]"
            if not asset.name:
                self.add((*where, "name"), f"{prefix}.name is required")
            elif len(asset.name) > 50 or not DNS_LABEL.match(asset.name):
                self.add(
                    (*where, "name"),
                    f'{prefix}.name "{asset.name}" must be a DNS label of at most 50 characters',
                )
            elif asset.name in names:
                self.add((*where, "name"), f'{prefix}.name "{asset.name}" is not unique')
            names.add(asset.name or "")
            if not asset.image:
                self.add((*where, "image"), f"{prefix}.image is required")
            elif not is_digest_pinned(asset.image):
                self.add((*where, "image"), pin_problem(f"{prefix}.image"))
            source = asset.source_path
            if not source:
                self.add((*where, "source_path"), f"{prefix}.source_path is required")
            elif not is_clean_absolute(source) or source == "/":
                self.add(
                    (*where, "source_path"),
                    f'{prefix}.source_path "{source}" must be a clean absolute path below /',
                )
            elif is_under(source, "/tau-asset"):
                self.add(
                    (*where, "source_path"),
                    f'{prefix}.source_path "{source}" is hidden by Tau\'s staging mount /tau-asset',
                )
            target = asset.mount_path
            if not target:
                self.add((*where, "mount_path"), f"{prefix}.mount_path is required")
            elif not is_clean_absolute(target) or target == "/":
                self.add(
                    (*where, "mount_path"),
                    f'{prefix}.mount_path "{target}" must be a clean absolute path',
                )
            else:
                clash = next((r for r in (*RESERVED_MOUNTS, *targets) if overlaps(target, r)), None)
                if clash is not None:
                    what = "Tau-reserved path" if clash in RESERVED_MOUNTS else "mount path"
                    self.add(
                        (*where, "mount_path"),
                        f'{prefix}.mount_path "{target}" overlaps {what} "{clash}"',
                    )
                targets.append(target)
