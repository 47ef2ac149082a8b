"""The Containerfiles are the one description of each image; both builds read them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hack.images.build import CONTEXTS, DOCKER_DIR, REPO, TITLE_LABEL, image_names
from hack.images.containerfile import ContainerfileError, ContextCopy, parse
from hack.images.requirements import requirements
from tau import keys
from tau.render.rayjob import DEFAULT_RAY_VERSION
from tau.render.security import DEFAULT_GID, DEFAULT_UID


def _all():
    return {name: parse(DOCKER_DIR / f"{name}.Containerfile") for name in image_names()}


def test_the_project_ships_a_runtime_a_controller_and_a_portal_image():
    repositories = {n: dict(cf.config.labels)[TITLE_LABEL] for n, cf in _all().items()}
    assert repositories == {
        "controller": "tau-core-controller",
        "portal": "taugrid-portal",
        "runtime": "tau",
    }


def test_every_image_runs_as_the_numeric_non_root_user_tau_renders_for_restricted_pods():
    for name, cf in _all().items():
        assert cf.config.user == f"{DEFAULT_UID}:{DEFAULT_GID}", name
        assert cf.arg("TAU_UID") == str(DEFAULT_UID), name


def test_every_image_puts_the_venv_first_on_path():
    for name, cf in _all().items():
        path = dict(cf.config.env)["PATH"]
        assert path.split(":")[0] == f"{cf.arg('TAU_VENV')}/bin", name


def test_the_controller_and_portal_start_their_programs():
    configs = _all()
    assert configs["controller"].config.entrypoint == ("python3", "-m", "tau.controller")
    assert configs["portal"].config.entrypoint == ("taugrid-portal",)


def test_the_portal_image_carries_the_kueueviz_bundle_where_its_env_points():
    portal = _all()["portal"]
    [copy] = portal.copies
    assert copy == ContextCopy("kueueviz", ".", portal.arg("KUEUEVIZ_DIR"))
    assert copy.context in CONTEXTS and (REPO / CONTEXTS[copy.context]).is_file()
    assert dict(portal.config.env)[keys.ENV_KUEUEVIZ_BUNDLE] == portal.arg("KUEUEVIZ_DIR")
    assert not _all()["controller"].copies and not _all()["runtime"].copies


def test_the_images_share_one_debian_base():
    bases = {
        tuple(cf.arg(a) for a in ("DEBIAN_SUITE", "DEBIAN_PACKAGES", "TAU_UID", "TAU_VENV"))
        for cf in _all().values()
    }
    assert len(bases) == 1
    # KubeRay's probes run wget in every Ray container; the Ray image needs bash for `bash -lc`.
    assert "wget" in bases.pop()[1].split()


def test_the_runtime_image_installs_the_ray_version_rayjobs_declare():
    runtime = _all()["runtime"]
    lines = requirements(REPO / "pyproject.toml", runtime.arg("TAU_EXTRAS").split(","))
    assert f"ray[default]=={DEFAULT_RAY_VERSION}" in lines
    assert any(line.startswith("kubernetes") for line in lines)
    assert any(line.startswith("pyarrow") for line in lines)


@pytest.mark.parametrize("image", ["runtime", "portal"])
def test_the_images_running_an_adx_sink_install_its_credential_library(image):
    # The lifecycle recorder (runtime image) and the Portal's kusto source sign in to ADX
    # through azure-identity's workload-identity credential.
    cf = _all()[image]
    lines = requirements(REPO / "pyproject.toml", cf.arg("TAU_EXTRAS").split(","))
    assert any(line.startswith("azure-identity") for line in lines)


def test_requirements_expand_self_references_once(tmp_path: Path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "Tau_Grid"\ndependencies = ["pyyaml>=6"]\n'
        "[project.optional-dependencies]\n"
        'kube = ["kubernetes>=37"]\n'
        'all = ["tau-grid[kube]", "rich"]\n'
        'more = ["tau_grid[all,kube]"]\n'
    )
    assert requirements(pyproject, ["more"]) == ["pyyaml>=6", "kubernetes>=37", "rich"]
    with pytest.raises(KeyError, match="nope"):
        requirements(pyproject, ["nope"])


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "x.Containerfile"
    path.write_text('ARG TAU_UID=7\nARG WORDS="a  b"\nFROM scratch\n' + body)
    return path


def test_the_final_stage_config_is_read_with_build_arguments_substituted(tmp_path: Path):
    cf = parse(
        _write(
            tmp_path,
            "FROM scratch AS final\nENV A=1 \\\n    B=${TAU_UID}/x\n# a comment\n"
            'LABEL k="v w"\nUSER $TAU_UID\nEXPOSE 80 53/udp\nCMD ["a", "${TAU_UID}"]\n',
        )
    )
    assert cf.arg("WORDS") == "a  b"
    assert cf.config.env == (("A", "1"), ("B", "7/x"))
    assert cf.config.labels == (("k", "v w"),)
    assert cf.config.user == "7"
    assert cf.config.exposed_ports == ("80/tcp", "53/udp")
    assert cf.config.cmd == ("a", "7")
    assert cf.config.entrypoint is None


def test_a_final_stage_copy_from_a_named_context_is_read(tmp_path: Path):
    cf = parse(_write(tmp_path, "COPY --from=bundle . /opt/x${TAU_UID}\nCOPY a b\n"))
    assert cf.copies == (ContextCopy("bundle", ".", "/opt/x7"),)


@pytest.mark.parametrize(
    "body, message",
    [
        ("FROM scratch AS deps\nFROM deps\nCOPY --from=deps /a /b\n", "from a stage are not"),
        ("COPY --from=ctx a b c\n", "COPY --from=CONTEXT SOURCE DEST"),
        ("ENTRYPOINT python3 -m tau\n", "exec form"),
        ("USER ${NOPE}\n", r"\$\{NOPE\} is not a declared build argument"),
        ("ENV JUSTAWORD\n", "KEY=VALUE"),
    ],
)
def test_forms_the_daemonless_build_cannot_reproduce_are_refused(tmp_path, body, message):
    with pytest.raises(ContainerfileError, match=message):
        parse(_write(tmp_path, body))


def test_the_runtime_image_is_the_one_tau_and_the_chart_default_to():
    from tau.resolve.direct import DEFAULT_RUNTIME_IMAGE

    repository = dict(_all()["runtime"].config.labels)[TITLE_LABEL]
    values = yaml.safe_load((REPO / "charts/taugrid/charts/taugrid-core/values.yaml").read_text())
    assert values["lifecycleRecorder"]["image"]["repository"] == repository
    assert DEFAULT_RUNTIME_IMAGE.rsplit(":", 1)[0].endswith(f"/{repository}")
