"""`taugrid-portal`: command tree, aliases, output formats and the one-line error contract."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tau.cli.main import run as run_cli
from tau.portal.cli.main import cli


def portal(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(cli, "taugrid-portal", list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_version_and_help_show_the_public_commands(capsys) -> None:
    from tau import __version__

    code, out, _ = portal(capsys, "version", "--short")
    assert (code, out) == (0, f"{__version__}\n")
    code, out, _ = portal(capsys, "--help")
    assert code == 0 and "experiment" in out and "exp " not in out


def test_exp_runs_and_dashboard_are_aliases(capsys, demo_store: Path) -> None:
    code, out, _ = portal(capsys, "exp", "--store", str(demo_store), "runs", "-o", "json")
    assert code == 0 and json.loads(out)["count"] == 3
    code, out, _ = portal(
        capsys, "experiment", "--store", str(demo_store), "dashboard", "demo", "-o", "json"
    )
    assert code == 0 and json.loads(out)["target_type"] == "experiment"


def test_search_formats(capsys, demo_store: Path) -> None:
    store = ("experiment", "--store", str(demo_store))
    _, out, _ = portal(capsys, *store, "search", "--group", "base", "-o", "jsonl")
    assert sorted(json.loads(line)["run_id"] for line in out.splitlines()) == ["run-a", "run-b"]
    _, out, _ = portal(capsys, *store, "search", "--metric-filter", "train/loss<0.1", "-o", "csv")
    table = list(csv.DictReader(io.StringIO(out)))
    assert [r["run_id"] for r in table] == ["run-c"]
    _, out, _ = portal(capsys, *store, "search", "-q", "accuracy")
    assert "run-a" in out and "RUN" in out


def test_no_store_is_a_usage_error_that_lists_every_option(capsys, monkeypatch) -> None:
    for name in ("TAU_EXP_STORE", "TAU_EXP_STORE_ROOT"):
        monkeypatch.delenv(name, raising=False)
    code, out, err = portal(capsys, "experiment", "list")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ")
    for name in (
        "--store",
        "TAU_EXP_STORE",
        "TAU_EXP_STORE_ROOT",
        "TAU_CONTEXT",
        "TAU_TEAM",
        "TAU_PROJECT",
    ):
        assert name in err


def test_mutating_sql_exits_2_with_one_line(capsys, demo_store: Path) -> None:
    code, _, err = portal(
        capsys, "experiment", "--store", str(demo_store), "sql", "DELETE FROM runs"
    )
    assert code == 2 and err.count("\n") == 1 and "read-only" in err
    code, out, _ = portal(
        capsys,
        "experiment",
        "--store",
        str(demo_store),
        "sql",
        "SELECT COUNT(*) AS n FROM runs",
        "--format",
        "json",
    )
    assert code == 0 and json.loads(out) == [{"n": 3}]


def test_init_import_and_conflict_through_the_cli(capsys, tmp_path: Path) -> None:
    store = ("experiment", "--store", str(tmp_path / "s"))
    history = tmp_path / "h.jsonl"
    history.write_text('{"_step": 1, "loss": 0.5}\n{"_step": 2, "loss": 0.25}\n')
    code, out, _ = portal(capsys, *store, "init", "exp", "--idempotency-key", "k", "-o", "json")
    assert code == 0 and json.loads(out)["status"] == "created"
    code, _, err = portal(
        capsys, *store, "init", "exp", "--description", "x", "--idempotency-key", "k"
    )
    assert code == 1 and "already used for a different request" in err
    code, out, _ = portal(
        capsys,
        *store,
        "import",
        "jsonl",
        "--run",
        "r1",
        "--history",
        str(history),
        "--dry-run",
        "-o",
        "json",
    )
    assert code == 0 and json.loads(out)["rows"] == 2
    code, out, _ = portal(
        capsys, *store, "import", "jsonl", "--run", "r1", "--history", str(history), "-o", "json"
    )
    assert code == 0 and json.loads(out)["reused"] is False
    code, out, _ = portal(capsys, *store, "track", "r1", "--metric", "loss=oops")
    assert code == 2


def test_compare_reports_per_group_statistics_and_one_winner(capsys, demo_store: Path) -> None:
    code, out, _ = portal(
        capsys,
        "experiment",
        "--store",
        str(demo_store),
        "compare",
        "demo",
        "--metric",
        "train/loss",
        "--format",
        "json",
    )
    result = json.loads(out)
    assert code == 0 and [r["run_group_id"] for r in result] == ["base", "wide"]
    base, wide = result
    assert base["direction"] == "min" and base["run_count"] == 2
    assert base["min"] <= base["p25"] <= base["median"] <= base["p75"] <= base["max"]
    assert wide["winner"] is True and base["winner"] is False and wide["best_run_id"] == "run-c"


def test_plot_writes_one_line_per_run_per_metric(capsys, demo_store: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "demo.svg"
    code, _, _ = portal(
        capsys,
        "experiment",
        "--store",
        str(demo_store),
        "plot",
        "demo",
        "--out",
        str(out_file),
        "--metric",
        "train/loss",
        "--metric",
        "accuracy",
    )
    svg = out_file.read_text()
    assert code == 0 and svg.startswith("<svg") and svg.count('class="series"') == 6


def test_status_and_list(capsys, demo_store: Path) -> None:
    code, out, _ = portal(
        capsys, "experiment", "--store", str(demo_store), "status", "demo", "-o", "json"
    )
    report = json.loads(out)
    assert code == 0 and report["runs"] == 3 and report["run_groups"] == 2
    assert report["lifecycle_counts"] == {"succeeded": 2, "incomplete": 1}  # run-c logged a NaN
    code, out, _ = portal(
        capsys, "experiment", "--store", str(demo_store), "list", "--kind", "groups", "-o", "json"
    )
    assert {g["run_group_id"]: g["runs"] for g in json.loads(out)["items"]} == {
        "default": 0,
        "base": 2,
        "wide": 1,
    }


def test_export_refuses_inside_the_store_and_non_empty_without_force(
    capsys, demo_store: Path, tmp_path: Path
) -> None:
    store = ("experiment", "--store", str(demo_store))
    code, _, err = portal(capsys, *store, "export", "--out", str(demo_store / "inside"))
    assert code == 2 and "inside the store" in err
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    code, _, err = portal(capsys, *store, "export", "--out", str(full))
    assert code == 2 and "--force" in err
    code, _, _ = portal(capsys, *store, "export", "--out", str(tmp_path / "packet"), "-o", "json")
    assert code == 0
    packet = tmp_path / "packet"
    assert json.loads((packet / "README.json").read_text())["kind"] == "tau.exp.export"
    assert (packet / "index.sqlite").is_file() and list((packet / "metrics").rglob("*.parquet"))


def test_stellar_html_is_one_self_contained_file(capsys, demo_store: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "demo.html"
    code, _, err = portal(
        capsys, "experiment", "--store", str(demo_store), "stellar", "demo", "--out", str(out_file)
    )
    page = out_file.read_text()
    assert code == 0 and "3 metric chart(s)" in err
    assert "<script src=" not in page and "<link" not in page
    assert "uPlot" in page and "renderSnapshot({" in page


def test_stellar_tui_prints_sparklines(capsys, demo_store: Path) -> None:
    code, out, _ = portal(
        capsys, "experiment", "--store", str(demo_store), "stellar", "base", "-o", "tui"
    )
    assert code == 0 and "run-a" in out and "▁" in out and "█" in out


def test_stellar_tui_never_cuts_run_ids_that_share_a_long_prefix(capsys, tmp_path) -> None:
    from tau.evidence import ImportRequest, import_jsonl, init_experiment

    store = tmp_path / "store"
    init_experiment(store, "sweep")
    names = [f"quickstart-train-20261129-1044{i:02d}" for i in range(3)]
    for index, name in enumerate(names):
        history = tmp_path / f"{name}.jsonl"
        history.write_text(
            "".join(f'{{"_step": {s}, "loss": {1 / (s + index + 1)}}}\n' for s in range(9))
        )
        import_jsonl(store, ImportRequest(run_id=name, history=[str(history)], experiment="sweep"))
    code, out, _ = portal(
        capsys, "experiment", "--store", str(store), "stellar", "sweep", "-o", "tui"
    )
    assert code == 0
    for name in names:  # in the runs table and in the loss table, each id whole on its row
        assert sum(line.split()[0] == name for line in out.splitlines() if line.strip()) == 2
    assert "…" not in "".join(
        line for line in out.splitlines() if "quickstart" in line and "█" in line
    )


def test_stellar_tui_refuses_out_instead_of_ignoring_it(capsys, demo_store: Path, tmp_path) -> None:
    target = tmp_path / "dash.txt"
    code, out, err = portal(
        capsys,
        "experiment",
        "--store",
        str(demo_store),
        "stellar",
        "demo",
        "-o",
        "tui",
        "--out",
        str(target),
    )
    assert (code, out) == (2, "")
    assert err == "error: --out writes html or json; -o tui prints to the terminal\n"
    assert not target.exists()


def test_portal_serve_usage_errors_are_one_line_naming_the_flag(capsys) -> None:
    code, _, err = portal(capsys, "portal", "serve", "--jobs-scope-mode", "all")
    assert code == 2 and "--jobs-scope-mode" in err
    code, _, err = portal(
        capsys, "portal", "serve", "-n", "team-a", "--jobs-scope-mode", "operator"
    )
    assert code == 2 and "--jobs-operator-scope" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    code, _, err = portal(
        capsys, "portal", "serve", "-n", "team-a", "--jobs-operator-scope", "bad", "--addr", "x"
    )
    assert code == 2 and "TEAM=NAMESPACE/LOCALQUEUE" in err


def test_portal_serve_kusto_source_errors_name_the_missing_flag(capsys) -> None:
    code, _, err = portal(capsys, "portal", "serve", "-n", "team-a", "--source", "kusto")
    assert code == 2 and "--kusto-endpoint" in err and len(err.strip().splitlines()) == 1
    code, _, err = portal(
        capsys, "portal", "serve", "-n", "team-a", "--kusto-endpoint", "https://adx.example"
    )
    assert code == 2 and "--source kusto" in err and "Traceback" not in err
