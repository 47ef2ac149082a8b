"""One interface for a run's verbs, whichever engine runs it (`tau.run.select` picks).

Everything a backend prints goes through a `Terminal` the CLI hands in, so the printers
stay the CLI's: a backend builds plain data and decides only whether the verb prints a
document (`-o json|yaml`) or the human form; the CLI's callbacks type the document, pick its
format and lay out the terminal view.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tau.lifecycle.logs import LogOptions
    from tau.run.plan import RunPlan


@dataclass(frozen=True)
class Terminal:
    out: Callable[[str], None]
    err: Callable[[str], None]
    table: Callable[[Sequence[str], Sequence[Sequence[object]]], None]
    # The verb's `-o json|yaml` document, printed in the format the CLI was asked for.
    document: Callable[[Mapping[str, object]], None]
    # The human layout of a RunStatus document (`tau run status` without -o).
    status: Callable[[Mapping[str, object]], None]
    # Waits out a retry's backoff (seconds), showing a countdown where stderr is a terminal.
    countdown: Callable[[float], None]

    def history(self, entries: Sequence[Mapping[str, object]]) -> None:
        """A run's retry and resume entries: one table whichever engine ran it."""
        if not entries:
            self.out("No retries or resumes recorded.")
            return
        rows = [[e["time"], e["event"], e["attempt"], e["failure"]] for e in entries]
        self.table(["TIME", "EVENT", "ATTEMPT", "FAILURE"], rows)


def structured(output: str) -> bool:
    """`-o json|yaml`: the verb prints its document, not its human form."""
    return output in ("json", "yaml")


@dataclass(frozen=True)
class Route:
    """The cluster route flags (-n, --workspace, --context, --project); the local engine
    refuses none of them on read verbs, it has one place to look."""

    context: str = ""
    namespace: str = ""
    workspace: str = ""
    project: str = ""
    system_namespace: str = "tau-system"


@dataclass(frozen=True)
class StatusRequest:
    name: str
    output: str = "table"
    watch: bool = False
    interval: str = "2s"
    seconds: float = 2.0
    max_iterations: int = 0
    run_profile: bool = False
    diagnostic_hints: bool = False


@dataclass(frozen=True)
class ListRequest:
    output: str = "table"
    queue: str = ""
    include_external: bool = False


@dataclass(frozen=True)
class CancelRequest:
    name: str
    wait: bool = True
    teardown_timeout: float = 720.0
    interval: float = 2.0
    # The longest wait for a MultiKueue run's manager Workloads to go (`--timeout`).
    timeout: float = 30.0


@dataclass(frozen=True)
class GetRequest:
    name: str
    artifact: str = ""
    path: str = ""
    pvc: str = ""
    output: str = "table"


@dataclass(frozen=True)
class ResumeRequest:
    name: str
    config: str
    checkpoint: str = ""
    force: bool = False
    dry_run: str = ""


class Backend(Protocol):
    """The verbs of one engine. `submit` takes the planner's `RunPlan`; the read verbs take
    a run name."""

    def submit(self, plan: RunPlan, terminal: Terminal, *, output: str = "") -> None: ...

    def status(self, request: StatusRequest, terminal: Terminal) -> None: ...

    def list(self, request: ListRequest, terminal: Terminal) -> None: ...

    def logs(
        self, name: str, options: LogOptions, terminal: Terminal, *, discover: bool = False
    ) -> None:
        """`discover` (`tau logs` without route flags): look beyond the current route."""

    def cancel(self, request: CancelRequest, terminal: Terminal) -> None: ...

    def get(self, request: GetRequest, terminal: Terminal) -> None: ...

    def history(self, name: str, output: str, terminal: Terminal) -> None: ...

    def resume(self, request: ResumeRequest, terminal: Terminal) -> None: ...
