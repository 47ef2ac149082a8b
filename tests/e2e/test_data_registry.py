"""The dataset and model registries on a workspace PVC, with pods that really run.

Everything runs on the local cluster's real node (kubelet + containerd, local-path PVC):
`tau data` registers a dataset from files on the workspace PVC through helper pods the
researcher creates there (placed by TAU_HELPER_NODE_SELECTOR/_TOLERATIONS, image from the
cluster registry via TAU_HELPER_IMAGE: no KWOK node matches, and only a real container can
print the PVC's bytes); a run references it as `dataset:mnist@latest` and its pod reads the
files at the pinned path. Two runs leave a loss and a checkpoint, `tau data model best` picks
the lower one, and `tau serve deploy --from-model digits:prod` serves that checkpoint through
its Service. The SDK's staged train (a Job on the real node reading the dataset) succeeds
before its eval is submitted with the train's checkpoint (the eval needs a GPU, which only
KWOK's fake nodes have here; test_data_workflows.py follows it there).
"""

from __future__ import annotations

import json
import shlex
import textwrap
from collections.abc import Iterator

import pytest
import yaml
from controller_harness import wait_for
from lifecycle_env import Workspace, workspace_setup
from real_node import offer_real_node, shell_pod, wait_for_phase
from tau_cli import run_tau

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

PVC = "training-data"
REAL_PROFILE = "e2e.real"
FILES = {"train.txt": "0 1 2 3\n", "test.txt": "4 5\n"}
TRAINER = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path

    data = Path(os.environ["MNIST_DIR"])
    for name in sorted(p.name for p in data.iterdir()):
        print(f"dataset file {name}: {(data / name).read_text().strip()}")
    out = Path(os.environ["TAU_OUTPUT_DIR"])
    (out / "artifacts").mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps({"loss": float(os.environ["LOSS"])}))
    weights = out / "artifacts" / "best.txt"
    weights.write_text(f"weights-of-{out.name}\\n")
    index = {"schema_version": 1, "run": out.name, "artifacts": [
        {"name": "checkpoint", "durable_path": str(weights), "status": "ready", "kind": "file"}]}
    (out / "artifacts.json").write_text(json.dumps(index))
    print("MNIST_DIR", data)
    """
)
# The endpoint: the checkpoint `tau serve` resolved (TAU_MODEL_PATH) as its index page.
SERVER = (
    'mkdir -p /tmp/www && cp "$TAU_MODEL_PATH" /tmp/www/index.html && '
    "exec python3 -m http.server 8080 --directory /tmp/www"
)


@pytest.fixture(scope="module")
def ws(
    local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workspace]:
    for workspace in workspace_setup(local_cluster, tmp_path_factory.mktemp("data-registry")):
        offer_real_node(workspace, {REAL_PROFILE: {}})
        # Helper pods go where the real node's pods go: its taint, selector and registry.
        workspace.env.update(
            {
                "TAU_HELPER_IMAGE": local_cluster.images[fx.SHELL_IMAGE],
                "TAU_HELPER_NODE_SELECTOR": ",".join(
                    f"{k}={v}" for k, v in fx.REAL_NODE_SELECTOR.items()
                ),
                "TAU_HELPER_TOLERATIONS": (
                    f"{fx.REAL_NODE_TOLERATION['key']}={fx.REAL_NODE_TOLERATION['value']}:"
                    f"{fx.REAL_NODE_TOLERATION['effect']}"
                ),
            }
        )
        seed_the_pvc(local_cluster, workspace.namespace)
        yield workspace


def seed_the_pvc(cluster: LocalCluster, namespace: str) -> None:
    """The platform's claim, with a dataset's files uploaded to it (by a pod on the node)."""
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": PVC, "namespace": namespace},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": fx.STORAGE_CLASS,
            "resources": {"requests": {"storage": "64Mi"}},
        },
    }
    script = "set -eu\nmkdir -p /data/uploads/mnist\n" + "".join(
        f"printf '%s' {shlex.quote(body)} > /data/uploads/mnist/{name}\n"
        for name, body in FILES.items()
    )
    pod = shell_pod(
        cluster,
        "seed-mnist",
        script,
        volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": PVC}}],
        mounts=[{"name": "data", "mountPath": "/data"}],
    )
    pod["metadata"]["namespace"] = namespace
    cluster.apply([claim, pod])
    assert wait_for_phase(cluster, namespace, "seed-mnist", {"Succeeded", "Failed"}) == "Succeeded"


def digits_flow(ws: Workspace, name: str, loss: float, image: str) -> str:
    """A managed single-pod run on the real node that reads `dataset:mnist@latest`."""
    directory = ws.repo / "flows"
    directory.mkdir(exist_ok=True)
    (directory / "digits.py").write_text(TRAINER)
    manifest = {
        "schema_version": 1,
        "name": name,
        "run": {"entrypoint": "digits.py", "workload_kind": "job"},
        "compute": {"gpus": 0, "cpus": "100m", "memory": "128Mi"},
        "runtime": {
            "image": image,
            "pip": [],
            "env": [
                {"name": "MNIST_DIR", "value": "dataset:mnist@latest"},
                {"name": "LOSS", "value": str(loss)},
            ],
        },
        "storage": {"data_pvc": PVC},
        "policy": {"node_selector": dict(fx.REAL_NODE_SELECTOR)},
    }
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return str(path.relative_to(ws.repo))


def state(ws: Workspace, name: str) -> str:
    status = ws.tau("run", "status", name, "-o", "json")
    assert status.returncode == 0, status.stderr
    return json.loads(status.stdout)["status"]["state"]


def finishes(ws: Workspace, name: str) -> None:
    """Wait for the run to end; a failure carries its pods' state and logs."""
    done = wait_for(f"{name} to finish", lambda: state(ws, name) in ("succeeded", "failed") and
                    state(ws, name), 300)  # fmt: skip
    if done != "succeeded":
        pods = ws.get("pods", "-n", ws.namespace, "-l", f"job-name={name}") or {}
        statuses = [p.get("status") for p in pods.get("items") or []]
        logs = ws.tau("logs", name, "--all-containers").stdout
        raise AssertionError(f"{name} {done}: {json.dumps(statuses)[:3000]}\n{logs}")


def data(ws: Workspace, *args: str):
    return ws.tau("data", *args, "--pvc", PVC, timeout=300)


def serve(ws: Workspace, verb: str, name: str, *args: str):
    """`tau serve` as the platform handoff gives it: an explicit namespace and context."""
    context = yaml.safe_load(ws.cluster.kubeconfig.read_text())["current-context"]
    env = {**ws.env, "KUBECONFIG": str(ws.cluster.kubeconfig)}
    return run_tau("serve", verb, name, "-n", ws.namespace, "--context", context, *args,
                   cwd=ws.repo, env=env, timeout=300)  # fmt: skip


def ready(ws: Workspace, name: str) -> bool:
    status = serve(ws, "status", name, "--kind", "deployment", "-o", "json")
    assert status.returncode == 0, status.stderr
    record = json.loads(status.stdout)
    return record["ready"] == record["desired"] == 1


def fetch(ws: Workspace, host: str) -> str:
    """GET / from `host`:80 in a pod on the real node (cluster DNS, kube-proxy, the Service)."""
    script = (
        f"for i in $(seq 20); do printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 {host} 80"
        " | grep weights-of && exit 0; sleep 1; done; exit 1"
    )
    client = shell_pod(ws.cluster, "model-client", script)
    client["metadata"]["namespace"] = ws.namespace
    ws.cluster.apply([client])
    phase = wait_for_phase(ws.cluster, ws.namespace, "model-client", {"Succeeded", "Failed"})
    logs = ws.kubectl("logs", "model-client", "-n", ws.namespace)
    assert phase == "Succeeded", logs.stdout + logs.stderr
    return logs.stdout


def test_a_registered_dataset_reaches_the_run_that_references_it(
    ws: Workspace, local_images: dict
) -> None:
    registered = data(ws, "dataset", "register", "mnist@1", "--purpose", "eval",
                      "--from", "/data/uploads/mnist")  # fmt: skip
    assert registered.returncode == 0, registered.stderr
    assert registered.stdout.startswith("registered mnist@1 (sha256:")
    again = data(ws, "dataset", "register", "mnist@1", "--purpose", "eval", "--from",
                 "/data/uploads/mnist")  # fmt: skip
    assert again.returncode == 2 and "datasets are immutable" in again.stderr
    moved = data(ws, "dataset", "alias", "set", "mnist", "latest", "1", "--expect-absent")
    assert moved.returncode == 0, moved.stderr
    assert data(ws, "dataset", "verify", "mnist@1").returncode == 0
    listed = json.loads(data(ws, "dataset", "list", "-o", "json").stdout)
    assert [(d["name"], d["version"], d["prefix"]) for d in listed] == [
        ("mnist", "1", "uploads/mnist")
    ]
    helpers = ws.get("pods", "-n", ws.namespace, "-l", "tau.azure.com/managed-by=tau") or {}
    assert all(p["metadata"].get("deletionTimestamp") for p in helpers.get("items") or [])

    config = digits_flow(ws, "digits-a", 0.7, local_images["runtime"].reference)
    submitted = ws.tau("run", "--config", config)
    assert submitted.returncode == 0, submitted.stderr
    job = ws.get("job", "tau-digits-a", "-n", ws.namespace)
    recorded = json.loads(job["metadata"]["annotations"]["tau.azure.com/datasets"])
    assert [r["dataset"] for r in recorded] == ["mnist@1"]
    finishes(ws, "tau-digits-a")
    logs = ws.tau("logs", "tau-digits-a")
    assert logs.returncode == 0, logs.stderr
    assert "MNIST_DIR /data/uploads/mnist" in logs.stdout
    assert "dataset file train.txt: 0 1 2 3" in logs.stdout
    assert "dataset file test.txt: 4 5" in logs.stdout


def test_the_best_model_is_served_from_its_checkpoint_on_the_real_node(
    ws: Workspace, local_images: dict
) -> None:
    config = digits_flow(ws, "digits-b", 0.2, local_images["runtime"].reference)
    assert ws.tau("run", "--config", config).returncode == 0
    finishes(ws, "tau-digits-b")

    rebuilt = data(ws, "model", "index", "rebuild", "--model", "digits")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert rebuilt.stdout == "indexed 2 model run(s)\n"
    best = data(ws, "model", "best", "digits")
    assert best.returncode == 0, best.stderr
    assert best.stdout == "digits@digits-b\n"
    assert data(ws, "model", "alias", "set", "digits", "prod", "digits-b").stdout == (
        "digits@digits-b\n"
    )
    shown = json.loads(data(ws, "model", "show", "digits/digits-b").stdout)
    assert shown["metrics"] == {"loss": 0.2}
    assert shown["record_path"] == "/data/checkpoints/finetunes/digits-b/model.json"

    # Serving (the platform handoff's identity) resolves the alias through the registry on
    # the same PVC; the endpoint serves the checkpoint file it was given as TAU_MODEL_PATH.
    deploy = ["deploy", "digits-web", "--kind", "deployment", "--profile", REAL_PROFILE,
              "--image", local_images["runtime"].reference, "--command", "sh", "--arg", "-c",
              "--arg", SERVER, "--deployment-port", "8080", "--service-port", "80",
              "--readiness-path", "/", "--cpu", "50m", "--memory", "64Mi",
              "--checkpoint-pvc", PVC]  # fmt: skip
    unknown = serve(ws, *deploy, "--from-model", "digits:staging")
    assert unknown.returncode == 1
    assert "model alias digits:staging is not set" in unknown.stderr
    dry = serve(ws, *deploy, "--from-model", "digits:prod", "--dry-run=server")
    assert dry.returncode == 0, dry.stderr
    assert "server dry run accepted service digits-web" in dry.stdout
    assert ws.get("deployment", "digits-web", "-n", ws.namespace) is None

    deployed = serve(ws, *deploy, "--from-model", "digits:prod")
    assert deployed.returncode == 0, deployed.stderr
    pod = ws.get("deployment", "digits-web", "-n", ws.namespace)["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["TAU_MODEL_PATH"] == "/data/checkpoints/finetunes/digits-b/artifacts/best.txt"
    assert [v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]
            if "persistentVolumeClaim" in v] == [PVC]  # fmt: skip
    # No Kueue pod integration here: add the real pool's placement as its flavor would.
    pool = {"nodeSelector": dict(fx.REAL_NODE_SELECTOR), "tolerations": [fx.REAL_NODE_TOLERATION]}
    placement = {"spec": {"template": {"spec": pool}}}
    ws.kubectl("patch", "deployment", "digits-web", "-n", ws.namespace, "--type=strategic",
               "-p", json.dumps(placement))  # fmt: skip
    wait_for("the endpoint ready", lambda: ready(ws, "digits-web"), timeout=300)
    assert "weights-of-digits-b" in fetch(ws, f"digits-web.{ws.namespace}.svc.cluster.local")

    deleted = serve(ws, "delete", "digits-web", "--kind", "deployment")
    assert deleted.returncode == 0, deleted.stderr


SDK_MODULE = """
import os
from pathlib import Path

import tau

PLACE = {{"node_selector": {selector!r}, "data_pvc": {pvc!r}, "pip": [], "image": {image!r}}}


@tau.train(name="sdk-digits", gpus=0, workload_kind="job", model="sdkdigits",
           cpu_request="100m", memory_request="256Mi",
           env={{"MNIST_DIR": "dataset:mnist@latest"}}, **PLACE)
def train(ctx):
    data = Path(os.environ["MNIST_DIR"])
    numbers = [int(n) for n in (data / "train.txt").read_text().split()]
    print("sdk train read", numbers)
    ctx.checkpoint_path.parent.mkdir(parents=True, exist_ok=True)
    ctx.checkpoint_path.write_text(f"sum={{sum(numbers)}}")
    ctx.report(loss=1.0 / (1 + sum(numbers)))


@tau.eval(name="sdk-digits-eval", after="sdk-digits", gpus=1, image={image!r}, pip=[],
          data_pvc={pvc!r}, cpu_request="500m", memory_request="512Mi",
          worker_cpu_request="1", worker_memory_request="1Gi")
def evaluate(ctx):
    print(ctx.upstream_checkpoint.read_text())
"""


def test_the_sdk_train_runs_on_the_real_node_before_its_eval_is_submitted(
    ws: Workspace, local_images: dict
) -> None:
    module = ws.repo / "sdk_digits.py"
    module.write_text(SDK_MODULE.format(selector=dict(fx.REAL_NODE_SELECTOR), pvc=PVC,
                                        image=local_images["runtime"].reference))  # fmt: skip
    submitted = ws.tau("python", "submit", "sdk_digits.py", timeout=420)
    logs = ws.tau("logs", "tau-sdk-digits", "--all-containers")
    assert submitted.returncode == 0, submitted.stderr + logs.stdout + logs.stderr
    assert "waiting for tau-sdk-digits to succeed before its evals" in submitted.stderr
    assert state(ws, "tau-sdk-digits") == "succeeded"
    (pod,) = (ws.get("pods", "-n", ws.namespace, "-l", "job-name=tau-sdk-digits") or {})["items"]
    assert pod["spec"]["nodeName"] == fx.REAL_NODE
    assert "sdk train read [0, 1, 2, 3]" in logs.stdout, logs.stdout + logs.stderr

    # What the function reported is on the PVC, under the model its decorator named.
    rebuilt = data(ws, "model", "index", "rebuild", "--run", "sdk-digits")
    assert rebuilt.stdout == "indexed 1 model run(s)\n", rebuilt.stderr
    shown = json.loads(data(ws, "model", "show", "sdkdigits/sdk-digits").stdout)
    assert shown["metrics"] == {"loss": 1.0 / 7}
    checkpoint = "/data/checkpoints/finetunes/sdk-digits/artifacts/last.safetensors"
    assert [a["durable_path"] for a in shown["artifacts"]] == [checkpoint]

    evaluation = ws.get("rayjob", "tau-sdk-digits-eval", "-n", ws.namespace)
    gpu = evaluation["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    env = {e["name"]: e.get("value") for e in gpu["template"]["spec"]["containers"][0]["env"]}
    assert env["TAU_UPSTREAM_CHECKPOINT"] == checkpoint
