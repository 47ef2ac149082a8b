"""`taugrid-portal experiment --workspace W`: the workspace store read through its Portal.

A real Stellar server process serves the demo store as workspace `shared-research`; the
researcher-side commands must print what the same commands print against the store itself.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tau.cli.main import run as run_cli
from tau.portal.cli.main import cli
from tests.unit.closed_port import closed_port

from .conftest import serve_argv

WORKSPACE = "shared-research"


def portal(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(cli, "taugrid-portal", list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def portal_url(demo_store: Path):
    port = closed_port()
    server = subprocess.Popen(
        serve_argv(demo_store, f"127.0.0.1:{port}", "--workspace", WORKSPACE),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/healthz", timeout=2).close()
            break
        except OSError:
            assert server.poll() is None, server.stderr.read()
            assert time.monotonic() < deadline, "the Stellar server never answered"
            time.sleep(0.2)
    yield url
    server.terminate()
    server.wait(timeout=30)


def remote(url: str) -> tuple[str, ...]:
    return ("experiment", "--workspace", WORKSPACE, "--portal", url)


def test_search_through_the_portal_matches_the_store(capsys, demo_store, portal_url) -> None:
    flags = ("search", "--metric-filter", "train/loss<0.5", "--tag", "source=jsonl", "-o", "json")
    code, out, err = portal(capsys, *remote(portal_url), *flags)
    assert code == 0, err
    _, local, _ = portal(capsys, "experiment", "--store", str(demo_store), *flags)
    assert json.loads(out)["runs"] == json.loads(local)["runs"]
    assert json.loads(out)["count"] >= 1


def test_stellar_and_compare_through_the_portal(capsys, demo_store, portal_url) -> None:
    code, out, err = portal(capsys, *remote(portal_url), "stellar", "demo", "-o", "json")
    assert code == 0, err
    snap = json.loads(out)
    assert sorted(r["run_id"] for r in snap["runs"]) == ["run-a", "run-b", "run-c"]
    store = ("experiment", "--store", str(demo_store))
    flags = ("compare", "demo", "--metric", "train/loss", "-o", "json")
    code, out, err = portal(capsys, *remote(portal_url), *flags)
    assert code == 0, err
    assert json.loads(out) == json.loads(portal(capsys, *store, *flags)[1])


def test_another_workspace_is_refused_by_the_portal_in_one_line(capsys, portal_url) -> None:
    args = ("experiment", "--workspace", "other", "--portal", portal_url, "search")
    code, out, err = portal(capsys, *args)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "workspace 'other' is not served here" in err


def test_an_unreachable_portal_names_the_port_forward(capsys) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    code, out, err = portal(capsys, *remote(url), "search")
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and "port-forward service/tau-portal" in err


def test_commands_that_need_a_local_store_refuse_workspace(capsys, portal_url) -> None:
    code, _, err = portal(capsys, *remote(portal_url), "list")
    assert code == 2 and "list needs a local store" in err
    code, _, err = portal(capsys, "experiment", "--store", "x", "--workspace", WORKSPACE, "search")
    assert code == 2 and "--store and --workspace name two different stores" in err
