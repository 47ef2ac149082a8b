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


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_intents())
def test_render_yields_valid_objects_or_a_render_error(intent):
    try:
        objects = render(intent)
    except RenderError as error:
        assert error.one_line()
        return
    validate_rendered(objects)
