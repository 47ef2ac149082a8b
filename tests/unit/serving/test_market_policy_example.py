"""examples/market-policy: the trainer and its documented serve command both render offline,
and the serving code computes the exported network exactly."""

from __future__ import annotations

import importlib.util
import json
import math
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tau import keys

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "market-policy"
TAU = str(Path(sys.executable).parent / "tau")


def tau(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TAU, *args], cwd=REPO, capture_output=True, text=True, check=False)


def readme_command(verb: str) -> list[str]:
    text = (EXAMPLE / "README.md").read_text()
    (block,) = [
        b for b in re.findall(r"```bash\n(.*?)```", text, re.S) if f"tau serve {verb} " in b
    ]
    line = " ".join(part.rstrip("\\").strip() for part in block.splitlines() if part.strip())
    return shlex.split(line)[1:]


def test_the_trainer_renders_a_one_gpu_h200_rayjob():
    result = tau("run", "--config", "examples/market-policy/tau.yaml", "--dry-run=client")
    assert result.returncode == 0, result.stderr
    (rayjob,) = yaml.safe_load_all(result.stdout)
    assert rayjob["kind"] == "RayJob"
    (workers,) = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert workers["replicas"] == 1 and workers["rayStartParams"]["num-gpus"] == "1"
    assert workers["template"]["spec"]["nodeSelector"][keys.GPU_CLASS] == "h200-141gb"
    assert yaml.safe_load(rayjob["spec"]["runtimeEnvYAML"])["pip"] == [
        "torch==2.11.0",
        "numpy==2.1.3",
    ]


def test_the_documented_serve_command_renders_offline_out_of_the_box():
    from render.kuberay import pruned_fields, rayservice_schema, rayservice_validator
    from render.schema import validate_rendered

    result = tau(*readme_command("deploy"))
    assert result.returncode == 0, result.stderr
    (rayservice,) = yaml.safe_load_all(result.stdout)
    validate_rendered([rayservice])
    assert list(rayservice_validator().iter_errors(rayservice)) == []
    assert pruned_fields(rayservice, rayservice_schema()) == []
    (app,) = yaml.safe_load(rayservice["spec"]["serveConfigV2"])["applications"]
    assert app["import_path"] == "serve:app"
    assert app["runtime_env"]["env_vars"]["TAU_MODEL_PATH"] == (
        "/data/market-policy/tau-market-policy.json"
    )
    head = rayservice["spec"]["rayClusterConfig"]["headGroupSpec"]["template"]["spec"]
    assert head["volumes"] == [
        {
            "name": "tau-checkpoint",
            "persistentVolumeClaim": {"claimName": "workspace-data", "readOnly": True},
        }
    ]
    assert rayservice["metadata"]["labels"][keys.PROFILE] == "model-serve"
    assert rayservice["spec"]["rayClusterConfig"]["rayVersion"] == "2.56.0"


@pytest.fixture(scope="module")
def serve_module():
    spec = importlib.util.spec_from_file_location("market_policy_serve", EXAMPLE / "serve.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def export(hidden_weight, hidden_bias, policy_weight, policy_bias, value_weight, value_bias):
    return {
        "format": "tau-market-policy/v1",
        "architecture": {
            "inputs": 2,
            "hidden": 2,
            "activation": "tanh",
            "actions": ["Short", "Flat", "Long"],
        },
        "layers": {
            "hidden": {"weight": hidden_weight, "bias": hidden_bias},
            "policy": {"weight": policy_weight, "bias": policy_bias},
            "value": {"weight": value_weight, "bias": value_bias},
        },
    }


def test_the_served_policy_is_the_exported_network(serve_module, tmp_path):
    data = export(
        [[1.0, 0.0], [0.0, -1.0]],
        [0.0, 0.5],
        [[1.0, 0.0], [0.0, 0.0], [-1.0, 1.0]],
        [0.0, 0.1, 0.0],
        [[0.5, -0.5]],
        [0.25],
    )
    (tmp_path / "tau-market-policy.json").write_text(json.dumps(data))
    policy = serve_module.Policy.load(tmp_path)  # a directory holding the export
    got = policy.predict([0.3, -0.2])
    h = [math.tanh(0.3), math.tanh(0.2 + 0.5)]
    logits = [h[0], 0.1, -h[0] + h[1]]
    exp = [math.exp(v) for v in logits]
    assert got["probabilities"] == pytest.approx(
        {a: e / sum(exp) for a, e in zip(("Short", "Flat", "Long"), exp, strict=True)}
    )
    assert got["action"] == ("Short", "Flat", "Long")[logits.index(max(logits))]
    assert got["predicted_reward"] == pytest.approx(0.5 * h[0] - 0.5 * h[1] + 0.25)


def test_the_served_policy_refuses_foreign_exports_and_bad_observations(serve_module):
    with pytest.raises(ValueError, match="not a tau-market-policy/v1 export"):
        serve_module.Policy({"format": "onnx"})
    policy = serve_module.Policy(
        export([[1, 0], [0, 1]], [0, 0], [[1, 0]] * 3, [0] * 3, [[1, 1]], [0])
    )
    with pytest.raises(ValueError, match="observation must be 2 finite numbers"):
        policy.predict([1.0])
    with pytest.raises(ValueError, match="observation must be 2 finite numbers"):
        policy.predict([1.0, float("nan")])
