"""`resilience.*` for local runs: the cluster lifecycle's classes, backoff and retry env.

Classification evidence differs (an exit status instead of pod status), the rules do not:
the reasons, their retryability, the backoff curve and the TAU_RETRY_* env come from
`tau.lifecycle.classify`, so a retry behaves the same on both engines.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping
from dataclasses import dataclass

from tau.lifecycle.classify import RETRY_ON_DEFAULT, Failure, backoff, retry_env
from tau.runconfig.durations import parse_duration
from tau.runconfig.models import DEFAULT_CHECKPOINT_ROOT

DEFAULT_BACKOFF_INITIAL = 30.0
DEFAULT_BACKOFF_MAX = 300.0
EXIT_OOM = 137  # 128 + SIGKILL, what a shell reports for an OOM-killed child


def classify_exit(exit_code: int) -> Failure:
    """A SIGKILL tau did not send is the kernel's OOM killer; nothing else is known."""
    if exit_code == 0:
        return Failure.COMPLETED
    if exit_code in (-signal.SIGKILL, EXIT_OOM):
        return Failure.OOM_KILLED
    return Failure.UNKNOWN


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 0
    retry_on: tuple[str, ...] = ()
    backoff_initial: float = DEFAULT_BACKOFF_INITIAL
    backoff_max: float = DEFAULT_BACKOFF_MAX
    checkpoint_path: str = ""

    def should_retry(self, reason: str) -> bool:
        return Failure(reason).retryable and reason.lower() in {r.lower() for r in self.retry_on}

    def backoff(self, retry: int) -> float:
        return backoff(retry, self.backoff_initial, self.backoff_max)

    def env(
        self, env: Mapping[str, str], *, checkpoint: str, retry: int, reason: str
    ) -> dict[str, str]:
        return dict(
            retry_env(
                tuple(env.items()),
                checkpoint=checkpoint,
                attempt=retry,
                maximum=self.max_retries,
                reason=reason,
            )
        )


def policy(resilience: object | None, name: str) -> RetryPolicy:
    """§6.2 defaults: retry_on Preempted, Evicted; backoff 30s doubling up to 5m."""
    checkpoint = getattr(resilience, "checkpoint_path", None) or f"{DEFAULT_CHECKPOINT_ROOT}/{name}"
    if resilience is None or not getattr(resilience, "max_retries", 0):
        return RetryPolicy(checkpoint_path=checkpoint)
    return RetryPolicy(
        max_retries=int(resilience.max_retries),
        retry_on=tuple(getattr(resilience, "retry_on", None) or RETRY_ON_DEFAULT),
        backoff_initial=_seconds(getattr(resilience, "backoff_initial", None), 30.0),
        backoff_max=_seconds(getattr(resilience, "backoff_max", None), 300.0),
        checkpoint_path=checkpoint,
    )


def _seconds(value: str | None, default: float) -> float:
    seconds = parse_duration(value) if value else 0.0
    return seconds if seconds > 0 else default
