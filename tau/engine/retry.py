"""Local evidence for the cluster lifecycle's failure classes.

The rules themselves — reasons, retryability, `resilience.*` defaults, backoff and the
TAU_RETRY_* env — are `tau.run.failures`, shared with the cluster lifecycle, so a retry
behaves the same on both engines; only what a class is read from differs (an exit status
here, pod status there).
"""

from __future__ import annotations

import signal

from tau.run import failures
from tau.run.failures import Cause, Failure

EXIT_OOM = 137  # 128 + SIGKILL, what a shell reports for an OOM-killed child


def classify_exit(exit_code: int) -> Failure:
    """A SIGKILL tau did not send is the kernel's OOM killer; nothing else is known."""
    if exit_code == 0:
        return Failure.COMPLETED
    if exit_code in (-signal.SIGKILL, EXIT_OOM):
        return Failure.OOM_KILLED
    return Failure.UNKNOWN


def exit_cause(reason: str, exit_code: int | None) -> Cause:
    """The cluster's categories and owners for a local process's end."""
    if reason == Failure.OOM_KILLED:
        return Cause(
            Failure.OOM_KILLED,
            failures.OOM,
            failures.RESEARCHER,
            "the process was killed by SIGKILL (the kernel's OOM killer)",
            "lower the memory footprint or run on a larger machine; the same config will likely "
            "OOM again",
        )
    exited = f"exited with code {exit_code}" if exit_code not in (None, 0) else "ended"
    return Cause(
        Failure.UNKNOWN,
        failures.APPLICATION,
        failures.RESEARCHER,
        f"the local process {exited}",
        "read its output with `tau logs`; fix the code or config, then resubmit",
    )
