"""The local Stellar server: pages, the series API with server-side downsampling, contracts."""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from tau.evidence import ImportRequest, Store, import_jsonl, init_experiment
from tau.portal.server import ServerConfig, create_app, stellar_url
from tests.unit.closed_port import closed_port

from .conftest import serve_argv

# The Host a browser sends for the default bind; TestClient's own "testserver" is refused.
LOCAL = "http://127.0.0.1:8080"


@pytest.fixture(scope="module")
def client(demo_store: Path) -> TestClient:
    return TestClient(create_app(ServerConfig(store=Store.open(demo_store))), base_url=LOCAL)


def test_healthz_reports_the_store(client: TestClient, demo_store: Path) -> None:
    assert client.get("/healthz").json() == {
        "ok": True,
        "store_path": str(demo_store),
        "source": "local",
    }


def test_run_and_experiment_pages_load_assets_from_the_server(client: TestClient) -> None:
    for path in ("/stellar?target=demo", "/stellar/runs/run-a", "/stellar/experiments/demo"):
        page = client.get(path)
        assert page.status_code == 200 and "renderSnapshot" in page.text
        assert "/stellar/assets/uPlot.iife.min.js" in page.text
    asset = client.get("/stellar/assets/uPlot.iife.min.js")
    assert asset.status_code == 200 and asset.headers["content-type"].startswith("text/javascript")
    assert client.get("/stellar/assets/evil.js").status_code == 404
    assert client.get("/", follow_redirects=False).headers["location"] == "/stellar"


def test_series_of_a_run_and_of_an_experiment(client: TestClient) -> None:
    run = client.get("/api/v2/stellar/runs/run-a/series", params={"metric": "train/loss"}).json()
    assert [(s["run_id"], s["metric"], s["points"]) for s in run["series"]] == [
        ("run-a", "train/loss", 50)
    ]
    assert run["series"][0]["x"][:3] == [0, 1, 2]
    group = client.get(
        "/api/v1/stellar/series", params={"target": "demo", "metric": "accuracy"}
    ).json()
    assert sorted(s["run_id"] for s in group["series"]) == ["run-a", "run-b", "run-c"]


def test_legacy_routes_carry_deprecation_headers_and_v2_run_routes_do_not(
    client: TestClient,
) -> None:
    legacy = client.get("/api/stellar/runs", params={"target": "demo"})
    assert legacy.status_code == 200
    assert legacy.headers["Deprecation"] and "successor" in legacy.headers["Link"]
    assert "Warning" in legacy.headers
    modern = client.get("/api/v2/stellar/runs/run-a")
    assert modern.status_code == 200 and "Deprecation" not in modern.headers
    assert modern.json()["metrics"]["train/loss"]["count"] == 50


def test_another_workspace_is_rejected_and_unimplemented_boards_are_501(client: TestClient) -> None:
    assert (
        client.get("/api/v2/stellar/runs/run-a", params={"workspace": "other"}).status_code == 400
    )
    assert (
        client.get("/api/v2/stellar/runs/run-a", params={"workspace": "default"}).status_code == 200
    )
    for name in ("labels", "dashboards", "workspaces"):
        assert client.get(f"/api/v2/stellar/{name}").status_code == 501


def test_unknown_targets_are_400_with_a_reason(client: TestClient) -> None:
    response = client.get("/api/v2/stellar/series", params={"target": "nope"})
    assert (
        response.status_code == 400
        and "not a run group, run or experiment" in response.json()["reason"]
    )


def test_open_builds_the_stellar_url_even_for_wildcard_binds() -> None:
    assert (
        stellar_url("0.0.0.0:8080", "demo", "loss")
        == "http://127.0.0.1:8080/stellar?metric=loss&target=demo"
    )
    assert stellar_url("[::]:9000", "r-1", "") == "http://127.0.0.1:9000/stellar?target=r-1"
    assert stellar_url("127.0.0.2:80", "t", "m") == "http://127.0.0.2:80/stellar?metric=m&target=t"


def test_a_long_series_is_downsampled_on_the_server_and_max_points_is_clamped(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    init_experiment(root, "big")
    history = tmp_path / "long.jsonl"
    with history.open("w") as handle:
        for step in range(20_000):
            handle.write(json.dumps({"_step": step, "loss": math.sin(step / 500)}) + "\n")
    import_jsonl(root, ImportRequest(run_id="long", history=[str(history)]))
    client = TestClient(create_app(ServerConfig(store=Store.open(root))), base_url=LOCAL)

    default = client.get("/api/v2/stellar/series", params={"target": "long"}).json()
    clamped = client.get(
        "/api/v2/stellar/series", params={"target": "long", "max_points": 50_000}
    ).json()
    small = client.get("/api/v2/stellar/runs/long/series", params={"max_points": 300}).json()

    assert default["max_points"] == 8000 and default["series"][0]["returned"] == 8000
    assert clamped["max_points"] == 12000 and clamped["series"][0]["returned"] == 12000
    assert small["series"][0]["returned"] == 300 and small["series"][0]["points"] == 20_000
    assert small["series"][0]["downsampled"] is True


def test_the_serve_command_starts_a_server_that_answers_and_stops(demo_store: Path) -> None:
    port = closed_port()
    server = subprocess.Popen(
        serve_argv(demo_store, f"127.0.0.1:{port}", "--default-target", "demo"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "taugrid-portal experiment serve did not start"
                time.sleep(0.2)
        assert health.json()["ok"] is True
        page = httpx.get(f"http://127.0.0.1:{port}/stellar", timeout=5)
        assert page.status_code == 200 and '"target":"demo"' in page.text
    finally:
        server.terminate()
        server.wait(15)


def test_serve_on_a_busy_address_is_one_line_before_claiming_to_serve(demo_store: Path) -> None:
    portal = Path(sys.executable).parent / "taugrid-portal"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        addr = f"127.0.0.1:{busy.getsockname()[1]}"
        result = subprocess.run(
            [str(portal), "experiment", "--store", str(demo_store), "serve", "--addr", addr],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"error: cannot listen on {addr}: Address already in use; pick a free port with "
        "--addr HOST:PORT (owner: the user)\n"
    )


def test_the_server_refuses_a_dns_rebinding_host(demo_store: Path) -> None:
    app = create_app(ServerConfig(store=Store.open(demo_store)))
    rebound = TestClient(app, base_url="http://attacker.example:8080")
    for path in ("/healthz", "/api/v2/stellar/runs?target=demo", "/stellar"):
        response = rebound.get(path)
        assert response.status_code == 421, path
        assert "run-a" not in response.text and "DNS rebinding" in response.json()["reason"]
    named = TestClient(
        create_app(ServerConfig(store=Store.open(demo_store), allowed_hosts=("portal.lan",))),
        base_url="http://portal.lan",
    )
    assert named.get("/api/v2/stellar/runs", params={"target": "demo"}).status_code == 200


def test_a_damaged_metric_file_is_a_json_store_corrupt_reason_on_every_route(
    tmp_path: Path, demo_store: Path
) -> None:
    import shutil

    root = tmp_path / "store"
    shutil.copytree(demo_store, root)
    for parquet in (root / "metrics").rglob("*.parquet"):
        parquet.write_bytes(b"PAR1 not really parquet")
    client = TestClient(create_app(ServerConfig(store=Store.open(root))), base_url=LOCAL)
    routes = [
        "/api/v2/stellar/series?target=demo",
        "/api/v2/stellar/snapshot?target=demo",
        "/api/v2/stellar/runs/run-a/series",
        "/api/v2/stellar/runs?target=demo",
        "/api/v2/stellar/runs/run-a",
        "/api/v2/stellar/status?target=demo",
        "/api/v2/stellar/experiments",
    ]
    failed = []
    for route in routes:
        response = client.get(route)
        assert response.headers["content-type"] == "application/json", route
        if response.status_code != 200:
            failed.append(route)
            assert response.status_code == 500, route
            reason = response.json()["reason"]
            assert "metric file is unreadable" in reason and ".parquet" in reason, route
            assert "owner: the store's owner" in reason
    assert failed == routes[:3]  # the routes that read points; the catalogue still answers


@pytest.mark.parametrize(
    "addr", ["127.0.0.1:99999", "127.0.0.1", "127.0.0.1:", "127.0.0.1:8o", "[::1]:-1"]
)
def test_a_bad_addr_is_one_usage_line(demo_store: Path, addr: str) -> None:
    portal = Path(sys.executable).parent / "taugrid-portal"
    result = subprocess.run(
        [str(portal), "experiment", "--store", str(demo_store), "serve", "--addr", addr],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "internal error" not in result.stderr
    assert result.stderr.startswith(f"error: --addr {addr!r} must be HOST:PORT")


def _serve_until_healthy(argv: list[str], port: int) -> subprocess.Popen[str]:
    server = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while True:
        assert server.poll() is None, server.stderr.read() if server.stderr else ""
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
            return server
        except httpx.TransportError:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)


def test_a_wildcard_bind_warns_loudly_and_names_the_real_address(demo_store: Path) -> None:
    port = closed_port()
    server = _serve_until_healthy(serve_argv(demo_store, f"0.0.0.0:{port}"), port)
    server.terminate()
    _, stderr = server.communicate(timeout=15)
    lines = stderr.splitlines()
    assert lines[0].startswith(f"warning: Stellar listens on 0.0.0.0:{port} (every network")
    assert "without authentication" in lines[0] and "--addr 127.0.0.1:PORT" in lines[0]
    assert f"on 0.0.0.0:{port} at http://127.0.0.1:{port}/stellar" in lines[1]


def test_a_loopback_bind_says_nothing_alarming_and_port_zero_prints_the_real_port(
    demo_store: Path,
) -> None:
    server = subprocess.Popen(
        serve_argv(demo_store, "127.0.0.1:0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
    finally:
        server.terminate()
        server.communicate(timeout=15)
    assert line.startswith("Stellar serving") and "warning" not in line
    port = int(line.split(" at http://127.0.0.1:")[1].split("/")[0])
    assert port > 0 and f"on 127.0.0.1:{port} " in line
