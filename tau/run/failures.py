"""The failure vocabulary and the retry arithmetic both engines share.

`Failure` is the retry vocabulary of the recovery guide (what `resilience.retry_on` names);
a `Cause` adds what happened and whose move it is. Where the evidence comes from differs
(pod status on a cluster, an exit status locally); what a class means, whether it is
retried, how long tau backs off and which TAU_RETRY_* env the next attempt sees do not.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tau import keys
from tau.jsontypes import JSONObject
from tau.runconfig.managed import ManagedManifest
from tau.runconfig.models import DEFAULT_CHECKPOINT_ROOT, DEFAULT_RETRY_ON, RunConfig

RESEARCHER = "researcher"
QUEUE_OWNER = "platform/queue owner"
NODE_OWNER = "platform/node-pool owner"
PLATFORM = "platform operator"
IMAGE_OWNER = "researcher (image tag) or the image's owning team"


class Failure(StrEnum):
    UNKNOWN = "Unknown"
    OOM_KILLED = "OOMKilled"
    PREEMPTED = "Preempted"
    EVICTED = "Evicted"
    COMPLETED = "Completed"
    RUNNING = "Running"

    @property
    def retryable(self) -> bool:
        return self in (Failure.OOM_KILLED, Failure.PREEMPTED, Failure.EVICTED)


# Categories: the kind of failure a person acts on. Several map onto one retry reason (a node
# shutdown and a scheduler preemption are both `Preempted`: DisruptionTarget), but they have
# different owners.
PREEMPTION = "preemption"
NODE_DISRUPTION = "node disruption"
EVICTION = "eviction"
OOM = "out of memory"
APPLICATION = "application crash"
IMAGE = "image pull"
CONTAINER_CONFIG = "container configuration"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Cause:
    reason: Failure
    category: str
    owner: str
    summary: str
    hint: str

    def to_dict(self) -> JSONObject:
        return {
            "reason": str(self.reason),
            "category": self.category,
            "owner": self.owner,
            "summary": self.summary,
            "hint": self.hint,
            "retryable": self.reason.retryable,
        }


COMPLETED = Cause(Failure.COMPLETED, "completed", "", "the run completed", "")
RUNNING = Cause(Failure.RUNNING, "running", "", "the run has not failed", "")


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int
    retry_on: tuple[str, ...]
    backoff_initial: float
    backoff_max: float
    checkpoint: str

    def allows(self, failure: Failure) -> bool:
        return failure.retryable and str(failure).lower() in {r.lower() for r in self.retry_on}


def policy_from(config: RunConfig | ManagedManifest, name: str) -> RetryPolicy | None:
    """The run config's retry policy, or None when retries are off (or the config is a
    managed manifest, whose trainer owns its own recovery)."""
    from tau.runconfig.durations import parse_duration

    block = config.resilience if isinstance(config, RunConfig) else None
    if block is None or not block.max_retries or block.max_retries <= 0:
        return None
    initial = parse_duration(block.backoff_initial) if block.backoff_initial else 0
    maximum = parse_duration(block.backoff_max) if block.backoff_max else 0
    return RetryPolicy(
        max_retries=block.max_retries,
        retry_on=tuple(block.retry_on or DEFAULT_RETRY_ON),
        backoff_initial=initial if initial > 0 else 30.0,
        backoff_max=maximum if maximum > 0 else 300.0,
        checkpoint=block.checkpoint_path or f"{DEFAULT_CHECKPOINT_ROOT}/{name}",
    )


def backoff(attempt: int, initial: float, maximum: float) -> float:
    """min(initial * 2^(attempt-1), maximum) seconds for retry `attempt` (1-based)."""
    delay = initial
    for _ in range(max(0, attempt - 1)):
        delay *= 2
        if delay >= maximum:
            return maximum
    return min(delay, maximum)


def retry_env(
    env: tuple[tuple[str, str], ...], *, checkpoint: str, attempt: int, maximum: int, reason: str
) -> tuple[tuple[str, str], ...]:
    """Replace earlier TAU_RESUME_FROM / TAU_RETRY_* entries with this attempt's values; an
    empty `checkpoint` (nothing durable to resume from) sets no TAU_RESUME_FROM."""
    dropped = set(keys.USER_SETTABLE_TAU_ENV)
    kept = [(k, v) for k, v in env if k not in dropped]
    return (
        *kept,
        *(((keys.ENV_RESUME_FROM, checkpoint),) if checkpoint else ()),
        (keys.ENV_RETRY_ATTEMPT, str(attempt)),
        (keys.ENV_RETRY_MAX, str(maximum)),
        (keys.ENV_RETRY_REASON, reason),
    )


def resume_env(env: tuple[tuple[str, str], ...], checkpoint: str) -> tuple[tuple[str, str], ...]:
    kept = [(k, v) for k, v in env if k != keys.ENV_RESUME_FROM]
    return (*kept, (keys.ENV_RESUME_FROM, checkpoint))


def format_duration(seconds: float) -> str:
    """Go-style: 30s, 1m0s, 2m30s, 1h0m0s."""
    seconds = round(seconds, 3)
    if seconds < 60:
        return f"{seconds:g}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes}m{secs}s"
