"""Both engines share one failure and status vocabulary without loading each other."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import tau.engine
from tau.engine.retry import classify_exit, exit_cause
from tau.run.failures import RESEARCHER, Failure, RetryPolicy, policy_from
from tau.runconfig import loads

ENGINE_MODULES = sorted(f"tau.engine.{m.name}" for m in pkgutil.iter_modules(tau.engine.__path__))


def loaded_modules(*modules: str) -> list[str]:
    """Modules a fresh interpreter holds after importing `modules` (no test-process leakage)."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


def test_the_local_engine_never_loads_the_kubernetes_client_or_the_cluster_lifecycle() -> None:
    loaded = loaded_modules(*ENGINE_MODULES)
    assert [m for m in loaded if m == "kubernetes" or m.startswith("kubernetes.")] == []
    assert [m for m in loaded if m.startswith(("tau.lifecycle", "tau.kube"))] == []


def test_a_local_oom_kill_is_the_clusters_retryable_oom_class() -> None:
    failure = classify_exit(137)
    assert failure is Failure.OOM_KILLED and failure.retryable
    cause = exit_cause(failure, 137)
    assert (cause.reason, cause.owner) == (Failure.OOM_KILLED, RESEARCHER)


def test_one_retry_policy_is_read_from_resilience_for_both_engines() -> None:
    loaded = loads(
        b"name: train\nentrypoint: train.py\nresilience:\n  max_retries: 2\n"
        b"  retry_on: [oomkilled]\n  backoff_initial: 10s\n",
        Path("tau.yaml"),
    )
    assert policy_from(loaded.config, "train") == RetryPolicy(
        max_retries=2,
        retry_on=("OOMKilled",),
        backoff_initial=10.0,
        backoff_max=300.0,
        checkpoint="/data/checkpoints/finetunes/train",
    )
    without = loads(b"name: train\nentrypoint: train.py\n", Path("tau.yaml"))
    assert policy_from(without.config, "train") is None
