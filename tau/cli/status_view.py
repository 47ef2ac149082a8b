"""`tau run status` for a human: the RunStatus document laid out with rich.

tau/lifecycle and tau/engine build the document (the same one `-o json|yaml` prints); this
module only arranges it on a terminal, so the machine and human forms can never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape

from tau.run.status import ACTIVE, DONE, PENDING, SKIPPED, WARNING

MARKERS = {DONE: "[x]", ACTIVE: "[>]", WARNING: "[!]", SKIPPED: "[-]", PENDING: "[ ]"}


def render(doc: Mapping[str, Any], console: Console) -> None:
    """The human layout of a status document (cluster and local runs alike)."""
    meta, status = doc["metadata"], doc["status"]
    kind = status["workloadKind"] or "Run"
    console.print(f"[bold]{kind} {escape(meta['namespace'])}/{escape(meta['name'])}[/]")
    console.print(f"State: [bold]{escape(status['displayState'])}[/]")
    cause = doc.get("failure")
    if cause:
        owner = f" (owner: {cause['owner']})" if cause["owner"] else ""
        console.print(
            f"Failure: [bold]{escape(cause['reason'])}[/] — {escape(cause['category'])}: "
            f"{escape(cause['summary'])}{escape(owner)}"
        )
    console.print("\n[bold]Progress[/]")
    for phase in doc["phases"]:
        marker = MARKERS[phase["status"]]
        style = {"done": "green", "warning": "red", "active": "yellow"}.get(phase["status"], "dim")
        console.print(
            f"  [{style}]{escape(marker)}[/]  {phase['name']:<22} {escape(phase['detail'])}"
        )
        if phase.get("hint") and phase["status"] in ("active", "warning"):
            console.print(f"      Hint: {escape(phase['hint'])}")
        if phase.get("owner") and phase["status"] in ("active", "warning"):
            console.print(f"      Owner: {escape(phase['owner'])}")
    console.print("\n[bold]Resources[/]")
    lines = _resource_lines(doc)
    for line in lines or ["No runtime resources observed."]:
        console.print(f"  {escape(line)}")
    if "metrics" in doc:
        console.print("\n[bold]Run profile[/]")
        for row in doc["profile"] or [{"name": "gpu_runtime", "value": "unavailable"}]:
            console.print(f"  {escape(row['name'])}: {escape(str(row['value']))}")
    console.print("\n[bold]Attention[/]")
    attention = [d for d in doc["diagnostics"] if d["severity"] in ("warning", "error")]
    for item in attention:
        console.print(f"  [{escape(item['code'])}] {escape(item['message'])}")
        if item.get("suggestion"):
            console.print(f"      {escape(item['suggestion'])}")
    if not attention:
        console.print("  No current issues.")
    console.print("\n[bold]Next[/]")
    for action in doc["actions"]:
        console.print(f"  {escape(action['command']['shell'])}")
        console.print(f"      {escape(action['description'])}")
    if not doc["actions"]:
        console.print("  No action required.")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _ahead(position: int) -> str:
    if position == 0:
        return "next to be admitted when quota frees"
    return f"{position} workload{'s' if position != 1 else ''} ahead of it"


def _resource_lines(doc: Mapping[str, Any]) -> list[str]:
    lines = []
    workloads = doc["workloads"]
    if workloads:
        admitted = sum(1 for w in workloads if w["admitted"] or w["phase"] == "Finished")
        queues = ",".join(sorted({w["queue"] for w in workloads if w["queue"]}))
        flavors = ",".join(sorted({f for w in workloads for f in w["flavors"]}))
        line = f"Kueue: {admitted}/{len(workloads)} workloads admitted (queue {queues})"
        lines.append(line + (f", flavor {flavors}" if flavors else ""))
        for w in workloads:
            if w["queuePosition"] is not None:
                at = w["queuePosition"]
                lines.append(
                    f"Queue: {w['name']} is {_ordinal(at['inLocalQueue'] + 1)} in LocalQueue"
                    f" {at['localQueue']} ({_ordinal(at['inClusterQueue'] + 1)} in its"
                    f" ClusterQueue); {_ahead(at['inLocalQueue'])}"
                )
            ahead = (w.get("waiting") or {}).get("ahead")
            if ahead:
                names = ", ".join(f"{a['name']} (priority {a['priority']})" for a in ahead[:5])
                more = f" and {len(ahead) - 5} more" if len(ahead) > 5 else ""
                lines.append(f"Ahead of {w['name']}: {names}{more}")
    pods = doc["pods"]
    if pods:
        ready = sum(1 for p in pods if p["ready"])
        nodes = sorted({p["node"] for p in pods if p["node"]})
        restarts = sum(p["restarts"] for p in pods)
        lines.append(
            f"Pods: {ready}/{len(pods)} ready, {restarts} restarts, {len(nodes)} nodes"
            + (f" ({', '.join(nodes[:4])}{', ...' if len(nodes) > 4 else ''})" if nodes else "")
        )
    if doc.get("rayJob", {}).get("rayClusterName"):
        lines.append(f"Ray cluster: {doc['rayJob']['rayClusterName']}")
    return lines
