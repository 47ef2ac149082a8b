"""`@tau.train` / `@tau.eval`: options become the reviewed managed manifests; calls run locally."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

import tau
from tau.errors import UsageError

GOLDEN = Path(__file__).parent / "golden"


def golden(name: str, data: dict) -> None:
    text = yaml.safe_dump(data, sort_keys=False)
    path = GOLDEN / f"{name}.yaml"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden {path.name}; run with UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(), f"{path.name} differs; review, then UPDATE_GOLDEN=1"


def test_a_train_decorator_describes_its_managed_manifest() -> None:
    @tau.train(
        name="sft",
        gpus=8,
        workers=2,
        pip=["transformers==4.46.0"],
        env={"WANDB_MODE": "offline", "HF_TOKEN": tau.secret_ref("hf", "token")},
        env_kv={"API_KEY": "research-kv/api"},
        data_pvc="training-data",
        mounts=[tau.pvc_mount("refs", pvc="refs", mount_path="/refs", read_only=True)],
        cpu_request="4",
        memory_request="32Gi",
        worker_memory_limit="256Gi",
        namespace="research",
        team="nlp",
        lane="training",
        gpu_class="h100-80gb",
        node_selector=["pool=gpu"],
        model="llama-sft",
        base_model="llama-3-8b",
        task="chat",
        tags={"round": "1"},
        primary_metric="eval.loss",
        metric_direction="lower",
        experiment="sft-round-1",
        smoke_pairs=32,
        extra_manifest={"research": {"notes": "first pass"}},
    )
    def sft(ctx: tau.Ctx) -> None:
        """Fine-tune."""

    golden("train-sft", sft.manifest())
    assert sft.__doc__ == "Fine-tune." and sft.name == "sft" and sft.kind == "train"


def test_an_eval_decorator_records_its_upstream_train() -> None:
    @tau.eval(name="sft-eval", after="sft", gpus=1, cpu_workers=4, pip=[])
    def score(ctx: tau.Ctx) -> None:
        pass

    manifest = score.manifest()
    golden("eval-sft", manifest)
    assert manifest["eval"] == {"cpu_workers": 4, "upstream": "sft"}
    assert manifest["run"]["workload_kind"] == "rayjob-eval"


@pytest.mark.parametrize(
    ("kind", "options", "message"),
    [
        ("train", {}, "name=None must be a DNS label"),
        ("train", {"name": "Bad"}, "must be a DNS label"),
        ("train", {"name": "x", "gpus": 9}, "gpus must be between 0 and 8"),
        ("train", {"name": "x", "gpus": True}, "gpus must be an integer"),
        ("train", {"name": "x", "lane": "eval"}, "lane='eval' is for evals"),
        ("train", {"name": "x", "workload_kind": "rayjob-eval"}, "workload_kind must be one of"),
        ("train", {"name": "x", "after": "y"}, "unknown option after"),
        ("train", {"name": "x", "colour": "red"}, "unknown option colour"),
        ("train", {"name": "x", "node_selector": ["novalue"]}, "must be key=value"),
        ("train", {"name": "x", "env": {"A": 1}}, "must be a string or tau.secret_ref"),
        ("train", {"name": "x", "extra_manifest": {"compute": {}}}, "cannot override compute"),
        ("train", {"name": "x", "extra_scripts": ["a.py:train.py"]}, "train.py is reserved"),
        ("eval", {"name": "x", "gpus": 0}, "gpus must be >= 1 for an eval"),
        ("eval", {"name": "x", "workers": 2}, "unknown option workers"),
    ],
)
def test_bad_options_are_refused_when_the_decorator_runs(kind, options, message) -> None:
    with pytest.raises(UsageError, match=message):
        getattr(tau, kind)(**options)


def test_the_function_must_take_the_ctx() -> None:
    with pytest.raises(UsageError, match="must take the Ctx as its first parameter"):

        @tau.train(name="x")
        def nothing() -> None:
            pass


def test_calling_a_train_runs_it_here_and_leaves_metrics_and_a_model_record(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)

    @tau.train(name="demo", gpus=0, model="demo", primary_metric="loss")
    def fit(ctx: tau.Ctx, lr: float) -> float:
        assert not ctx.is_remote and ctx.name == "demo"
        ctx.checkpoint_dir.mkdir(parents=True)
        ctx.checkpoint_path.write_text("weights")
        ctx.report(loss=0.5 * lr)
        return lr

    assert fit(0.2) == 0.2
    run = tmp_path / ".tau/runs/demo"
    assert json.loads((run / "metrics.json").read_text()) == {"loss": 0.1}
    record = json.loads((run / "model.json").read_text())
    assert record["model"] == "demo" and record["run"] == "demo"
    assert record["primary_metric"] == {"name": "loss", "value": 0.1, "direction": None}
    assert (run / "artifacts/last.safetensors").read_text() == "weights"
    # The checkpoint the function saved is what serving --from-model resolves to.
    assert record["artifacts"] == [
        {
            "name": "checkpoint",
            "durable_path": str(run / "artifacts/last.safetensors"),
            "status": "ready",
            "kind": "file",
        }
    ]


def test_a_model_record_names_no_checkpoint_when_the_function_saved_none(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)

    @tau.train(name="bare", gpus=0, model="bare")
    def fit(ctx: tau.Ctx) -> None:
        ctx.report(loss=1)

    fit()
    record = json.loads((tmp_path / ".tau/runs/bare/model.json").read_text())
    assert "artifacts" not in record


def test_calling_an_eval_takes_the_upstream_checkpoint_as_a_keyword(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @tau.eval(name="demo-eval")
    def score(ctx: tau.Ctx) -> Path | None:
        return ctx.upstream_checkpoint

    assert score(upstream_checkpoint="/ckpt/last") == Path("/ckpt/last")
    assert score() is None
    with pytest.raises(UsageError, match="upstream_checkpoint is the SDK's keyword"):

        @tau.eval(name="y")
        def clash(ctx, upstream_checkpoint):
            pass


@pytest.mark.parametrize("value", [True, "1", float("nan")])
def test_report_takes_finite_numbers_only(value) -> None:
    with pytest.raises((TypeError, ValueError)):
        tau.Ctx(name="x").report(loss=value)


def test_serve_handles_map_to_tau_serve_deploy() -> None:
    handle = tau.serve("ranker", profile="model-serve", from_model="ranker:prod", replicas=2)
    assert handle.command(dry_run="client") == [
        "serve", "deploy", "ranker", "--kind", "rayservice", "--profile", "model-serve",
        "--replicas", "2", "--from-model", "ranker:prod", "--dry-run=client",
    ]  # fmt: skip
    with pytest.raises(UsageError, match="at most one of"):
        tau.serve("x", profile="p", from_model="a:b", checkpoint="c")
    with pytest.raises(UsageError, match="profile is required"):
        tau.serve("x", profile="")


def test_import_tau_stays_light() -> None:
    import subprocess
    import sys

    loaded = "print('tau.sdk' in sys.modules)"
    code = f"import sys, tau; {loaded}; tau.train; {loaded}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
