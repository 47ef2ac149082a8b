"""`tau cluster install`: plan, offline render summary, two-phase Helm install.

The first install of a release runs a bootstrap pass with the baseline queue disabled and
`--wait` forced: Kueue's webhooks must serve before Kueue objects can be created. Every main
pass uses `--reset-values`, so the bootstrap override is never replayed and omitted settings
return to chart defaults (operators pass their complete values file each time).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau import keys, safeyaml
from tau.cluster.chart import (
    DEFAULT_NAMESPACE,
    DEFAULT_RELEASE,
    ChartRef,
    absent_operators,
    read_chart_yaml,
    renderable,
)
from tau.cluster.helm import HELM_OWNER, Helm
from tau.errors import RuntimeFailure, UsageError, ValidationError
from tau.kube import KubeClient, KubeError, NotFoundError
from tau.kube.resources import TAU_QUOTA_REQUESTS, TAU_WORKSPACES
from tau.runconfig.durations import parse_duration as go_duration

Progress = Callable[[str], None]

_CHART_RESOLUTION_MARKERS = (
    "fetchreference",
    "manifest unknown",
    "pull access denied",
    "repository not found",
    "failed to do request",
    "unauthorized",
    "not found in",
)


def parse_duration(text: str, flag: str = "--timeout") -> float:
    """A Go duration (`15m`, `90s`, `1h30m`) in seconds, the one grammar tau reads; positive."""
    try:
        total = go_duration(text.strip())
    except ValueError:
        raise UsageError(f"{flag} {text!r} is not a duration like 90s, 15m or 1h30m") from None
    if total <= 0:
        raise UsageError(f"{flag} must be greater than zero (got {text!r})")
    return total


def _check_values_file(path: str) -> None:
    """Helm would report a bad values file as a chart failure; it is the caller's input."""
    try:
        data = safeyaml.load(Path(path).read_text())
    except FileNotFoundError:
        raise UsageError(f"--values {path}: file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--values {path}: cannot read ({type(error).__name__})") from None
    except safeyaml.YamlRefused as error:
        line = f" at line {error.line}" if error.line else ""
        raise ValidationError(
            f"--values {path}: not valid YAML{line} ({error.problem})",
            owner="platform operator: --values",
        ) from None
    if data is not None and not isinstance(data, dict):
        raise ValidationError(
            f"--values {path}: must be a mapping of values", owner="platform operator: --values"
        )


@dataclass
class InstallOptions:
    chart: ChartRef = field(default_factory=lambda: ChartRef("oci://invalid"))
    release: str = DEFAULT_RELEASE
    namespace: str = DEFAULT_NAMESPACE
    context: str = ""
    timeout: str = "15m"
    create_namespace: bool = True
    wait: bool = False
    atomic: bool = False
    dependency_update: bool = False
    values_files: list[str] = field(default_factory=list)
    set_values: list[str] = field(default_factory=list)
    set_string_values: list[str] = field(default_factory=list)

    def validate(self) -> float:
        for flag, value in (
            ("--release", self.release),
            ("--namespace", self.namespace),
            ("--chart", self.chart.ref),
        ):
            if not value.strip():
                raise UsageError(f"{flag} must not be empty")
        ref = self.chart.ref
        if ref.startswith(("/", "./", "../", "~")) and not Path(ref).expanduser().exists():
            raise UsageError(f"--chart {ref}: no such chart directory or archive")
        if self.chart.local_dir is None and not self.chart.version.strip():
            raise UsageError("--version must not be empty for a remote chart")
        for path in self.values_files:
            _check_values_file(path)
        for flag, items in (("--set", self.set_values), ("--set-string", self.set_string_values)):
            for item in items:
                if "=" not in item or item.startswith("="):
                    raise UsageError(f"{flag} {item!r}: expected key=value")
        return parse_duration(self.timeout)

    def values_args(self) -> list[str]:
        args: list[str] = []
        for path in self.values_files:
            args += ["-f", path]
        for item in self.set_values:
            args += ["--set", item]
        for item in self.set_string_values:
            args += ["--set-string", item]
        return args

    def context_args(self) -> list[str]:
        return ["--kube-context", self.context] if self.context else []


def template_args(opts: InstallOptions, chart: str) -> list[str]:
    args = ["template", opts.release, chart, "--namespace", opts.namespace]
    args += [*opts.chart.version_args(), "--include-crds", *opts.context_args()]
    if opts.dependency_update:
        args.append("--dependency-update")
    return args + opts.values_args()


def upgrade_args(
    opts: InstallOptions, chart: str, helm: Helm, *, bootstrap: bool = False
) -> list[str]:
    """The `helm upgrade --install` call of the bootstrap or the main pass."""
    args = ["upgrade", "--install", opts.release, chart, "--namespace", opts.namespace]
    args += [*opts.chart.version_args(), "--timeout", opts.timeout, "--reset-values"]
    args += opts.context_args()
    if opts.create_namespace:
        args.append("--create-namespace")
    if opts.dependency_update:
        args.append("--dependency-update")
    if opts.wait or bootstrap:
        args.append("--wait")
    if opts.atomic and not bootstrap:
        rollback = "--rollback-on-failure"
        args.append(rollback if helm.upgrade_supports(rollback) else "--atomic")
    args += server_side_args(helm)
    args += opts.values_args()
    if bootstrap:
        args += ["--set", "baselineQueue.enabled=false"]
    return args


def server_side_args(helm: Helm) -> list[str]:
    """Helm 4 applies server-side; AKS co-owns Kueue webhook selectors, so force conflicts."""
    if helm.upgrade_supports("--force-conflicts"):
        return ["--server-side=true", "--force-conflicts"]
    return []


# The components a values switch can leave out of the release, by their switch's value path.
SWITCHED = {
    "Kueue": "components.kueue.enabled",
    "KubeRay": "components.kuberayOperator.enabled",
    "baseline queue": "baselineQueue.enabled",
}
DEFAULT_COMPONENTS = (
    "Kueue",
    "KubeRay",
    "tau-core-controller",
    "TauCluster",
    "baseline queue",
    "quota admission guard",
    "GPU monitoring",
    "Portal",
)
# Only what the chart renders when switched on: Stellar and image prewarm are reserved values
# (taugrid-core.stellar/prewarm.enabled refuse true), so the plan does not offer them.
OPT_IN_COMPONENTS = ("lifecycle recorder",)


def plan_lines(opts: InstallOptions) -> list[str]:
    """The plan block printed before anything runs."""
    off = disabled_components(opts)
    version = opts.chart.version
    if opts.chart.local_dir is not None:
        version = f"{read_chart_yaml(opts.chart.local_dir).get('version', '?')} (local chart)"
    return [
        "TauGrid install plan",
        f"  release:     {opts.release}",
        f"  namespace:   {opts.namespace}",
        f"  chart:       {opts.chart.ref}",
        f"  version:     {version}",
        f"  helm wait:   {'on (--wait)' if opts.wait else 'off (Tau readiness report instead)'}",
        f"  rollback:    {'on failure (--atomic)' if opts.atomic else 'off'}",
        f"  components:  {', '.join(c for c in DEFAULT_COMPONENTS if c not in off)}",
        f"  opt-in:      {', '.join(OPT_IN_COMPONENTS)}",
        "  validation:  Kubernetes >=1.30, Kueue, KubeRay, Portal, Tau controller, TauCluster "
        "NodesReady, baseline ClusterQueue, quota guard",
    ]


def disabled_components(opts: InstallOptions) -> set[str]:
    """Components the values files or --set turn off (later ones win, as in Helm)."""
    enabled = {name: True for name in SWITCHED}
    for path in opts.values_files:
        data = safeyaml.load(Path(path).read_text()) if Path(path).is_file() else None
        for name, switch in SWITCHED.items():
            value = _at(data, switch.split("."))
            if isinstance(value, bool):
                enabled[name] = value
    for item in opts.set_values:
        key, _, value = item.partition("=")
        for name, switch in SWITCHED.items():
            if key.strip() == switch:
                enabled[name] = value.strip().lower() != "false"
    return {name for name, on in enabled.items() if not on}


def _at(data: object, path: list[str]) -> object:
    for part in path:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


_OWNERSHIP = re.compile(
    r'(?P<kind>[A-Za-z]+) "(?P<name>[^"]+)"(?: in namespace "(?P<namespace>[^"]*)")? exists '
    r"and cannot be imported into the current release: invalid ownership metadata"
)
# The values that leave the chart's own copy of a kind out, when the cluster already has one.
_OWN_COPY_OFF = {
    "PriorityClass": "baselineQueue.priorityClasses.enabled=false",
    "WorkloadPriorityClass": "baselineQueue.priorityClasses.enabled=false",
}


def ownership_conflict(opts: InstallOptions, message: str) -> RuntimeFailure | None:
    """Helm's "invalid ownership metadata" refusal as one line naming the object and the fix."""
    match = _OWNERSHIP.search(message)
    if match is None:
        return None
    kind, name, namespace = match["kind"], match["name"], match["namespace"] or ""
    where = f' in namespace "{namespace}"' if namespace else ""
    target = f"{kind.lower()} {name}" + (f" -n {namespace}" if namespace else "")
    adopt = (
        f"kubectl label {target} app.kubernetes.io/managed-by=Helm; kubectl annotate {target} "
        f"meta.helm.sh/release-name={opts.release} "
        f"meta.helm.sh/release-namespace={opts.namespace}"
    )
    own_copy = _OWN_COPY_OFF.get(kind)
    fix = f"keep yours and install with --set {own_copy}, or " if own_copy else ""
    return RuntimeFailure(
        f'{kind} "{name}"{where} already exists and is not part of Helm release '
        f"{opts.release} (namespace {opts.namespace}), so the install stopped before changing it",
        hint=f"{fix}let the release adopt it (`{adopt}`), or delete it",
        owner="platform operator",
    )


def render_summary(manifest: str) -> list[tuple[str, int]]:
    """Rendered objects counted by kind: count descending, then kind name."""
    counts: Counter[str] = Counter()
    for doc in safeyaml.load_all(manifest):
        if isinstance(doc, dict) and doc.get("kind") and doc.get("apiVersion"):
            counts[str(doc["kind"])] += 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def chart_error(opts: InstallOptions, message: str) -> RuntimeFailure:
    """A Helm failure as one line; chart guards already name their owner."""
    message = message.removesuffix(f" (owner: {HELM_OWNER})")
    conflict = ownership_conflict(opts, message)
    if conflict is not None:
        return conflict
    lowered = message.lower()
    if opts.chart.local_dir is None and any(m in lowered for m in _CHART_RESOLUTION_MARKERS):
        return RuntimeFailure(
            f"cannot resolve chart {opts.chart.ref} version {opts.chart.version}: {message}",
            hint="pass an accessible --chart reference or a local chart path",
            owner=HELM_OWNER,
        )
    return RuntimeFailure(f"helm failed: {message}", owner=HELM_OWNER)


@dataclass(frozen=True)
class ImageUse:
    """One container image the release runs, and the workloads whose pods run it."""

    image: str
    workloads: tuple[str, ...]


def _pod_specs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = doc.get("spec") or {}
    if doc.get("kind") == "Pod":
        return [spec]
    if doc.get("kind") == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec")) or {}
    template = (spec.get("template") or {}).get("spec")
    return [template] if isinstance(template, dict) else []


def rendered_images(manifest: str) -> list[ImageUse]:
    """Every container and init container image in the rendered objects, sorted by image."""
    uses: dict[str, list[str]] = {}
    for doc in safeyaml.load_all(manifest):
        if not isinstance(doc, dict):
            continue
        workload = f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"
        for pod in _pod_specs(doc):
            for container in [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]:
                image = container.get("image")
                if image and workload not in uses.setdefault(image, []):
                    uses[image].append(workload)
    return [ImageUse(image, tuple(uses[image])) for image in sorted(uses)]


def image_lines(uses: list[ImageUse]) -> list[str]:
    """The images block printed after the plan, before anything is installed."""
    if not uses:
        return ["  images:      (no pods rendered)"]
    lines = ["  images:"]
    for use in uses:
        shown = ", ".join(use.workloads[:2])
        more = len(use.workloads) - 2
        lines.append(f"    {use.image}  ({shown}{f', +{more} more' if more > 0 else ''})")
    return lines


def images(helm: Helm, opts: InstallOptions) -> list[ImageUse]:
    """Render exactly what the main pass installs (offline for a local chart) and list its
    images, so an operator sees which registry and tags the release will pull."""
    args = template_args(opts, "CHART")
    with renderable(opts.chart) as chart:
        args[2] = chart
        result = helm.run(args)
    if not result.ok:
        raise chart_error(opts, result.error_line())
    return rendered_images(result.stdout)


@dataclass
class DryRun:
    kinds: list[tuple[str, int]]
    notes: list[str] = field(default_factory=list)
    images: list[ImageUse] = field(default_factory=list)


def dry_run(helm: Helm, opts: InstallOptions) -> DryRun:
    """Render offline (the cluster is never contacted) and count objects by kind.

    A preview of a local chart whose third-party dependencies are not vendored renders without
    them and says so; a real install of the same chart fails closed instead.
    """
    notes, args = [], template_args(opts, "CHART")
    chart_dir = opts.chart.local_dir
    if chart_dir is not None and not opts.dependency_update:
        for name, switch, declared in absent_operators(chart_dir):
            args += ["--set", f"{switch}=false"]
            fix = (
                f"run `helm dependency build {chart_dir}`"
                if declared
                else f"install the published chart, or {keys.BUNDLE_CHART_DIR} after "
                f"`helm dependency build {keys.BUNDLE_CHART_DIR}`"
            )
            why = "is not vendored in" if declared else "is not part of"
            notes.append(f"{name} {why} {chart_dir}: previewed without it ({fix} to include it)")
    with renderable(opts.chart) as chart:
        args[2] = chart
        result = helm.run(args)
    if not result.ok:
        raise chart_error(opts, result.error_line())
    return DryRun(render_summary(result.stdout), notes, rendered_images(result.stdout))


def find_release(helm: Helm, opts: InstallOptions) -> dict[str, Any] | None:
    """The release of this name in any namespace and state (explicit states: Helm 3 and 4)."""
    args = ["list", "--all-namespaces", "--deployed", "--failed", "--pending", "--superseded"]
    args += ["--uninstalled", "--uninstalling", "-o", "json", *opts.context_args()]
    result = helm.run(args)
    if not result.ok:
        raise RuntimeFailure(f"helm list failed: {result.error_line()}", owner=HELM_OWNER)
    releases: list[dict[str, Any]] = json.loads(result.stdout or "[]") or []
    for release in releases:
        if release.get("name") != opts.release:
            continue
        where = release.get("namespace") or opts.namespace
        if where != opts.namespace:
            raise UsageError(
                f"release {opts.release} already exists in namespace {where}, not "
                f"{opts.namespace}: Helm cannot move a release between namespaces",
                hint=f"pass --namespace {where}",
            )
        return release
    return None


def release_values(
    helm: Helm, release: str, namespace: str, context: str = ""
) -> dict[str, Any] | None:
    """The coalesced values of a deployed release, or None when unreadable."""
    args = ["get", "values", release, "--namespace", namespace, "--all", "-o", "json"]
    result = helm.run(args + (["--kube-context", context] if context else []))
    if not result.ok:
        return None
    try:
        values = json.loads(result.stdout or "{}")
    except json.JSONDecodeError:
        return None
    return values if isinstance(values, dict) else None


def install(
    helm: Helm,
    opts: InstallOptions,
    *,
    foreign_system_objects: Callable[[], list[str]],
    progress: Progress,
) -> None:
    """Run the bootstrap pass (new releases only) and the main pass."""
    existing = find_release(helm, opts)
    if existing is not None:
        strays = foreign_system_objects()
        if strays:
            raise UsageError(
                f"Tau objects live outside the release namespace {opts.namespace}: "
                + ", ".join(strays[:5]),
                hint="the system namespace cannot change on upgrade; reinstall with that "
                "namespace or move the objects",
            )
    with renderable(opts.chart) as chart:
        if existing is None:
            progress(
                "bootstrap pass: Kueue and controllers first (baseline queue disabled, --wait)"
            )
            result = helm.run(upgrade_args(opts, chart, helm, bootstrap=True))
            if not result.ok:
                raise chart_error(opts, result.error_line())
        progress("main pass: helm upgrade --install --reset-values")
        result = helm.run(upgrade_args(opts, chart, helm))
        if not result.ok:
            raise chart_error(opts, result.error_line())


def foreign_system_objects(client: KubeClient, namespace: str) -> list[str]:
    """Tau objects outside `namespace`: an upgrade cannot move the system namespace."""
    strays = []
    for resource in (TAU_WORKSPACES, TAU_QUOTA_REQUESTS):
        try:
            items = client.list(resource)
        except NotFoundError:
            continue
        except KubeError as error:
            raise RuntimeFailure(f"cannot check existing Tau objects: {error}") from None
        for item in items:
            meta = item.get("metadata") or {}
            if meta.get("namespace") != namespace:
                strays.append(f"{resource.display} {meta.get('namespace')}/{meta.get('name')}")
    return strays
