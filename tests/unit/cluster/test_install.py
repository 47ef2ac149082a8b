"""Install planning: flags of the bootstrap and main passes, Helm 3/4 detection, dry-run summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tau.cluster.chart import (
    DEFAULT_CHART,
    DEFAULT_CHART_VERSION,
    ChartRef,
    absent_operators,
    renderable,
    unvendored_dependencies,
)
from tau.cluster.install import (
    ImageUse,
    InstallOptions,
    chart_error,
    image_lines,
    install,
    parse_duration,
    plan_lines,
    render_summary,
    rendered_images,
    template_args,
    upgrade_args,
)
from tau.errors import RuntimeFailure, UsageError, ValidationError

from .conftest import ROOT, RecordingHelm

CHART_DIR = ROOT / "charts" / "taugrid"
BUNDLE_DIR = ROOT / "charts" / "taugrid-bundle"


def _after(args: list[str], flag: str) -> str:
    """The value passed right after `flag`."""
    return args[args.index(flag) + 1]


def options(**changes) -> InstallOptions:
    base = dict(
        chart=ChartRef(DEFAULT_CHART, "0.3.2"),
        context="aks-prod",
        values_files=["site.yaml"],
        set_values=["baselineQueue.name=research"],
    )
    return InstallOptions(**{**base, **changes})


def test_bootstrap_pass_forces_wait_and_disables_the_baseline_queue_last(helm4):
    args = upgrade_args(options(), "CHART", helm4, bootstrap=True)
    assert args[:4] == ["upgrade", "--install", "taugrid", "CHART"]
    assert "--wait" in args and "--reset-values" in args
    assert args[-2:] == ["--set", "baselineQueue.enabled=false"]
    assert args.index("site.yaml") < args.index("baselineQueue.enabled=false")
    assert _after(args, "--kube-context") == "aks-prod"
    assert _after(args, "--version") == "0.3.2"


def test_main_pass_resets_values_and_never_replays_the_bootstrap_override(helm4):
    args = upgrade_args(options(), "CHART", helm4)
    assert "--reset-values" in args
    assert "baselineQueue.enabled=false" not in args
    assert "--wait" not in args


def test_helm4_gets_rollback_on_failure_and_forced_server_side_conflicts(helm4):
    args = upgrade_args(options(atomic=True), "CHART", helm4)
    assert "--rollback-on-failure" in args and "--atomic" not in args
    assert "--server-side=true" in args and "--force-conflicts" in args


def test_helm3_keeps_atomic_and_gets_no_server_side_flags(helm3):
    args = upgrade_args(options(atomic=True), "CHART", helm3)
    assert "--atomic" in args and "--rollback-on-failure" not in args
    assert "--force-conflicts" not in args and "--server-side=true" not in args
    assert helm3.major == 3


def test_local_charts_get_no_version_flag(helm4):
    opts = options(chart=ChartRef(str(CHART_DIR)))
    assert "--version" not in upgrade_args(opts, "CHART", helm4)
    assert "--version" not in template_args(opts, "CHART")


def test_template_args_render_crds_offline():
    args = template_args(options(), "CHART")
    assert args[:3] == ["template", "taugrid", "CHART"]
    assert "--include-crds" in args and "--dependency-update" not in args
    assert "--dependency-update" in template_args(options(dependency_update=True), "CHART")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15m", 900), ("90s", 90), ("1h30m", 5400), ("500ms", 0.5), ("1.5h", 5400), ("2m0.5s", 120.5)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_timeouts_and_run_config_durations_share_one_grammar():
    from tau.runconfig.durations import parse_duration as run_config_duration

    for text in ("15m", "1h30m", "500ms", "1.5h", "90s"):
        assert parse_duration(text) == run_config_duration(text)


@pytest.mark.parametrize("text", ["", "15", "0s", "m15", "15 m", "-1m"])
def test_bad_durations_are_usage_errors(text):
    with pytest.raises(UsageError, match="--timeout"):
        parse_duration(text)


def test_empty_release_or_namespace_is_rejected():
    with pytest.raises(UsageError, match="--namespace"):
        options(namespace=" ").validate()
    with pytest.raises(UsageError, match="--release"):
        options(release="").validate()


def test_inputs_helm_would_reject_are_named_by_flag_before_helm_runs(tmp_path):
    values = tmp_path / "site.yaml"
    values.write_text("baselineQueue: {name: research}\n")
    assert options(values_files=[str(values)]).validate() == 900
    with pytest.raises(UsageError, match=r"--set 'kueue': expected key=value"):
        options(values_files=[str(values)], set_values=["kueue"]).validate()
    with pytest.raises(UsageError, match=r"--set-string '=x': expected key=value"):
        options(values_files=[str(values)], set_string_values=["=x"]).validate()
    with pytest.raises(UsageError, match=r"--chart \./absent: no such chart"):
        options(chart=ChartRef("./absent"), values_files=[str(values)]).validate()
    with pytest.raises(UsageError, match=r"--values .*missing\.yaml: file not found"):
        options(values_files=[str(tmp_path / "missing.yaml")]).validate()


def test_a_values_file_that_is_not_yaml_or_not_a_mapping_is_a_validation_error(tmp_path):
    broken, listed = tmp_path / "broken.yaml", tmp_path / "list.yaml"
    broken.write_text("a: 1\nb: [\n")
    listed.write_text("- a\n")
    with pytest.raises(ValidationError, match=r"broken\.yaml: not valid YAML at line 3"):
        options(values_files=[str(broken)]).validate()
    with pytest.raises(ValidationError, match=r"list\.yaml: must be a mapping"):
        options(values_files=[str(listed)]).validate()


def test_render_summary_counts_objects_by_kind_and_skips_banners():
    manifest = "Saving 2 charts\nDeleting outdated charts\n---\n" + yaml.safe_dump_all(
        [
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a"}},
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "b"}},
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "c"}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}},
        ]
    )
    assert render_summary(manifest) == [("ServiceAccount", 2), ("ConfigMap", 1), ("Deployment", 1)]


def test_plan_names_release_namespace_chart_and_modes():
    text = "\n".join(plan_lines(options(wait=True)))
    for expected in (
        "taugrid",
        "tau-system",
        DEFAULT_CHART,
        "0.3.2",
        "on (--wait)",
        "Portal",
        "opt-in:      lifecycle recorder",
    ):
        assert expected in text


def test_the_plan_offers_no_component_the_chart_does_not_render():
    """Stellar and image prewarm are reserved chart values (true is refused), not components."""
    text = "\n".join(plan_lines(options()))
    assert "Stellar" not in text
    assert "prewarm" not in text


def test_the_checkout_chart_has_nothing_to_fetch_and_the_bundle_exactly_the_operators():
    assert unvendored_dependencies(CHART_DIR) == []
    assert [(n, declared) for n, _, declared in absent_operators(CHART_DIR)] == [
        ("kueue", False),
        ("kuberay-operator", False),
    ]
    assert unvendored_dependencies(BUNDLE_DIR) == ["kueue", "kuberay-operator"]
    assert [(n, declared) for n, _, declared in absent_operators(BUNDLE_DIR)] == [
        ("kueue", True),
        ("kuberay-operator", True),
    ]


def test_the_checkout_chart_is_rendered_as_it_is():
    with renderable(ChartRef(str(CHART_DIR))) as path:
        assert path == str(CHART_DIR)


def test_renderable_copy_of_the_bundle_drops_only_unfetched_charts_and_resolves_its_links():
    before = (BUNDLE_DIR / "Chart.yaml").read_text()
    with renderable(ChartRef(str(BUNDLE_DIR))) as path:
        copy = yaml.safe_load((Path(path) / "Chart.yaml").read_text())
        assert [d["name"] for d in copy["dependencies"]] == [
            "tau-core-controller",
            "taugrid-core",
            "gpu-monitoring",
        ]
        crds = Path(path) / "charts" / "tau-core-controller" / "crds"
        assert crds.is_dir() and not crds.parent.is_symlink()
        assert not (Path(path) / "templates").is_symlink()
    assert not Path(path).exists()
    assert (BUNDLE_DIR / "Chart.yaml").read_text() == before


def test_remote_references_are_used_as_given():
    with renderable(ChartRef(DEFAULT_CHART)) as path:
        assert path == DEFAULT_CHART
    assert ChartRef(DEFAULT_CHART).name == "taugrid"
    assert ChartRef(str(CHART_DIR)).name == "taugrid"


def _listing(*releases: dict) -> tuple[int, str]:
    return (0, json.dumps(list(releases)))


def test_a_new_release_gets_the_bootstrap_pass_then_the_main_pass(tmp_path):
    fake = RecordingHelm(tmp_path, {"list": _listing(), "upgrade": (0, "")})
    install(fake.helm, options(), foreign_system_objects=list, progress=print)
    upgrades = [c for c in fake.calls() if c[:2] == ["upgrade", "--install"]]
    assert len(upgrades) == 2
    assert upgrades[0][-2:] == ["--set", "baselineQueue.enabled=false"] and "--wait" in upgrades[0]
    assert "baselineQueue.enabled=false" not in upgrades[1]
    listing = fake.calls()[0]
    for state in ("--deployed", "--failed", "--pending", "--superseded", "--uninstalled"):
        assert state in listing


def test_an_existing_release_skips_the_bootstrap_pass(tmp_path):
    fake = RecordingHelm(
        tmp_path,
        {"list": _listing({"name": "taugrid", "namespace": "tau-system"}), "upgrade": (0, "")},
    )
    install(fake.helm, options(), foreign_system_objects=list, progress=print)
    assert len([c for c in fake.calls() if c[:2] == ["upgrade", "--install"]]) == 1


def test_a_release_in_another_namespace_cannot_move(tmp_path):
    fake = RecordingHelm(
        tmp_path, {"list": _listing({"name": "taugrid", "namespace": "tau-platform"})}
    )
    with pytest.raises(UsageError, match="already exists in namespace tau-platform"):
        install(fake.helm, options(), foreign_system_objects=list, progress=print)
    assert not [c for c in fake.calls() if c[0] == "upgrade"]


def test_tau_objects_outside_the_release_namespace_block_an_upgrade(tmp_path):
    fake = RecordingHelm(
        tmp_path, {"list": _listing({"name": "taugrid", "namespace": "tau-system"})}
    )
    with pytest.raises(UsageError, match="outside the release namespace"):
        install(
            fake.helm,
            options(),
            foreign_system_objects=lambda: ["workspaces.tau.azure.com old/ws"],
            progress=print,
        )
    assert not [c for c in fake.calls() if c[0] == "upgrade"]


def test_unresolvable_remote_chart_names_the_chart_and_the_fix(tmp_path):
    fake = RecordingHelm(
        tmp_path,
        {"list": _listing(), "upgrade": (1, ""), "template": (1, "")},
    )
    fake_err = tmp_path / "helm"
    fake_err.write_text(
        fake_err.read_text().replace(
            "sys.exit(code)",
            "sys.stderr.write('Error: failed to do request: manifest unknown\\n'); sys.exit(code)",
        )
    )
    with pytest.raises(RuntimeFailure) as failure:
        install(fake.helm, options(), foreign_system_objects=list, progress=print)
    line = failure.value.one_line()
    assert (
        "cannot resolve chart oci://mcr.microsoft.com/aks/ai-runtime/helm/taugrid version 0.3.2"
        in line
    )
    assert "pass an accessible --chart reference" in line


MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: tau-portal}
spec:
  template:
    spec:
      initContainers: [{name: init-store, image: reg:5000/taugrid-portal:1}]
      containers: [{name: portal, image: reg:5000/taugrid-portal:1}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: sweep}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: main, image: reg:5000/tau@sha256:abc}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: not-a-workload}
"""


def test_rendered_images_lists_each_image_once_with_the_workloads_that_run_it():
    uses = rendered_images(MANIFEST)
    assert [(u.image, u.workloads) for u in uses] == [
        ("reg:5000/tau@sha256:abc", ("CronJob/sweep",)),
        ("reg:5000/taugrid-portal:1", ("Deployment/tau-portal",)),
    ]


def test_image_lines_name_every_image_and_abbreviate_long_workload_lists():
    lines = image_lines(
        [ImageUse("npd:1", tuple(f"DaemonSet/gpu-{i}" for i in range(5))), ImageUse("tau:1", ())]
    )
    assert lines[0] == "  images:"
    assert lines[1] == "    npd:1  (DaemonSet/gpu-0, DaemonSet/gpu-1, +3 more)"
    assert image_lines([]) == ["  images:      (no pods rendered)"]


def test_the_plan_names_a_local_chart_by_its_chart_yaml_version():
    text = "\n".join(plan_lines(options(chart=ChartRef(str(CHART_DIR)))))
    assert f"version:     {DEFAULT_CHART_VERSION} (local chart)" in text


def test_the_plan_leaves_out_components_the_values_turn_off(tmp_path):
    """A local cluster with its own Kueue and KubeRay: the plan must not promise them."""
    values = tmp_path / "local.yaml"
    values.write_text(
        yaml.safe_dump({"components": {"kueue": {"enabled": False}}, "baselineQueue": {}})
    )
    opts = options(
        values_files=[str(values)], set_values=["components.kuberayOperator.enabled=false"]
    )
    [components] = [line for line in plan_lines(opts) if line.startswith("  components:")]
    assert "Kueue" not in components and "KubeRay" not in components
    assert "tau-core-controller" in components
    [default] = [line for line in plan_lines(options()) if line.startswith("  components:")]
    assert "Kueue, KubeRay" in default


def test_the_plan_leaves_out_the_baseline_queue_the_values_turn_off(tmp_path):
    """The local cluster's install values: the plane seeds its own baseline queue."""
    values = tmp_path / "local.yaml"
    values.write_text(yaml.safe_dump({"baselineQueue": {"enabled": False}}))
    [components] = [
        line for line in plan_lines(options(values_files=[str(values)])) if "components:" in line
    ]
    assert "baseline queue" not in components and "quota admission guard" in components
    again = options(values_files=[str(values)], set_values=["baselineQueue.enabled=true"])
    assert "baseline queue" in next(line for line in plan_lines(again) if "components:" in line)


# Helm 3's refusal, as printed against the local cluster's pre-created PriorityClasses.
HELM_OWNERSHIP = (
    "rendered manifests contain a resource that already exists. Unable to continue with "
    'install: PriorityClass "taugrid-default" in namespace "" exists and cannot be imported '
    "into the current release: invalid ownership metadata; label validation error: missing key "
    '"app.kubernetes.io/managed-by": must be set to "Helm"; annotation validation error: '
    'missing key "meta.helm.sh/release-name": must be set to "taugrid"'
)


def test_a_helm_ownership_conflict_is_one_line_naming_the_object_and_the_fix():
    error = chart_error(options(), HELM_OWNERSHIP)
    line = error.one_line()
    assert line.startswith(
        'PriorityClass "taugrid-default" already exists and is not part of Helm release taugrid '
        "(namespace tau-system)"
    )
    assert "--set baselineQueue.priorityClasses.enabled=false" in line
    assert "kubectl label priorityclass taugrid-default app.kubernetes.io/managed-by=Helm" in line
    assert "meta.helm.sh/release-namespace=tau-system" in line
    assert "\n" not in line and error.owner == "platform operator"


def test_a_namespaced_conflict_names_its_namespace_and_no_values_switch():
    message = HELM_OWNERSHIP.replace(
        'PriorityClass "taugrid-default" in namespace ""',
        ('ConfigMap "portal" in namespace "tau-system"'),
    )
    line = chart_error(options(), message).one_line()
    assert 'ConfigMap "portal" in namespace "tau-system" already exists' in line
    assert "kubectl label configmap portal -n tau-system" in line
    assert "--set" not in line
