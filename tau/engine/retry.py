"""Local evidence for the cluster lifecycle's failure classes.

The rules themselves — reasons, retryability, `resilience.*` defaults, backoff and the
TAU_RETRY_* env — are `tau.lifecycle.classify` and `tau.lifecycle.retry`, so a retry
behaves the same on both engines; only what a class is read from differs (an exit status
here, pod status there).
"""

from __future__ import annotations

import signal

from tau.lifecycle.classify import Failure

EXIT_OOM = 137  # 128 + SIGKILL, what a shell reports for an OOM-killed child


def classify_exit(exit_code: int) -> Failure:
    """A SIGKILL tau did not send is the kernel's OOM killer; nothing else is known."""
    if exit_code == 0:
        return Failure.COMPLETED
    if exit_code in (-signal.SIGKILL, EXIT_OOM):
        return Failure.OOM_KILLED
    return Failure.UNKNOWN
