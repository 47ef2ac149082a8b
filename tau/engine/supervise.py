"""Start a local run and supervise it to the end: attempts, retries, cancel, publish, evidence.

The supervising `tau` process owns the record while the run lives. The target runs in its
own session (process group), so cancelling kills the whole tree and a Ctrl-C in the
terminal reaches tau, not the target, which then cancels the run cleanly.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tau import keys
from tau.engine import procgroup, rayruntime, records
from tau.engine.plan import LocalPlan
from tau.engine.records import Attempt, LocalRun
from tau.engine.retry import classify_exit
from tau.errors import TauError
from tau.run.failures import Failure, backoff, format_duration, retry_env

GRACE_SECONDS = 10.0
POLL_SECONDS = 0.1

Echo = Callable[[str], None]


class Supervisor:
    def __init__(self, run: LocalRun, plan: LocalPlan, *, echo: Echo, stream: Echo | None):
        self.run = run
        self.plan = plan
        self.echo = echo
        self.stream = stream
        self.cancel = False
        self.child: subprocess.Popen[bytes] | None = None
        self.kill_deadline: float | None = None

    # signals -------------------------------------------------------------------------------

    def _on_signal(self, signum: int, _frame: object) -> None:
        if not self.cancel:
            self.echo(f"cancelling local run {self.run.name} ({signal.Signals(signum).name})")
        self.cancel = True

    def _terminate_group(self) -> None:
        if self.child is None:
            return
        if self.kill_deadline is None:
            self.kill_deadline = time.monotonic() + GRACE_SECONDS
            procgroup.send(self.child.pid, signal.SIGTERM)
        elif time.monotonic() > self.kill_deadline:
            procgroup.send(self.child.pid, signal.SIGKILL)

    # the loop ------------------------------------------------------------------------------

    def supervise(self, first_env: dict[str, str]) -> LocalRun:
        # A closed terminal (SIGHUP) cancels like Ctrl-C rather than leaving the target
        # running behind a dead supervisor; `nohup tau run ...` keeps SIGHUP ignored.
        hangup = [] if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN else [signal.SIGHUP]
        previous = {
            sig: signal.signal(sig, self._on_signal)
            for sig in (signal.SIGINT, signal.SIGTERM, *hangup)
        }
        try:
            return self._loop(first_env)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _loop(self, env: dict[str, str]) -> LocalRun:
        run, policy = self.run, self.plan.policy
        number = len(run.attempts)
        while True:
            number += 1
            reason = self._attempt(number, env)
            if reason == Failure.COMPLETED:
                return self._finish(records.SUCCEEDED, "", "")
            if reason == records.CANCELLED or self.cancel:
                return self._finish(records.CANCELLED, "Cancelled", "cancelled by the user")
            exit_text = _exit_text(run.current)
            if policy is None:
                return self._finish(records.FAILED, reason, exit_text)
            if not policy.allows(Failure(reason)):
                listed = ", ".join(policy.retry_on)
                return self._finish(
                    records.FAILED,
                    reason,
                    f"local run {run.name} failed ({reason}) — not in retry_on list [{listed}]; "
                    f"{exit_text}",
                )
            retry = sum(1 for a in run.attempts if a.retry_reason) + 1
            if retry > policy.max_retries:
                return self._finish(
                    records.FAILED,
                    reason,
                    f"local run {run.name} exhausted all {policy.max_retries} retries; {exit_text}",
                )
            delay = backoff(retry, policy.backoff_initial, policy.backoff_max)
            self.echo(
                f"attempt {retry}/{policy.max_retries} failed ({reason}) — retrying in "
                f"{format_duration(delay)}"
            )
            if not self._sleep(delay):
                return self._finish(records.CANCELLED, "Cancelled", "cancelled during backoff")
            env = dict(
                retry_env(
                    tuple(env.items()),
                    checkpoint=self.plan.paths.local(policy.checkpoint),
                    attempt=retry,
                    maximum=policy.max_retries,
                    reason=reason,
                )
            )
            self.echo(f"retry {retry}/{policy.max_retries} started, watching...")

    def _sleep(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.cancel:
                return False
            time.sleep(min(POLL_SECONDS, max(deadline - time.monotonic(), 0)))
        return not self.cancel

    def _attempt(self, number: int, env: dict[str, str]) -> str:
        run, plan = self.run, self.plan
        hot = plan.paths.hot_dir
        shutil.rmtree(hot, ignore_errors=True)
        hot.mkdir(parents=True)
        if plan.staging_dir is not None:
            plan.staging_dir.mkdir(parents=True, exist_ok=True)
        for path in (plan.cwd, plan.output_dir):
            path.mkdir(parents=True, exist_ok=True)
        log_path = run.directory / f"attempt-{number}.log"
        attempt = Attempt(
            number=number,
            log=str(log_path),
            retry_reason=env.get(keys.ENV_RETRY_REASON, "") if number > 1 else "",
        )
        run.attempts.append(attempt)
        run.state = records.STARTING
        records.save(run)
        head = None
        if plan.ray_resources is not None:
            try:
                head = rayruntime.start(plan.ray_resources, log_path, env)
            except TauError as error:
                attempt.finished_at, attempt.reason = records.now(), Failure.UNKNOWN
                run.message = error.one_line()
                records.save(run)
                return Failure.UNKNOWN
            attempt.ray_pgid, attempt.ray_stamp = head.pgid, head.stamp
            env = {**env, **head.driver_env}
            records.save(run)
            if self.cancel:
                rayruntime.stop(head)
                return records.CANCELLED
        with open(log_path, "ab") as log:
            try:
                self.child = subprocess.Popen(
                    self.plan.argv,
                    cwd=plan.cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as error:
                if head is not None:
                    rayruntime.stop(head)
                attempt.finished_at = records.now()
                attempt.reason = Failure.UNKNOWN
                run.message = f"process start failed: {error.strerror}"
                records.save(run)
                return Failure.UNKNOWN
        attempt.pid = self.child.pid
        attempt.pid_stamp = procgroup.start_stamp(self.child.pid)
        attempt.started_at = records.now()
        run.started_at = run.started_at or attempt.started_at
        run.state = records.RUNNING
        records.save(run)
        code = self._wait(log_path)
        procgroup.send(self.child.pid, signal.SIGKILL)  # leftovers die with the "pod"
        if head is not None:
            rayruntime.stop(head)
        attempt.finished_at = records.now()
        attempt.exit_code = code
        attempt.signal = -code if code < 0 else None
        reason = records.CANCELLED if self.cancel else str(classify_exit(code))
        if reason == Failure.COMPLETED and plan.staging_dir is not None:
            reason = self._publish()
        attempt.reason = reason
        shutil.rmtree(hot, ignore_errors=True)
        self.child, self.kill_deadline = None, None
        records.save(run)
        return reason

    def _wait(self, log_path: Path) -> int:
        assert self.child is not None
        offset = 0
        while True:
            code = self.child.poll()
            if self.stream is not None:
                offset = _pump(log_path, offset, self.stream, final=code is not None)
            if code is not None:
                return code
            if self.cancel:
                self._terminate_group()
            time.sleep(POLL_SECONDS)

    def _publish(self) -> str:
        from tau.evidence.publish import publish_staged

        plan = self.plan
        assert plan.staging_dir is not None and plan.intent.publication_id
        try:
            publication = publish_staged(
                plan.staging_dir, plan.output_dir, plan.intent.publication_id
            )
        except TauError as error:
            self.run.message = f"staged publish refused: {error.one_line()}"
            return Failure.UNKNOWN
        self.echo(
            f"published {len(publication.files)} file(s) to {publication.path} "
            "(completion marker written)"
        )
        return Failure.COMPLETED

    def _finish(self, state: str, reason: str, message: str) -> LocalRun:
        run = self.run
        run.state, run.reason = state, reason
        run.message = message or run.message if state != records.SUCCEEDED else ""
        run.finished_at = records.now()
        run.supervisor_pid = None
        records.save(run)
        from tau.engine.evidence import record_evidence

        run.evidence = record_evidence(run, self.plan, echo=self.echo)
        records.save(run)
        return run


def _pump(path: Path, offset: int, stream: Echo, *, final: bool = False) -> int:
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return offset
    end = len(data) if final else data.rfind(b"\n") + 1
    if end:
        for line in data[:end].decode(errors="replace").splitlines():
            stream(line)
    return offset + end


def _exit_text(attempt: Attempt | None) -> str:
    if attempt is None:
        return "the process did not start"
    if attempt.signal:
        return f"killed by {signal.Signals(attempt.signal).name}"
    return f"exit code {attempt.exit_code}"
