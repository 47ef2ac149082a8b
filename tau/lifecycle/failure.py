"""Failure classes, retry eligibility, backoff and the retry env: the pure half of §6.

Shared by the cluster lifecycle and the local engine so both classify, retry and resume
the same way; the evidence each one classifies from (pod status vs. a local exit status)
lives with its caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tau import keys
from tau.runconfig.durations import parse_duration
from tau.runconfig.models import DEFAULT_CHECKPOINT_ROOT, RETRY_REASONS

UNKNOWN = "Unknown"
OOM_KILLED = "OOMKilled"
PREEMPTED = "Preempted"
EVICTED = "Evicted"
COMPLETED = "Completed"
RUNNING = "Running"

RETRYABLE = frozenset(RETRY_REASONS)
DEFAULT_RETRY_ON = (PREEMPTED, EVICTED)
DEFAULT_BACKOFF_INITIAL = 30.0
DEFAULT_BACKOFF_MAX = 300.0


def is_retryable(reason: str) -> bool:
    """Only OOMKilled, Preempted and Evicted; Unknown never is (not even via resume)."""
    return reason in RETRYABLE


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 0
    retry_on: tuple[str, ...] = ()
    backoff_initial: float = DEFAULT_BACKOFF_INITIAL
    backoff_max: float = DEFAULT_BACKOFF_MAX
    checkpoint_path: str = ""

    def should_retry(self, reason: str) -> bool:
        wanted = {r.lower() for r in self.retry_on}
        return is_retryable(reason) and reason.lower() in wanted

    def backoff(self, attempt: int) -> float:
        """`min(initial * 2^(attempt-1), max)` for retry number `attempt` (1-based)."""
        delay = self.backoff_initial
        for _ in range(max(attempt - 1, 0)):
            delay *= 2
            if delay >= self.backoff_max:
                return self.backoff_max
        return min(delay, self.backoff_max)

    def describe(self) -> str:
        return f"max {self.max_retries} retries, retry on: {', '.join(self.retry_on)}"


def retry_policy(resilience: object | None, name: str) -> RetryPolicy:
    """Defaults of §6.2 applied to a run config's `resilience` block (None = disabled)."""
    if resilience is None or not getattr(resilience, "max_retries", 0):
        return RetryPolicy(checkpoint_path=_checkpoint(resilience, name))
    initial = _duration(getattr(resilience, "backoff_initial", None), DEFAULT_BACKOFF_INITIAL)
    maximum = _duration(getattr(resilience, "backoff_max", None), DEFAULT_BACKOFF_MAX)
    return RetryPolicy(
        max_retries=int(resilience.max_retries),
        retry_on=tuple(getattr(resilience, "retry_on", None) or DEFAULT_RETRY_ON),
        backoff_initial=initial,
        backoff_max=maximum,
        checkpoint_path=_checkpoint(resilience, name),
    )


def retry_env(
    env: Mapping[str, str], *, checkpoint: str, attempt: int, max_retries: int, reason: str
) -> dict[str, str]:
    """User env with any previous retry/resume entries replaced by this attempt's."""
    kept = {k: v for k, v in env.items() if k not in keys.USER_SETTABLE_TAU_ENV}
    return kept | {
        keys.ENV_RESUME_FROM: checkpoint,
        keys.ENV_RETRY_ATTEMPT: str(attempt),
        keys.ENV_RETRY_MAX: str(max_retries),
        keys.ENV_RETRY_REASON: reason,
    }


def resume_env(env: Mapping[str, str], checkpoint: str) -> dict[str, str]:
    return {**env, keys.ENV_RESUME_FROM: checkpoint}


def _duration(value: str | None, default: float) -> float:
    if not value:
        return default
    seconds = parse_duration(value)
    return seconds if seconds > 0 else default


def _checkpoint(resilience: object | None, name: str) -> str:
    path = getattr(resilience, "checkpoint_path", None) if resilience is not None else None
    return path or f"{DEFAULT_CHECKPOINT_ROOT}/{name}"
