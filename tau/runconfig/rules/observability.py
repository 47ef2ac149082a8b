"""Metrics, experiment, resilience and profiler rules, and deprecation warnings (§2.11-§2.14)."""

from __future__ import annotations

import posixpath

from tau import keys
from tau.runconfig import catalog
from tau.runconfig.durations import parse_duration
from tau.runconfig.images import offload_image_problem
from tau.runconfig.models import (
    RETRY_REASONS,
    normalise,
)
from tau.runconfig.rules.base import (
    IDENTIFIER,
    Base,
    Path,
    dotted,
    is_clean_absolute,
    is_under,
    one_of,
)


class ObservabilityRules(Base):
    def metrics(self) -> None:
        metrics = self.config.metrics
        if metrics is None:
            return
        for i, entry in enumerate(metrics.history or []):
            where = ("metrics", "history", i)
            if not entry.strip():
                self.add(where, f"metrics.history[{i}] must not be empty")
            elif entry.startswith("/"):
                if not is_under(posixpath.normpath(entry), "/data"):
                    self.add(where, f"metrics.history[{i}] absolute paths must be under /data")
            elif posixpath.normpath(entry).startswith(".."):
                self.add(
                    where, f"metrics.history[{i}] relative paths must not escape storage.output"
                )
        offload = metrics.offload
        if offload is None:
            return
        if offload.image is not None:
            problem = offload_image_problem(offload.image)
            if problem:
                self.add(("metrics", "offload", "image"), problem)
        if offload.out is not None and not (
            is_clean_absolute(offload.out)
            and (is_under(offload.out, "/data") or is_under(offload.out, "/var/run/tau"))
        ):
            self.add(
                ("metrics", "offload", "out"),
                f'metrics.offload.out "{offload.out}" must be a clean path under /data or '
                "/var/run/tau",
            )
        if offload.enabled:
            self.offload_requirements()

    def offload_requirements(self) -> None:
        config = self.config
        path: Path = ("metrics", "offload", "enabled")
        if not (config.metrics and config.metrics.history):
            self.add(
                ("metrics", "history"),
                "metrics.history is required when metrics.offload.enabled is true",
            )
        experiment = config.experiment
        project = experiment.project if experiment else None
        if not project:
            self.add(
                ("experiment", "project"),
                "experiment.project is required when metrics.offload.enabled is true",
            )
        if not config.experiment_id:
            self.add(
                ("experiment", "name"),
                "experiment.name is required when metrics.offload.enabled is true",
            )
        if experiment is not None:
            for name, kind in (("project", "project"), ("name", "experiment"), ("group", "group")):
                value = getattr(experiment, name)
                if value and not IDENTIFIER.match(value):
                    self.add(
                        ("experiment", name),
                        f'experiment.{name}: {kind} "{value}" is invalid; use lowercase letters, '
                        "digits and internal '-', '_' or '.'",
                    )
        if self.engine == "job" and self.nodes > 1:
            self.add(
                path,
                "metrics.offload.enabled requires a single Job pod; execution.nodes must be "
                "unset or 1",
            )
        if not config.entrypoint_value:
            self.add(
                path,
                "metrics.offload.enabled requires run.entrypoint so Tau can record the workload "
                "exit status",
            )
        if not self.mount_paths().get("/data"):
            self.add(
                path,
                "metrics.offload.enabled requires writable PVC output under /data "
                "(set storage.data_pvc)",
            )

    def resilience(self) -> None:
        resilience = self.config.resilience
        if resilience is None:
            return
        if resilience.max_retries < 0:
            self.add(
                ("resilience", "max_retries"),
                f"resilience.max_retries must be >= 0 (got {resilience.max_retries})",
            )
        for i, reason in enumerate(resilience.retry_on or []):
            if reason not in RETRY_REASONS:
                self.add(
                    ("resilience", "retry_on", i),
                    f'resilience.retry_on[{i}] "{reason}" must be one of: {one_of(RETRY_REASONS)}',
                )
        if resilience.checkpoint_path is not None and not resilience.checkpoint_path.startswith(
            "/"
        ):
            self.add(
                ("resilience", "checkpoint_path"),
                "resilience.checkpoint_path must be an absolute path",
            )
        for name in ("backoff_initial", "backoff_max"):
            self.duration(("resilience", name), getattr(resilience, name))

    def duration(self, path: Path, value: str | None) -> float | None:
        if value is None:
            return None
        try:
            seconds = parse_duration(value)
        except ValueError:
            seconds = -1.0
        if seconds < 0:
            self.add(
                path, f'{dotted(path)} "{value}" is not a duration (for example 30s, 5m, 1h30m)'
            )
            return None
        return seconds

    def profiler(self) -> None:
        profiler = self.config.profiler
        if profiler is None:
            return
        mode = profiler.mode
        if mode not in ("nsys", "ncu"):
            self.add(
                ("profiler", "mode"),
                f'profiler "{mode or ""}": must be nsys|ncu',
            )
        rank = profiler.rank
        if rank is not None and not ((isinstance(rank, int) and rank >= 0) or rank == "all"):
            self.add(("profiler", "rank"), "profiler.rank must be a non-negative integer or all")
        for name in ("warmup", "duration"):
            value = getattr(profiler, name)
            self.duration(("profiler", name), value)
            if value is not None and mode == "ncu":
                self.add(
                    ("profiler", name),
                    f"profiler.{name} currently applies only to profiler.mode=nsys",
                )
        if self.engine != "job":
            self.add(
                ("profiler",),
                "profiler requires engine: job; Ray starts a RayJob's worker processes "
                "itself, so Tau cannot run one of its ranks under nsys/ncu",
            )
            return
        if not any(self.mount_paths().values()):
            self.add(
                ("profiler",),
                "profiler requires durable PVC output; set storage.data_pvc",
            )
        if self.launcher == "torchrun":
            self.add(("profiler",), "profiler cannot be combined with execution.launcher torchrun")
        elif isinstance(rank, int) and rank > 0 and not self._sets_rank():
            self.add(
                ("profiler", "rank"),
                f"profiler.rank {rank} never runs: a Job without torchrun is one process, rank 0 "
                f"(runtime.env sets none of {', '.join(keys.RANK_ENV)}); use 0 or all",
            )
        if not self.config.entrypoint_value:
            self.add(
                ("profiler",),
                "profiler requires run.entrypoint: Tau runs the entrypoint under the profiler "
                "and cannot wrap the image's own command",
            )

    def _sets_rank(self) -> bool:
        env = (self.config.runtime.env if self.config.runtime else None) or {}
        return any(name in env for name in keys.RANK_ENV)

    def deprecations(self) -> None:
        for entry in catalog.entries():
            if not entry.aliases:
                continue
            path = tuple(entry.path.split("."))
            value = self.raw_at(*path)
            if not isinstance(value, str):
                continue
            text = normalise(value, dash=entry.path == "policy.gpu_class")
            if text in entry.aliases:
                self.warnings.append(
                    (path, f'{entry.path} "{value}" is deprecated; use "{entry.aliases[text]}"')
                )
        if self.present("experiment", "title"):
            self.warnings.append(
                (
                    ("experiment", "title"),
                    "experiment.title is deprecated; set experiment.name to a stable ID",
                )
            )
