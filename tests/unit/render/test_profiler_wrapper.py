"""The rendered profiler stage, run for real by dash and busybox sh, with stand-in nsys/ncu.

The stage and its env are taken from a rendered Job (pod paths moved under a temporary
directory), and several processes run it as different ranks, as the launcher's ranks would.
What a researcher relies on: exactly the selected rank runs under the tool, with the capture
window and report path the config asked for, the report lands at the declared path, every
other rank runs its command unchanged, and the exit code is the workload's.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tau import keys
from tau.evidence.publish import completed_publications
from tau.render import render, wrapper
from tau.render.intent import Profiler

from . import intents, profiler_tools
from .test_wrapper import SHELLS

TRAINER = (
    "import os, pathlib, sys\n"
    "rank = os.environ.get('RANK', '0')\n"
    "out = pathlib.Path(os.environ['RAN_DIR']); out.mkdir(parents=True, exist_ok=True)\n"
    "(out / f'rank-{rank}').write_text(os.environ.get('PROFILED_BY', 'plain'))\n"
)


@pytest.fixture(params=SHELLS)
def shell(request) -> list[str]:
    assert SHELLS, "no POSIX sh (dash or busybox) on this machine"
    return ["busybox", "sh"] if request.param == "busybox" else ["dash"]


def profiled_intent(profiler: Profiler, **changes):
    return dataclasses.replace(
        intents.quickstart_job(), output="/data/out/train", profiler=profiler, **changes
    )


def rendered_env(intent, tmp_path: Path) -> dict[str, str]:
    """The main container's literal env as rendered, /data moved under tmp_path."""
    job = render(intent)[-1]
    main = job["spec"]["template"]["spec"]["containers"][0]
    env = {}
    for entry in main["env"]:
        if "value" in entry:
            value = entry["value"]
            env[entry["name"]] = (
                str(tmp_path) + value if value.startswith(("/data/", "/mnt/")) else value
            )
    return env


def run_rank(
    shell: list[str], intent, tmp_path: Path, rank: str | None, *, tools=True, trainer=TRAINER
):
    bin_dir = tmp_path / "bin"
    if tools:
        profiler_tools.install(bin_dir)
    env = {
        **rendered_env(intent, tmp_path),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        profiler_tools.LOG_ENV: str(tmp_path / "calls.log"),
        "RAN_DIR": str(tmp_path / "ran"),
    }
    if rank is not None:
        env["RANK"] = rank
    command = wrapper.profiled(intent, [sys.executable, "-c", trainer])
    assert command[:2] == ["/bin/sh", "-c"]
    return subprocess.run(
        [*shell, *command[1:]], env=env, capture_output=True, text=True, timeout=60
    )


def out_dir(tmp_path: Path) -> Path:
    return tmp_path / "data" / "out" / "train" / "profile"


def ran(tmp_path: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((tmp_path / "ran").iterdir())}


def test_the_rendered_job_runs_exactly_this_stage():
    intent = profiled_intent(Profiler("nsys", duration=120.0))
    main = render(intent)[-1]["spec"]["template"]["spec"]["containers"][0]
    assert main["command"][:4] == wrapper.profiled(intent, [])


def test_only_the_selected_rank_runs_under_nsys_with_the_configured_window(tmp_path, shell):
    intent = profiled_intent(Profiler("nsys", rank="1", warmup=30.0, duration=90.0))
    for rank in ("0", "1", "2"):
        done = run_rank(shell, intent, tmp_path, rank)
        assert done.returncode == 0, done.stderr
    assert ran(tmp_path) == {"rank-0": "plain", "rank-1": "nsys", "rank-2": "plain"}
    base = out_dir(tmp_path) / "rank-1"
    [call] = profiler_tools.calls(tmp_path / "calls.log")
    assert call["tool"] == "nsys"
    assert call["argv"][:5] == [
        "profile",
        "--force-overwrite=true",
        f"--output={base}",
        "--delay=30",
        "--duration=90",
    ]
    assert call["argv"][5:7] == [sys.executable, "-c"]
    assert sorted(p.name for p in out_dir(tmp_path).iterdir()) == ["rank-1.nsys-rep"]
    env = rendered_env(intent, tmp_path)
    assert Path(env[keys.ENV_PROFILE_OUT]) == base.with_suffix(".nsys-rep")


def test_an_unselected_rank_says_it_runs_unprofiled(tmp_path, shell):
    done = run_rank(shell, profiled_intent(Profiler("nsys", rank="1")), tmp_path, "0")
    assert done.returncode == 0
    assert "rank 0 runs without nsys (profiler.rank is 1)" in done.stderr
    assert not out_dir(tmp_path).exists()


def test_rank_all_profiles_every_rank_into_the_pattern(tmp_path, shell):
    intent = profiled_intent(Profiler("ncu", rank="all"))
    for rank in ("0", "1"):
        assert run_rank(shell, intent, tmp_path, rank).returncode == 0
    assert ran(tmp_path) == {"rank-0": "ncu", "rank-1": "ncu"}
    pattern = rendered_env(intent, tmp_path)[keys.ENV_PROFILE_OUT_PATTERN]
    for rank in ("0", "1"):
        assert Path(pattern.replace("<rank>", rank)).is_file()
    calls = profiler_tools.calls(tmp_path / "calls.log")
    assert [c["argv"][:5] for c in calls] == [
        ["--target-processes", "all", "-f", "-o", str(out_dir(tmp_path) / f"rank-{rank}")]
        for rank in ("0", "1")
    ]


def test_a_process_without_a_rank_is_rank_0(tmp_path, shell):
    done = run_rank(shell, profiled_intent(Profiler("nsys", duration=120.0)), tmp_path, None)
    assert done.returncode == 0, done.stderr
    assert (out_dir(tmp_path) / "rank-0.nsys-rep").is_file()


def test_the_workloads_exit_code_passes_through_the_profiler(tmp_path, shell):
    intent = profiled_intent(Profiler("nsys", duration=120.0))
    done = run_rank(shell, intent, tmp_path, "0", trainer=TRAINER + "sys.exit(3)\n")
    assert done.returncode == 3
    assert (out_dir(tmp_path) / "rank-0.nsys-rep").is_file()


def test_the_end_of_the_nsys_window_is_a_completed_capture(tmp_path, shell):
    intent = profiled_intent(Profiler("nsys", duration=1.0))
    started = time.monotonic()
    done = run_rank(shell, intent, tmp_path, "0", trainer="import time; time.sleep(30)\n")
    assert time.monotonic() - started < 20
    assert done.returncode == 0, done.stderr
    assert "the 1s capture (profiler.duration) is complete" in done.stderr
    assert (out_dir(tmp_path) / "rank-0.nsys-rep").is_file()


def test_a_missing_tool_stops_the_profiled_rank_with_one_line(tmp_path, shell):
    done = run_rank(shell, profiled_intent(Profiler("ncu")), tmp_path, "0", tools=False)
    assert done.returncode == wrapper.EXIT_TOOL_MISSING
    assert "profiler.mode ncu needs ncu on PATH in the workload image" in done.stderr
    assert not (tmp_path / "ran").exists()


def test_sigterm_reaches_the_workload_and_is_not_mistaken_for_the_window_end(tmp_path, shell):
    intent = profiled_intent(Profiler("nsys", duration=60.0))
    bin_dir = tmp_path / "bin"
    profiler_tools.install(bin_dir)
    env = {
        **rendered_env(intent, tmp_path),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        profiler_tools.LOG_ENV: str(tmp_path / "calls.log"),
    }
    started = tmp_path / "started"
    trainer = f"import pathlib, time; pathlib.Path({str(started)!r}).touch(); time.sleep(60)\n"
    command = wrapper.profiled(intent, [sys.executable, "-c", trainer])
    process = subprocess.Popen([*shell, *command[1:]], env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists()
    os.kill(process.pid, signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == wrapper.EXIT_SIGTERM
    assert "capture (profiler.duration) is complete" not in stderr, stderr
    assert (out_dir(tmp_path) / "rank-0.nsys-rep").is_file()


def test_a_completed_capture_still_publishes_staged_outputs(tmp_path, shell):
    publication = "0123456789abcdef01234567"
    intent = profiled_intent(
        Profiler("nsys", duration=1.0), staged_publish=True, publication_id=publication
    )
    bin_dir = tmp_path / "bin"
    profiler_tools.install(bin_dir)
    env = {
        **rendered_env(intent, tmp_path),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        profiler_tools.LOG_ENV: str(tmp_path / "calls.log"),
    }
    trainer = (
        "import os, pathlib, time\n"
        "d = pathlib.Path(os.environ['TAU_OUTPUT_STAGING_DIR']); d.mkdir(parents=True)\n"
        "(d / 'model.bin').write_bytes(b'w')\n"
        "time.sleep(30)\n"
    )
    main = render(intent)[-1]["spec"]["template"]["spec"]["containers"][0]
    rendered = main["command"]
    assert rendered[3] == "tau-wrapper" and rendered[4:8] == wrapper.profiled(intent, [])
    command = wrapper.wrap_command(
        intent, wrapper.profiled(intent, [sys.executable, "-c", trainer])
    )
    done = subprocess.run(
        [*shell, *command[1:]], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    [published] = completed_publications(Path(env[keys.ENV_OUTPUT_DIR]))
    assert published.files == ("model.bin",)
    assert (out_dir(tmp_path) / "rank-0.nsys-rep").is_file()
