"""Run the installed `tau` console script the way a user does, optionally at a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

TAU = str(Path(sys.executable).parent / "tau")


def run_tau(
    *args: str, cwd: Path, env: dict[str, str], answer: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`answer` is typed into a pseudo-terminal on stdin (so tau sees an interactive user);
    without it stdin is /dev/null, like CI or an agent."""
    if answer is None:
        return subprocess.run(
            [TAU, *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
    master, slave = pty.openpty()
    try:
        process = subprocess.Popen(
            [TAU, *args],
            cwd=cwd,
            env=env,
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.write(master, answer.encode() + b"\n")
        out, err = process.communicate(timeout=timeout)
    finally:
        os.close(master)
        os.close(slave)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single `error: ...` line of a failed command (never a traceback)."""
    # After a prompt the terminal, not stderr, carries the typed answer and its newline.
    lines = [
        "error: " + line.split("error: ", 1)[1]
        for line in result.stderr.splitlines()
        if "error: " in line
    ]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


# `python -c TRACED tau-args`: the tau CLI, with every HTTP exchange tau.kube sends written to
# stderr at exit (also after Ctrl-C) as `tau-request: METHOD PATH?QUERY`.
TRACED = """
import atexit, sys
from urllib.parse import urlencode
from tau.kube import client
sent = []
send = client.KubeClient.send
def traced(self, method, path, *, query=None, **kwargs):
    sent.append(method + " " + path + ("?" + urlencode(query) if query else ""))
    return send(self, method, path, query=query, **kwargs)
client.KubeClient.send = traced
atexit.register(lambda: sys.stderr.write("".join("tau-request: " + s + "\\n" for s in sent)))
sys.argv = ["tau", *sys.argv[1:]]
from tau.cli.main import main
main()
"""


def traced_popen(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", TRACED, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def traced_requests(stderr: str) -> list[str]:
    return [
        line.split(": ", 1)[1] for line in stderr.splitlines() if line.startswith("tau-request: ")
    ]
