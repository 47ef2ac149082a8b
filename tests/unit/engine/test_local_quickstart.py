"""The quickstart Job target, run locally, end to end: outputs, status, logs, get, evidence."""

from __future__ import annotations

import json

from tests.unit.engine.conftest import REPO, run_name

QUICKSTART = REPO / "examples" / "quickstart"


def test_quickstart_runs_locally_and_everything_about_it_can_be_read_back(local):
    result = local.tau("run", "train", "--local", cwd=QUICKSTART)
    assert result.returncode == 0, result.stderr
    name = run_name(result.stderr)
    assert name.startswith("quickstart-train-")
    assert "runtime.image python:3.12-slim is not used locally" in result.stderr
    assert "trained 300 steps" in result.stdout  # the target's output streams live

    output = local.data / "checkpoints" / "workflows" / name
    model = json.loads((output / "model.json").read_text())
    assert model["steps"] == 300

    doc = local.status(name, cwd=QUICKSTART)
    assert (doc["apiVersion"], doc["kind"]) == ("tau.azure.com/v1alpha1", "RunStatus")
    assert doc["status"]["workloadKind"] == "Job"
    assert doc["status"]["state"] == "succeeded"
    assert [p["name"] for p in doc["phases"]] == [
        "Submitted",
        "Local admission",
        "Process start",
        "Running",
        "Completed",
    ]
    assert {p["status"] for p in doc["phases"]} == {"done"}
    assert doc["job"]["conditions"][0]["type"] == "Complete"
    assert doc["metadata"]["annotations"]["tau.azure.com/result-path"] == str(output)

    logs = local.tau("logs", name, "--tail", "2", cwd=QUICKSTART)
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout.splitlines()[0].startswith("trained 300 steps")
    assert len(logs.stdout.splitlines()) == 2

    got = local.tau("run", "get", name, "-o", "json", cwd=QUICKSTART)
    assert got.returncode == 0, got.stderr
    assert "model.json" in json.loads(got.stdout)["entries"]
    one = local.tau("run", "get", name, "--artifact", "model.json", "-o", "raw", cwd=QUICKSTART)
    assert json.loads(one.stdout) == model
    escape = local.tau("run", "get", name, "--artifact", "../x", cwd=QUICKSTART)
    assert escape.returncode == 2 and "not a clean path" in escape.stderr

    listed = local.tau("run", "list", "--local", cwd=QUICKSTART)
    assert name in listed.stdout and "local" in listed.stdout.splitlines()[1]

    # Evidence: the tau.stellar metrics and the engine's record are one run in the store.
    found = local.portal("search", "-q", "toy-regression", "-o", "json")
    assert found.returncode == 0, found.stderr
    (row,) = [r for r in json.loads(found.stdout)["runs"] if r["run_id"] == name]
    assert row["state"] == "succeeded" and row["max_step"] == 300
    assert row["project"] == "quickstart" and row["run_group_id"] == "baseline"
    assert row["tau_command"] == "tau run train --local"
    assert row["code_sha"] and row["result_uri"] == str(output)
    snapshot = local.portal("stellar", "toy-regression", "-o", "json")
    assert snapshot.returncode == 0, snapshot.stderr
    snap = json.loads(snapshot.stdout)
    assert name in [r["run_id"] for r in snap["runs"]]
    assert "loss" in snap["metrics"]
    assert f"taugrid-portal experiment --store {local.store} stellar toy-regression" in (
        result.stderr
    )


def test_status_json_has_every_field_of_the_cluster_document(local):
    """Same shape as `tau run status` on a cluster: consumers need not care where it ran."""
    from tau.connection import Target
    from tau.lifecycle.snapshot import Snapshot
    from tau.lifecycle.status import document

    result = local.tau("run", "train", "--local", cwd=QUICKSTART)
    assert result.returncode == 0, result.stderr
    doc = local.status(run_name(result.stderr), cwd=QUICKSTART)
    job = {"metadata": {"name": "x", "uid": "u"}, "spec": {}, "status": {}}
    cluster = document(Snapshot(name="x", namespace="ns", job=job), Target(None, "", "ns"))
    assert set(cluster) <= set(doc)
    for section in ("metadata", "status", "job"):
        assert set(cluster[section]) <= set(doc[section]), section
    for phase in doc["phases"]:
        assert phase["status"] in ("pending", "active", "done", "warning", "skipped")


def test_the_same_target_still_renders_for_the_cluster_unchanged(local):
    result = local.tau("run", "train", "--dry-run=client", cwd=QUICKSTART)
    assert result.returncode == 0, result.stderr
    assert "kind: Job" in result.stdout


def test_local_and_dry_run_are_exclusive(local):
    result = local.tau("run", "train", "--local", "--dry-run=client", cwd=QUICKSTART)
    assert result.returncode == 2
    assert "--local cannot be combined with --dry-run" in result.stderr
    assert local.runs() == []


def test_pod_log_flags_are_refused_for_a_local_run_not_ignored(local):
    started = local.tau("run", "train", "--local", cwd=QUICKSTART)
    assert started.returncode == 0, started.stderr
    name = run_name(started.stderr)
    for verb in ("logs", "run logs"):
        refused = local.tau(*verb.split(), name, "--timestamps", "-c", "main", cwd=QUICKSTART)
        assert (refused.returncode, refused.stdout) == (2, "")
        assert refused.stderr == (
            f"error: -c/--container, --timestamps: {name} is a local run with one log per "
            "attempt, no pods; use --tail and -f\n"
        )
    tailed = local.tau("logs", name, "--tail", "1", cwd=QUICKSTART)
    assert tailed.returncode == 0 and len(tailed.stdout.splitlines()) == 1


def test_a_file_where_a_local_directory_belongs_is_refused_before_anything_starts(local, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    cases = [
        (("--data-root", str(blocker)), {}, f"--data-root {blocker}"),
        ((), {"TAU_EXP_STORE": str(blocker / "store")}, "the experiment store"),
        ((), {"TAU_LOCAL_STATE_DIR": str(blocker / "state")}, "the local run state"),
    ]
    for flags, env, label in cases:
        saved = dict(local.env)
        local.env.update(env)
        refused = local.tau("run", "train", "--local", *flags, cwd=QUICKSTART)
        local.env.clear()
        local.env.update(saved)
        assert refused.returncode == 2 and refused.stdout == ""
        assert refused.stderr.startswith(f"error: {label}")
        assert f"cannot be a directory: {blocker} is a file" in refused.stderr
    assert local.runs() == []
