"""`tau data` end to end on a `file://` registry: what a researcher types and sees."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml


def tau(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tau", *args], capture_output=True, text=True, check=False
    )


@pytest.fixture
def data(tmp_path: Path) -> Path:
    for rel, body in {"train.jsonl": '{"x": 1}\n', "test.jsonl": '{"x": 2}\n'}.items():
        path = tmp_path / "uploads/mnist" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    return tmp_path


def registry(data: Path) -> list[str]:
    return ["--registry", f"file://{data}"]


def test_register_alias_show_and_ref(data: Path) -> None:
    reg = tau("data", "dataset", "register", "mnist@1", "--purpose", "eval", "--from",
              "/data/uploads/mnist", "--eval-task", "digits", *registry(data))  # fmt: skip
    assert reg.returncode == 0, reg.stderr
    assert reg.stdout.startswith("registered mnist@1 (sha256:")
    assert tau(
        "data", "dataset", "alias", "set", "mnist", "latest", "1", *registry(data)
    ).stdout == ("mnist:latest -> 1\n")
    assert tau("data", "dataset", "alias", "get", "mnist", "latest", *registry(data)).stdout == (
        "mnist@1\n"
    )
    shown = json.loads(
        tau("data", "dataset", "show", "mnist", "-o", "json", *registry(data)).stdout
    )
    assert (shown["version"], shown["eval"]["task"], shown["assurance"]) == (
        "1",
        "digits",
        "verified",
    )
    ref = yaml.safe_load(
        tau("data", "dataset", "ref", "mnist@latest", "-o", "yaml", *registry(data)).stdout
    )
    assert ref["modes"]["durable_mount"]["path"] == "/data/uploads/mnist"
    env = tau("data", "dataset", "ref", "mnist", "-o", "env", *registry(data)).stdout.splitlines()
    assert "MNIST_DATASET_PATH=/data/uploads/mnist" in env
    assert "MNIST_DATASET_VERSION=1" in env
    listed = json.loads(tau("data", "dataset", "list", "-o", "json", *registry(data)).stdout)
    assert [(d["name"], d["version"]) for d in listed] == [("mnist", "1")]


def rows(result: subprocess.CompletedProcess[str]) -> list[list[str]]:
    assert result.returncode == 0, result.stderr
    return [line.split() for line in result.stdout.splitlines()]


def test_ref_and_alias_get_print_a_table_of_their_document(data: Path) -> None:
    tau("data", "dataset", "register", "mnist@1", "--purpose", "eval", "--from", "uploads/mnist",
        *registry(data))  # fmt: skip
    tau("data", "dataset", "alias", "set", "mnist", "latest", "1", *registry(data))
    ref = json.loads(tau("data", "dataset", "ref", "mnist", *registry(data)).stdout)
    assert rows(tau("data", "dataset", "ref", "mnist", "-o", "table", *registry(data))) == [
        ["NAME", "VERSION", "PURPOSE", "RECOMMENDED", "PATH", "DIGEST"],
        ["mnist", "1", "eval", "durable_mount", "/data/uploads/mnist", ref["digest"]],
    ]
    alias = json.loads(
        tau("data", "dataset", "alias", "get", "mnist", "latest", "-o", "json", *registry(data))
        .stdout
    )  # fmt: skip
    got = tau("data", "dataset", "alias", "get", "mnist", "latest", "-o", "table", *registry(data))
    assert rows(got) == [
        ["NAME", "ALIAS", "VERSION", "DIGEST", "UPDATED"],
        ["mnist", "latest", "1", ref["digest"], alias["updated_at"]],
    ]


def test_registering_twice_is_refused_with_exit_2(data: Path) -> None:
    args = (
        "data",
        "dataset",
        "register",
        "mnist@1",
        "--purpose",
        "eval",
        "--from",
        "uploads/mnist",
    )
    assert tau(*args, *registry(data)).returncode == 0
    again = tau(*args, *registry(data))
    assert again.returncode == 2
    assert again.stderr.strip().splitlines()[-1] == (
        "error: mnist@1 already exists; datasets are immutable (register a new version)"
    )


def test_verify_exits_1_naming_what_changed(data: Path) -> None:
    tau("data", "dataset", "register", "mnist@1", "--purpose", "eval", "--from", "uploads/mnist",
        *registry(data))  # fmt: skip
    ok = tau("data", "dataset", "verify", "mnist@1", *registry(data))
    assert ok.returncode == 0 and "mnist@1 verified at /data/uploads/mnist" in ok.stdout
    (data / "uploads/mnist/test.jsonl").write_text("tampered\n")
    bad = tau("data", "dataset", "verify", "mnist@1", *registry(data))
    assert bad.returncode == 1
    assert ["test.jsonl", "mismatch"] in [line.split() for line in bad.stdout.splitlines()]
    assert "1 of 2 files differ" in bad.stderr


def test_manifest_register_then_ingest_then_status(data: Path, tmp_path: Path) -> None:
    import hashlib

    files = [
        {
            "path": p.name,
            "bytes": p.stat().st_size,
            "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
        }
        for p in sorted((data / "uploads/mnist").iterdir())
    ]
    manifest = tmp_path / "files.yaml"
    manifest.write_text(yaml.safe_dump({"files": files, "source": {"kind": "huggingface"}}))
    reg = tau("data", "dataset", "register", "mnist@2", "--purpose", "eval", "--manifest",
              str(manifest), "-o", "json", *registry(data))  # fmt: skip
    record = json.loads(reg.stdout)
    assert record["assurance"] == "manifest-supplied"
    assert record["prefix"] == "datasets/mnist/2"
    assert record["source"] == {"kind": "huggingface"}
    status = tau("data", "dataset", "status", "mnist@2", *registry(data))
    assert status.stdout == "mnist@2: registered (0/2 files)\n"
    ingest = tau("data", "dataset", "ingest", "mnist@2", "--from", "/data/uploads/mnist",
                 *registry(data))  # fmt: skip
    assert ingest.returncode == 0, ingest.stderr
    assert ingest.stdout == "mnist@2 ready: 2/2 files at /data/datasets/mnist/2\n"
    assert (data / "datasets/mnist/2/train.jsonl").read_text() == '{"x": 1}\n'


def test_a_manifest_with_unknown_keys_lists_them(data: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "files.json"
    manifest.write_text(json.dumps({"files": [], "owner": "me"}))
    reg = tau("data", "dataset", "register", "mnist@2", "--purpose", "eval", "--manifest",
              str(manifest), *registry(data))  # fmt: skip
    assert reg.returncode == 2
    assert "  - owner: Extra inputs are not permitted" in reg.stderr


def test_rm_needs_yes_and_no_alias_pointing_at_the_version(data: Path) -> None:
    tau("data", "dataset", "register", "mnist@1", "--purpose", "eval", "--from", "uploads/mnist",
        *registry(data))  # fmt: skip
    tau("data", "dataset", "alias", "set", "mnist", "latest", "1", *registry(data))
    assert "without --yes" in tau("data", "dataset", "rm", "mnist@1", *registry(data)).stderr
    blocked = tau("data", "dataset", "rm", "mnist@1", "--yes", *registry(data))
    assert blocked.returncode == 2 and "still the target of alias latest" in blocked.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["register", "mnist", "--purpose", "eval", "--from", "x"],
            "register requires NAME@VERSION",
        ),
        (["register", "mnist@1", "--purpose", "train", "--from", "x"], "--purpose must be one of"),
        (["register", "mnist@1", "--purpose", "eval"], "exactly one of --from or --manifest"),
        (
            ["register", "mnist@1", "--purpose", "eval", "--from", "x", "--tokenizer", "gpt2"],
            "--tokenizer applies to --purpose pretrain, not eval",
        ),
        (["register", "mnist@1", "--purpose", "eval", "--from", "/etc"], "is not on the data PVC"),
        (["show", "Mnist"], "dataset name 'Mnist' is invalid"),
        (["ref", "mnist", "--env-prefix", "X"], "--env-prefix applies to -o env"),
        (["list", "-o", "xml"], "--output must be table, json or yaml"),
        (["ref", "mnist", "-o", "ref"], "--output must be table, json, yaml or env"),
        (
            ["alias", "get", "mnist", "latest", "-o", "env"],
            "--output must be table, json, yaml or ref",
        ),
        (["show", "mnist", "-n", "research"], "is a local directory, but -n selects a cluster"),
    ],
)
def test_refusals_are_one_line_with_exit_2(data: Path, args: list[str], message: str) -> None:
    result = tau("data", "dataset", *args, *registry(data))
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_azure_registry_is_refused_as_unsupported() -> None:
    result = tau("data", "dataset", "list", "--registry", "az://acct/ctr")
    assert result.returncode == 2
    assert "Azure Blob registries are not supported by this build" in result.stderr


def leave_metrics(data: Path, run: str, metrics: dict) -> None:
    run_dir = data / "checkpoints/workflows" / run
    run_dir.mkdir(parents=True)
    (run_dir / "metrics.json").write_text(json.dumps(metrics))


def test_model_index_best_alias_and_show(data: Path) -> None:
    leave_metrics(data, "demo-a", {"loss": 0.8})
    leave_metrics(data, "demo-b", {"loss": 0.3})
    rebuilt = tau("data", "model", "index", "rebuild", "--model", "demo", *registry(data))
    assert rebuilt.stdout == "indexed 2 model run(s)\n"
    assert tau("data", "model", "best", "demo", *registry(data)).stdout == "demo@demo-b\n"
    table = tau("data", "model", "list", "--metric", "loss", *registry(data)).stdout.splitlines()
    assert table[0].split() == ["MODEL", "RUN", "METRIC(LOSS)", "DIRECTION", "TAGS", "CHECKPOINT"]
    assert [line.split()[1] for line in table[1:]] == ["demo-b", "demo-a"]
    assert tau(
        "data", "model", "alias", "set", "demo", "prod", "demo-a", *registry(data)
    ).stdout == ("demo@demo-a\n")
    assert (
        tau("data", "model", "alias", "get", "demo", "prod", *registry(data)).stdout
        == "demo@demo-a\n"
    )
    shown = json.loads(tau("data", "model", "show", "demo/demo-b", *registry(data)).stdout)
    assert shown["metrics"] == {"loss": 0.3} and shown["primary_metric"]["direction"] == "lower"
    header = ["MODEL", "RUN", "METRIC(PRIMARY)", "DIRECTION", "TAGS", "CHECKPOINT"]
    row = ["demo", "demo-b", "0.3", "lower", "-", "-"]
    for form in ("table", "summary"):
        shown = tau("data", "model", "show", "demo/demo-b", "-o", form, *registry(data))
        assert rows(shown) == [header, row], form
    best = tau("data", "model", "best", "demo", "--metric", "loss", "-o", "table", *registry(data))
    assert rows(best) == [[*header[:2], "METRIC(LOSS)", *header[3:]], row]
    alias = json.loads(
        tau("data", "model", "alias", "get", "demo", "prod", "-o", "json", *registry(data)).stdout
    )
    got = tau("data", "model", "alias", "get", "demo", "prod", "-o", "table", *registry(data))
    assert rows(got) == [
        ["MODEL", "ALIAS", "RUN", "UPDATED"],
        ["demo", "prod", "demo-a", alias["updated_at"]],
    ]
    moved = tau("data", "model", "alias", "set", "demo", "prod", "demo-b", "-o", "table",
                *registry(data))  # fmt: skip
    assert rows(moved)[1][:3] == ["demo", "prod", "demo-b"]
    missing = tau("data", "model", "best", "nothing", *registry(data))
    assert missing.returncode == 1 and "model nothing has no runs" in missing.stderr


def test_the_data_root_is_registered_with_its_two_groups() -> None:
    result = tau("--help")
    assert "data" in result.stdout
    help_text = tau("data", "--help").stdout
    assert "dataset" in help_text and "model" in help_text
