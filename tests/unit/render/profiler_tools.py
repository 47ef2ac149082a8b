"""Stand-ins for NVIDIA nsys and ncu, put first on PATH so the rendered profiler stage runs.

Each records its argv (one Python literal line per call in `$PROFILER_STANDIN_LOG`: the
real-node image has only python3-minimal, which has no json), runs the target
with `PROFILED_BY=<tool>` in its env, writes `<-o base>.<tool>-rep` as the real tools do, and
exits with the target's code. The nsys stand-in ends the target with SIGTERM when
`--duration` elapses, and on its own SIGTERM, and then exits 143 with the report written, as
nsys does when its capture window closes or it is stopped.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

LOG_ENV = "PROFILER_STANDIN_LOG"

_SOURCE = """#!{python}
import os, signal, subprocess, sys

tool = os.path.basename(sys.argv[0])
args = sys.argv[1:]
with open(os.environ["{log_env}"], "a") as log:
    log.write(repr({{"tool": tool, "argv": args}}) + "\\n")
if tool == "nsys":
    assert args.pop(0) == "profile", "nsys must be called as nsys profile"
options = {{}}
while args and args[0].startswith("-"):
    flag = args.pop(0)
    if "=" in flag:
        key, value = flag.split("=", 1)
    elif flag in ("-o", "--target-processes"):
        key, value = flag, args.pop(0)
    else:
        key, value = flag, ""
    options[key] = value
base = options.get("--output") or options["-o"]
duration = float(options.get("--duration", 0)) or None
child = subprocess.Popen(args, env={{**os.environ, "PROFILED_BY": tool}})


def finish(code):
    with open(base + "." + tool + "-rep", "w") as report:
        report.write("report of " + " ".join(args) + "\\n")
    sys.exit(code)


stopped = []


def stop(*_):
    stopped.append(True)
    child.terminate()


signal.signal(signal.SIGTERM, stop)
try:
    code = child.wait(timeout=duration)
except subprocess.TimeoutExpired:
    stop()
    code = child.wait()
finish(143 if stopped else code)
"""


def install(bin_dir: Path, python: str = sys.executable) -> None:
    """Write executable `nsys` and `ncu` stand-ins into `bin_dir`, run by `python` (this
    interpreter, or the image's when they are shipped in one)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for tool in ("nsys", "ncu"):
        path = bin_dir / tool
        path.write_text(_SOURCE.format(python=python, log_env=LOG_ENV))
        path.chmod(0o755)


def calls(log: Path) -> list[dict]:
    """Every stand-in call so far: `{"tool": ..., "argv": [...]}`."""
    if not log.exists():
        return []
    return [ast.literal_eval(line) for line in log.read_text().splitlines()]
