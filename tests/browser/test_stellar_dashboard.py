"""The Stellar dashboard renders in real headless Chromium, offline and from the local server."""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tau.evidence import ImportRequest, Store, import_jsonl, init_experiment
from tau.portal import html, snapshot

pytestmark = pytest.mark.browser

RUNS = ("run-a", "run-b", "run-c")
LONG_STEPS = 30_000


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    base = tmp_path_factory.mktemp("browser")
    init_experiment(base / "store", "demo")
    for index, run in enumerate(RUNS):
        steps = LONG_STEPS if run == "run-c" else 200
        path = base / f"{run}.jsonl"
        with path.open("w") as handle:
            for step in range(steps):
                loss = math.exp(-(index + 1) * step / steps)
                handle.write(json.dumps({"_step": step, "loss": loss, "accuracy": 1 - loss}) + "\n")
        import_jsonl(
            base / "store", ImportRequest(run_id=run, history=[str(path)], experiment="demo")
        )
    return Store.open(base / "store")


def _assert_charts(page, max_points: int) -> None:
    charts = page.evaluate("window.__stellarCharts")
    assert [c["metric"] for c in charts] == ["loss", "accuracy"]
    assert [c["series"] for c in charts] == [len(RUNS), len(RUNS)]
    assert all(c["points"] <= max_points * len(RUNS) for c in charts)
    assert page.locator(".uplot").count() == 2
    assert page.locator(".uplot canvas").count() == 2
    # uPlot's legend: the x series plus one entry per run.
    assert page.locator(".chart").first.locator(".u-legend .u-series").count() == len(RUNS) + 1
    assert page.locator("#runs tr").count() == len(RUNS) + 1


def test_the_html_file_renders_every_chart_with_one_series_per_run_and_no_network(
    store: Store, tmp_path: Path, page
) -> None:
    snap = snapshot.build_snapshot(store, "demo", max_points=1000)
    file = tmp_path / "demo.stellar.html"
    file.write_text(html.render_file(snap))

    loaded = page.open(file.as_uri())

    _assert_charts(loaded, 1000)
    assert "30400 points, 1400 shown (LTTB)" in loaded.locator(".chart .note").first.inner_text()
    assert page.requests == [file.as_uri()], "the dashboard file must not touch the network"
    assert page.errors == []


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def server(store: Store) -> Iterator[str]:
    import uvicorn

    from tau.portal.server import ServerConfig, create_app

    port = _free_port()
    config = uvicorn.Config(
        create_app(ServerConfig(store=store)), host="127.0.0.1", port=port, log_level="warning"
    )
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not instance.started:
        assert time.monotonic() < deadline, "the Stellar server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(10)


def test_the_served_experiment_page_renders_from_the_series_api(server: str, page) -> None:
    loaded = page.open(f"{server}/stellar/experiments/demo")

    _assert_charts(loaded, snapshot.DEFAULT_MAX_POINTS)
    assert all(url.startswith(server) for url in page.requests), page.requests
    assert any("/api/v2/stellar/snapshot" in url for url in page.requests)
    assert page.errors == []
