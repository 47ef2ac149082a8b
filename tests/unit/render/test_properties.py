"""For any intent, rendering either yields schema-valid objects or raises RenderError."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tau.render import RenderError, render
from tau.render.intent import (
    ImageAsset,
    Placement,
    Resources,
    Script,
    SecretRef,
    Tune,
)

from . import intents
from .schema import validate_rendered

names = st.one_of(
    st.from_regex(r"[a-z][a-z0-9-]{0,60}[a-z0-9]", fullmatch=True),
    st.text(max_size=70),
)
env_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)
quantities = st.sampled_from([None, "1", "500m", "2Gi", "64Gi"])
scalars = st.one_of(st.integers(), st.text(max_size=10), st.booleans(), st.floats(allow_nan=False))


@st.composite
def run_intents(draw):
    engine = draw(st.sampled_from(["job", "rayjob"]))
    launcher = draw(
        st.sampled_from(["python", "torchrun"] if engine == "job" else ["ray-train", "ray-tune"])
    )
    script_name = draw(st.sampled_from(["train.py", "run.sh", "TRAIN.PY"]))
    script = draw(
        st.one_of(st.none(), st.builds(Script, st.just(script_name), st.binary(max_size=200)))
    )
    placement = Placement(
        queue=draw(st.sampled_from(["", "research-queue"])),
        gpu_class=draw(st.sampled_from([None, "any", "a100-80gb"])),
        extra_node_selector=draw(
            st.sampled_from([(), (("pool", "a"),), (("tau.azure.com/gpu-class", "h100-80gb"),)])
        ),
        run_as_user=draw(st.sampled_from([None, 0, 1000])),
        privileged=draw(st.booleans()),
    )
    return dataclasses.replace(
        intents.base(),
        name=draw(names),
        namespace=draw(st.sampled_from(["research", "Bad_NS", "a" * 64])),
        engine=engine,
        launcher=launcher,
        launcher_explicit=draw(st.booleans()),
        placement=placement,
        script=script,
        nodes=draw(st.integers(min_value=1, max_value=4)),
        processes_per_node=draw(st.integers(min_value=0, max_value=8)),
        gpus=draw(st.integers(min_value=0, max_value=8)),
        workers=draw(st.integers(min_value=0, max_value=4)),
        gpus_per_worker=draw(st.integers(min_value=-1, max_value=9)),
        resources=Resources(draw(quantities), draw(quantities), draw(quantities), None),
        configs=tuple(
            draw(
                st.dictionaries(
                    st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), scalars, max_size=3
                )
            ).items()
        ),
        env=tuple(draw(st.dictionaries(env_names, st.text(max_size=20), max_size=3)).items()),
        env_secret=tuple(
            (name, SecretRef("s", "k"))
            for name in draw(st.lists(env_names, max_size=2, unique=True))
        ),
        pip=tuple(draw(st.lists(st.sampled_from(["numpy", " torch", ""]), max_size=2))),
        image_assets=draw(
            st.sampled_from(
                [(), (ImageAsset("assets", "r.io/a@sha256:" + "b" * 64, "/opt/a", "/opt/b"),)]
            )
        ),
        restricted=draw(st.booleans()),
        tune=draw(st.sampled_from([None, Tune(metric="loss")])),
        output=draw(st.sampled_from([None, "/data/out"])),
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_intents())
def test_render_yields_valid_objects_or_a_render_error(intent):
    try:
        objects = render(intent)
    except RenderError as error:
        assert error.one_line()
        return
    validate_rendered(objects)


# --- From generated run configs: load → resolve → render ---------------------------------

common_fields = {
    "runtime": st.fixed_dictionaries(
        {"image": st.sampled_from(["python:3.12-slim", "busybox:1.36"])},
        optional={
            "env": st.dictionaries(
                st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True),
                st.text(max_size=8),
                max_size=2,
            ),
            "security": st.just({"mode": "restricted"}),
        },
    ),
    "policy": st.fixed_dictionaries(
        {},
        optional={
            "gpu_class": st.sampled_from(["any", "a100-80gb", "h100_80gb"]),
            "queue": st.sampled_from(["research-queue", "auto"]),
            "namespace": st.sampled_from(["research", "Bad"]),
        },
    ),
    "storage": st.fixed_dictionaries(
        {}, optional={"data_pvc": st.just("training-data"), "output": st.just("/data/o")}
    ),
}
flags = st.dictionaries(
    st.from_regex(r"[a-z][a-z_]{0,6}", fullmatch=True),
    st.one_of(st.integers(), st.text(max_size=5)),
    max_size=2,
)
name = st.from_regex(r"[a-z][a-z0-9-]{0,50}", fullmatch=True)
job_configs = st.fixed_dictionaries(
    {
        "name": name,
        "engine": st.just("job"),
        "compute": st.fixed_dictionaries(
            {"gpus": st.integers(min_value=-1, max_value=8)},
            optional={"cpu_request": st.sampled_from(["1", "500m", 2])},
        ),
        "execution": st.fixed_dictionaries(
            {},
            optional={
                "launcher": st.sampled_from(["python", "torchrun"]),
                "nodes": st.integers(min_value=0, max_value=3),
                "processes_per_node": st.integers(min_value=0, max_value=4),
                "configs": flags,
            },
        ),
    },
    optional=common_fields,
)
ray_configs = st.fixed_dictionaries(
    {
        "name": name,
        "engine": st.sampled_from(["rayjob", "ray"]),
        "compute": st.fixed_dictionaries(
            {},
            optional={
                "workers": st.integers(min_value=0, max_value=4),
                "gpus_per_worker": st.integers(min_value=0, max_value=9),
                "worker_memory_limit": st.sampled_from(["1Gi", "64Gi"]),
            },
        ),
        "execution": st.one_of(
            st.fixed_dictionaries({}, optional={"launcher": st.just("ray-train")}),
            st.fixed_dictionaries(
                {
                    "launcher": st.just("ray-tune"),
                    "metric": st.just("loss"),
                    "configs": st.dictionaries(
                        st.sampled_from(["lr", "batch"]), st.lists(st.integers(), max_size=3)
                    ),
                }
            ),
        ),
    },
    optional={
        **common_fields,
        "runtime": st.fixed_dictionaries(
            {}, optional={"pip": st.lists(st.sampled_from(["numpy", "torch==2.5.1"]), max_size=2)}
        ),
    },
)
config_fields = st.one_of(job_configs, ray_configs)


def load_generated(tmp_dir, data):
    import yaml as pyyaml

    from tau.runconfig import loads

    path = tmp_dir / "tau.yaml"
    raw = pyyaml.safe_dump({"entrypoint": "train.py", **data}).encode()
    path.write_bytes(raw)
    return loads(raw, path)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(config_fields)
def test_generated_configs_render_or_fail_with_a_tau_error(tmp_path_factory, data):
    from tau.errors import TauError
    from tau.resolve.direct import resolve_run
    from tau.resolve.layers import ConfigLayer, Overrides

    tmp = tmp_path_factory.mktemp("cfg")
    (tmp / "train.py").write_text("print('hi')\n")
    try:
        loaded = load_generated(tmp, data)
        resolution = resolve_run(
            ConfigLayer(loaded), overrides=Overrides(dry_run="client"), new_id=lambda: "0" * 24
        )
        objects = render(resolution.intent)
    except TauError as error:
        assert error.one_line()
        return
    validate_rendered(objects)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(config_fields, config_fields)
def test_config_hash_changes_iff_the_validated_config_changes(tmp_path_factory, a, b):
    from tau.errors import TauError

    tmp = tmp_path_factory.mktemp("hash")
    try:
        first = load_generated(tmp, a)
        second = load_generated(tmp, b)
    except TauError:
        return
    same_config = first.config.model_dump(exclude_defaults=True) == second.config.model_dump(
        exclude_defaults=True
    )
    assert (first.config_hash == second.config_hash) == same_config
    again = load_generated(tmp, a)
    assert again.config_hash == first.config_hash
