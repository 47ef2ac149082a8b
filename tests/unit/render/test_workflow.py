"""Managed workflow manifests render the reviewed RayJob/Job goldens, valid for KubeRay."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tau.errors import UsageError, ValidationError
from tau.render import redact_secrets, render
from tau.resolve.layers import Overrides, WorkspaceLayer
from tau.resolve.workflow import resolve_workflow
from tau.runconfig import load

from . import golden
from .kuberay import pruned_fields, rayjob_schema, rayjob_validator
from .schema import validate_rendered

TRAINER = b"import sys\nprint('training', sys.argv[1:])\n"
WORKSPACE = WorkspaceLayer(
    name="research",
    namespace="research",
    queue="research-lq",
    service_account="research-runner",
    workload_identity=True,
    workspace_id="0f0e0d0c-0000-4000-8000-000000000001",
)

CPU_QUICKSTART = {
    "schema_version": 1,
    "name": "aks-cpu-quickstart",
    "run": {"entrypoint": "train.py", "workload_kind": "rayjob"},
    "resource_naming": {"prefix": "tau"},
    "compute": {
        "gpus": 0,
        "cpus": 1,
        "memory": "12Gi",
        "workers": 5,
        "worker_cpus": 2,
        "worker_memory": "4Gi",
    },
    "runtime": {
        "image": "mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.54.0",
        "pip": ["PyYAML>=6.0", "torch>=2.4.0"],
    },
}
GPU_TRAIN = {
    "schema_version": 1,
    "name": "sft",
    "run": {"entrypoint": "train.py", "workload_kind": "rayjob", "smoke_pairs": 16},
    "compute": {"gpus": 8, "workers": 2},
    "runtime": {
        "pip": ["transformers==4.46.0"],
        "env": [
            {"name": "WANDB_MODE", "value": "offline"},
            {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
        ],
    },
    "storage": {
        "data_pvc": "training-data",
        "mounts": [{"name": "refs", "mountPath": "/refs", "pvc": "refs", "readOnly": True}],
    },
    "policy": {"gpu_class": "h100-80gb", "team": "nlp", "lane": "training"},
    "research": {"experiment": "sft-round-1"},
}
EVAL = {
    "schema_version": 1,
    "name": "sft-eval",
    "eval": {"cpu_workers": 3, "upstream": "sft"},
    "run": {"entrypoint": "train.py"},
    "compute": {"gpus": 1},
    "runtime": {"pip": []},
    "storage": {"data_pvc": "training-data"},
}
JOB = {
    "schema_version": 1,
    "name": "probe",
    "run": {"entrypoint": "train.py"},
    "compute": {"gpus": 1, "cpus": 4, "memory": "16Gi"},
    "runtime": {"pip": ["numpy"]},
    "storage": {"data_pvc": "training-data"},
}
KEY_VAULT = {
    **copy.deepcopy(CPU_QUICKSTART),
    "name": "kv-demo",
    "runtime": {**CPU_QUICKSTART["runtime"], "env_kv": {"HF_TOKEN": "hf-token", "API_KEY": "api"}},
}
KV_FLAGS = {
    "key_vault": "research-kv",
    "tenant_id": "72f988bf-0000-4000-8000-000000000000",
    "workload_identity_client_id": "5e0c0a1b-0000-4000-8000-000000000002",
}


def write(tmp_path: Path, manifest: dict[str, Any], name: str = "tau.yaml") -> Path:
    (tmp_path / "train.py").write_bytes(TRAINER)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return path


def resolved(tmp_path: Path, manifest: dict[str, Any], **flags: str):
    loaded = load(write(tmp_path, manifest))
    return resolve_workflow(
        loaded,
        overrides=Overrides(**flags),
        workspace=WORKSPACE,
        argv=("tau", "run", "--config", "tau.yaml"),
    )


CASES = {
    "cpu-quickstart": (CPU_QUICKSTART, {}),
    "gpu-train": (GPU_TRAIN, {}),
    "eval": (EVAL, {}),
    "job": (JOB, {}),
    "key-vault": (KEY_VAULT, KV_FLAGS),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_manifest_renders_its_golden(tmp_path: Path, case: str) -> None:
    manifest, flags = CASES[case]
    objects = render(resolved(tmp_path, manifest, **flags).intent)
    validate_rendered([o for o in objects if o["kind"] != "SecretProviderClass"])
    golden.check(f"workflow-{case}", golden.dump(redact_secrets(objects)))


@pytest.mark.parametrize("case", sorted(c for c in CASES if c != "job"))
def test_rayjobs_satisfy_the_kuberay_crd_and_lose_no_field(tmp_path: Path, case: str) -> None:
    manifest, flags = CASES[case]
    rayjob = render(resolved(tmp_path, manifest, **flags).intent)[0]
    assert [e.message for e in rayjob_validator().iter_errors(rayjob)] == []
    assert pruned_fields(rayjob, rayjob_schema()) == []


def test_the_cpu_quickstart_is_a_five_pod_gang_with_four_ddp_workers(tmp_path: Path) -> None:
    rayjob = render(resolved(tmp_path, CPU_QUICKSTART).intent)[0]
    assert rayjob["metadata"]["name"] == "tau-aks-cpu-quickstart"
    cluster = rayjob["spec"]["rayClusterSpec"]
    (group,) = cluster["workerGroupSpecs"]
    assert group["replicas"] == group["minReplicas"] == group["maxReplicas"] == 4
    assert group["rayStartParams"] == {"num-cpus": "2", "num-gpus": "0"}
    head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert head["resources"]["requests"] == {"cpu": "1", "memory": "12Gi"}
    env = {e["name"]: e.get("value") for e in head["env"]}
    assert env["TAU_WORLD_SIZE"] == "4" and env["TAU_DIST_BACKEND"] == "gloo"
    assert rayjob["spec"]["entrypoint"].splitlines()[-1] == (
        "exec python3 /script/train.py --manifest /manifest/aks-cpu-quickstart.yaml --smoke-pairs 0"
    )
    assert cluster["rayVersion"] == "2.54.0"
    assert yaml.safe_load(rayjob["spec"]["runtimeEnvYAML"]) == {
        "pip": ["PyYAML>=6.0", "torch>=2.4.0"]
    }


def test_the_trainer_and_manifest_ship_in_digest_checked_payloads(tmp_path: Path) -> None:
    import base64
    import hashlib
    import json

    rayjob = render(resolved(tmp_path, CPU_QUICKSTART).intent)[0]
    head = rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    inits = {c["name"]: {e["name"]: e["value"] for e in c["env"]} for c in head["initContainers"]}
    script = json.loads(base64.b64decode(inits["tau-script-payload"]["TAU_PAYLOAD_B64"]))
    assert {f["name"]: base64.b64decode(f["data"]) for f in script["files"]} == {
        "train.py": TRAINER
    }
    manifest = json.loads(base64.b64decode(inits["tau-manifest-payload"]["TAU_PAYLOAD_B64"]))
    shipped = yaml.safe_load(base64.b64decode(manifest["files"][0]["data"]))
    assert manifest["files"][0]["name"] == "aks-cpu-quickstart.yaml"
    assert shipped == CPU_QUICKSTART
    raw = base64.b64decode(inits["tau-script-payload"]["TAU_PAYLOAD_B64"])
    annotations = rayjob["metadata"]["annotations"]
    assert annotations["tau.azure.com/script-payload-digest"] == hashlib.sha256(raw).hexdigest()
    worker = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]
    assert [c["name"] for c in worker["initContainers"]] == ["tau-script-payload"]


def test_the_manifest_copy_hides_which_secrets_feed_the_run(tmp_path: Path) -> None:
    import base64
    import json

    rayjob = render(resolved(tmp_path, GPU_TRAIN).intent)[0]
    head = rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    payload = next(c for c in head["initContainers"] if c["name"] == "tau-manifest-payload")
    envelope = json.loads(base64.b64decode(payload["env"][0]["value"]))
    shipped = base64.b64decode(envelope["files"][0]["data"]).decode()
    assert (
        "hf"
        not in yaml.safe_load(shipped)["runtime"]["env"][1]["valueFrom"]["secretKeyRef"].values()
    )
    assert "<redacted>" in shipped


def test_key_vault_renders_a_secret_provider_class_for_the_workload_identity(tmp_path) -> None:
    rayjob, spc = render(resolved(tmp_path, KEY_VAULT, **KV_FLAGS).intent)
    assert spc["kind"] == "SecretProviderClass"
    assert spc["metadata"]["name"] == "tau-kv-demo-kv"
    parameters = spc["spec"]["parameters"]
    assert parameters["keyvaultName"] == "research-kv"
    assert parameters["tenantId"] == KV_FLAGS["tenant_id"]
    assert parameters["clientID"] == KV_FLAGS["workload_identity_client_id"]
    assert yaml.safe_load(parameters["objects"]) == {
        "array": [
            "objectName: api\nobjectType: secret\n",
            "objectName: hf-token\nobjectType: secret\n",
        ]
    }
    assert spc["spec"]["secretObjects"] == [
        {
            "secretName": "tau-kv-demo-kv-sync",
            "type": "Opaque",
            "data": [
                {"key": "API_KEY", "objectName": "api"},
                {"key": "HF_TOKEN", "objectName": "hf-token"},
            ],
        }
    ]
    head = rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]
    assert head["metadata"]["labels"]["azure.workload.identity/use"] == "true"
    assert head["spec"]["serviceAccountName"] == "research-runner"
    env = {e["name"]: e for e in head["spec"]["containers"][0]["env"]}
    assert env["HF_TOKEN"]["valueFrom"] == {
        "secretKeyRef": {"name": "tau-kv-demo-kv-sync", "key": "HF_TOKEN"}
    }
    volume = next(v for v in head["spec"]["volumes"] if v["name"] == "kv-secrets")
    assert volume["csi"]["volumeAttributes"] == {"secretProviderClass": "tau-kv-demo-kv"}
    redacted = redact_secrets([spc])[0]
    assert "hf-token" not in yaml.safe_dump(redacted)
    assert redacted["spec"]["parameters"]["keyvaultName"] == "research-kv"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            {"tenant_id": "t", "workload_identity_client_id": "c"},
            "bare secret name 'api' needs --key-vault",
        ),
        ({"key_vault": "kv"}, "needs --tenant-id and --workload-identity-client-id"),
    ],
)
def test_key_vault_flags_are_required(tmp_path: Path, flags, message) -> None:
    with pytest.raises(UsageError, match=message):
        resolved(tmp_path, KEY_VAULT, **flags)


def test_key_vault_flags_without_env_kv_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"feed runtime.env_kv, which .* does not declare"):
        resolved(tmp_path, CPU_QUICKSTART, key_vault="kv")


def test_entries_in_two_vaults_are_refused(tmp_path: Path) -> None:
    manifest = copy.deepcopy(KEY_VAULT)
    manifest["runtime"]["env_kv"] = {"A": "kv-a/one", "B": "kv-b/two"}
    with pytest.raises(ValidationError) as caught:
        resolved(tmp_path, manifest, **KV_FLAGS)
    assert "must resolve to one Key Vault (got kv-a, kv-b)" in "\n".join(caught.value.problems)


def test_a_positional_run_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"take the run name from the config file"):
        resolved(tmp_path, CPU_QUICKSTART, run_name="other")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"schema_version": 2}, "schema_version must be 1, got 2"),
        ({"name": "Bad_Name"}, "must be a DNS label"),
        ({"name": "x" * 44}, "the RayJob limit is 47"),
        ({"compute": {"gpus": 9}}, "compute.gpus must be between 0 and 8"),
        ({"runtime": {"image": "ray:2.54.0"}}, "runtime.pip is required"),
        ({"runtime": {"pip": []}}, "a CPU RayJob (compute.gpus: 0) requires runtime.image"),
        ({"run": {"workload_kind": "rayjob"}}, "run.entrypoint is required"),
        ({"run": {"entrypoint": "train.py", "workload_kind": "job"}}, "cannot be multi-node"),
        ({"artifacts": {"checkpoint": "../x"}}, "artifacts.checkpoint '../x' must be a clean"),
        (
            {"storage": {"mounts": [{"name": "data", "mountPath": "/data/x", "pvc": "p"}]}},
            "storage.mounts[0].name 'data' is reserved by Tau",
        ),
        (
            {
                "runtime": {
                    "image": "i",
                    "pip": [],
                    "env": [{"name": "TAU_DATA_DIR", "value": "/x"}],
                }
            },
            "TAU_DATA_DIR is managed by Tau",
        ),
    ],
)
def test_manifest_rules_are_reported_together(tmp_path: Path, change, problem) -> None:
    manifest = {**copy.deepcopy(CPU_QUICKSTART), **change}
    with pytest.raises(ValidationError) as caught:
        resolved(tmp_path, manifest)
    assert any(problem in p for p in caught.value.problems), caught.value.problems


def test_an_eval_manifest_gets_its_upstream_checkpoint(tmp_path: Path) -> None:
    rayjob = render(resolved(tmp_path, EVAL).intent)[0]
    assert rayjob["metadata"]["labels"]["tau.azure.com/workload-kind"] == "rayjob-eval"
    groups = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert [(g["groupName"], g["replicas"]) for g in groups] == [
        ("tau-sft-eval-gpu", 1),
        ("tau-sft-eval-cpu", 3),
    ]
    env = {e["name"]: e.get("value") for e in groups[0]["template"]["spec"]["containers"][0]["env"]}
    assert (
        env["TAU_UPSTREAM_CHECKPOINT"]
        == "/data/checkpoints/finetunes/sft/artifacts/last.safetensors"
    )


def test_offline_client_dry_run_renders_placeholders_and_warns(tmp_path: Path) -> None:
    loaded = load(write(tmp_path, CPU_QUICKSTART))
    resolution = resolve_workflow(loaded, overrides=Overrides(namespace="ns", dry_run="client"))
    assert resolution.intent.queue == "tau-unresolved-local-queue"
    assert "could not resolve queue" in resolution.warnings[0]
    with pytest.raises(ValidationError, match=r"queue is unresolved"):
        resolve_workflow(loaded, overrides=Overrides(namespace="ns", dry_run="server"))


def test_a_workspace_namespace_conflict_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"conflicts with TauWorkspace 'research' target"):
        resolved(tmp_path, CPU_QUICKSTART, namespace="elsewhere")


def test_the_config_hash_is_the_manifest_bytes(tmp_path: Path) -> None:
    import hashlib

    path = write(tmp_path, CPU_QUICKSTART)
    intent = resolve_workflow(load(path), workspace=WORKSPACE).intent
    assert intent.provenance.config_hash == hashlib.sha256(path.read_bytes()).hexdigest()


def test_workflow_file_delegates_to_the_manifest(tmp_path: Path) -> None:
    write(tmp_path, CPU_QUICKSTART, "flow.yaml")
    (tmp_path / "helper.py").write_text("X = 1\n")
    wrapper = tmp_path / "tau.yaml"
    wrapper.write_text(
        yaml.safe_dump(
            {
                "name": "wrapper",
                "workflow": {"file": "flow.yaml", "extra_scripts": ["helper.py"], "smoke_pairs": 8},
                "runtime": {"env_kv": {"HF_TOKEN": "kv/hf"}},
            }
        )
    )
    flags = {k: v for k, v in KV_FLAGS.items() if k != "key_vault"}
    intent = resolve_workflow(
        load(wrapper), overrides=Overrides(**flags), workspace=WORKSPACE
    ).intent
    assert intent.name == "tau-aks-cpu-quickstart"
    assert intent.smoke_pairs == 8
    assert dict(intent.extra_scripts) == {"helper.py": b"X = 1\n"}
    assert intent.key_vault is not None and intent.key_vault.vault == "kv"
    assert intent.main_script == TRAINER


def test_a_wrapper_forwards_its_run_block_and_policy_to_the_manifest(tmp_path: Path) -> None:
    write(tmp_path, JOB, "flow.yaml")
    wrapper = {
        "workflow": {"file": "flow.yaml"},
        "run": {"workload_kind": "rayjob", "smoke_pairs": 4},
        "policy": {"queue": "research-lq"},
    }
    (tmp_path / "tau.yaml").write_text(yaml.safe_dump(wrapper))
    resolution = resolve_workflow(load(tmp_path / "tau.yaml"), workspace=WORKSPACE)
    assert resolution.intent.kind == "rayjob"
    assert resolution.intent.smoke_pairs == 4
    assert resolution.intent.queue == "research-lq"
    assert str(resolution.provenance.source_of("queue")).endswith("flow.yaml (policy.queue)")


def test_a_wrapper_policy_that_contradicts_the_manifest_is_refused(tmp_path: Path) -> None:
    manifest = {**CPU_QUICKSTART, "policy": {"queue": "manifest-lq"}}
    write(tmp_path, manifest, "flow.yaml")
    (tmp_path / "tau.yaml").write_text(
        yaml.safe_dump({"workflow": {"file": "flow.yaml"}, "policy": {"queue": "wrapper-lq"}})
    )
    with pytest.raises(ValidationError) as raised:
        resolve_workflow(load(tmp_path / "tau.yaml"), workspace=WORKSPACE)
    assert "policy.queue 'wrapper-lq' conflicts with the manifest's 'manifest-lq'" in str(
        raised.value
    )


def test_a_workflow_file_wrapper_cannot_set_fields_it_would_ignore(tmp_path: Path) -> None:
    write(tmp_path, CPU_QUICKSTART, "flow.yaml")
    wrapper = tmp_path / "tau.yaml"
    wrapper.write_text(
        yaml.safe_dump({"workflow": {"file": "flow.yaml"}, "compute": {"cpu_request": "2"}})
    )
    with pytest.raises(ValidationError, match=r"would have no effect: compute.cpu_request"):
        resolve_workflow(load(wrapper), workspace=WORKSPACE)


def test_a_workflow_file_that_is_not_a_manifest_is_refused(tmp_path: Path) -> None:
    (tmp_path / "other.yaml").write_text("name: x\nengine: job\nentrypoint: train.py\n")
    (tmp_path / "train.py").write_bytes(TRAINER)
    wrapper = tmp_path / "tau.yaml"
    wrapper.write_text(yaml.safe_dump({"workflow": {"file": "other.yaml"}}))
    with pytest.raises(ValidationError, match=r"is not a managed workflow manifest"):
        resolve_workflow(load(wrapper), workspace=WORKSPACE)


def test_secret_payloads_are_refused_as_unsupported(tmp_path: Path) -> None:
    manifest = {**copy.deepcopy(CPU_QUICKSTART), "workflow": {"secret_payload": "s.json"}}
    with pytest.raises(UsageError, match=r"workflow.secret_payload is not supported"):
        resolved(tmp_path, manifest)


EXAMPLE = Path(__file__).resolve().parents[3] / "examples/aks-cpu-quickstart/tau.yaml"


def tau(*args: str, cwd: Path | None = None):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "tau", *args], capture_output=True, text=True, cwd=cwd, check=False
    )


def test_the_aks_cpu_quickstart_example_renders_offline() -> None:
    result = tau("run", "--config", str(EXAMPLE), "--namespace", "taugrid-default",
                 "--dry-run=client", "-o", "json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    import json

    (rayjob,) = json.loads(result.stdout)
    assert rayjob["metadata"]["name"] == "tau-aks-cpu-quickstart"
    assert rayjob["metadata"]["namespace"] == "taugrid-default"
    assert rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] == 4
    assert [e.message for e in rayjob_validator().iter_errors(rayjob)] == []
    assert "could not resolve queue" in result.stderr
    compile(EXAMPLE.with_name("train.py").read_text(), "train.py", "exec")


def test_key_vault_flags_on_a_direct_config_are_refused(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print(1)\n")
    (tmp_path / "tau.yaml").write_text("name: d\nengine: job\nentrypoint: train.py\n")
    result = tau("run", "--dry-run=client", "--key-vault", "kv", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "error: --key-vault: runtime.env_kv is only supported for workflow.file managed "
        "configs; direct Job/RayJob configs must remove runtime.env_kv or use workflow.file"
    )


def test_resume_refuses_a_managed_manifest(tmp_path: Path) -> None:
    write(tmp_path, CPU_QUICKSTART)
    result = tau("run", "resume", "tau-aks-cpu-quickstart", "--config", "tau.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert "tau run resume restarts direct run configs" in result.stderr
