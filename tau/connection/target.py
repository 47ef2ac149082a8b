"""Where a command reaches a run's cluster: which kubeconfig, context and namespace.

Lifecycle verbs, `tau data` and the Portal's run detail all take this route.

Order: explicit `--context`/`-n` → `--workspace` (a cached connection) → the repository's
workspace connection → the kubeconfig's current context. The result also says how to
repeat the command (the `--context`/`--namespace` suffix and a single-path KUBECONFIG), so
printed next steps work when copied.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from tau import keys
from tau.connection.connecting import Interaction, ensure_connection
from tau.connection.descriptor import DescriptorNotFound
from tau.connection.kubeconfig import load_merged
from tau.connection.localstate import ConnectionState, cached_connections
from tau.errors import TauError, UsageError
from tau.kube import KubeClient


@dataclass(frozen=True)
class Target:
    kubeconfig: str | None
    context: str
    namespace: str
    workspace: str = ""
    source: str = ""
    system_namespace: str = ""

    def client(self) -> KubeClient:
        return KubeClient(self.kubeconfig, self.context)

    @property
    def isolated(self) -> bool:
        """Reached through a workspace connection: tau finds its kubeconfig by `--workspace`."""
        return bool(self.workspace) and self.source in ("connection", "cached")

    def route_args(self) -> list[str]:
        """The flags that make a copied `tau` command reach this run from anywhere."""
        if self.isolated:
            return ["--workspace", self.workspace, "--namespace", self.namespace]
        args = []
        if self.context:
            args += ["--context", self.context]
        return [*args, "--namespace", self.namespace]

    def kubeconfig_env(self) -> dict[str, str]:
        """KUBECONFIG for copied `tau` commands: none through a workspace connection (tau
        uses the isolated kubeconfig itself), else the one path in use, if it is one."""
        if self.isolated:
            return {}
        return self.kubectl_env()

    def kubectl_env(self) -> dict[str, str]:
        """KUBECONFIG for copied kubectl commands (kubectl knows no workspace connection)."""
        path = self.kubeconfig or os.environ.get(keys.ENV_KUBECONFIG, "")
        if path and os.pathsep not in path:
            return {keys.ENV_KUBECONFIG: path}
        return {}


def terminal_interaction() -> Interaction:
    def ask(question: str) -> str:
        answer: str = click.prompt(question, default="", show_default=False, err=True)
        return answer

    def say(text: str) -> None:
        click.echo(text, err=True)

    return Interaction(interactive=sys.stdin.isatty(), ask=ask, say=say)


def _context_namespace(kubeconfig: str | None, context: str) -> str:
    """The namespace a kubeconfig context names, else "default" (kubectl's rule)."""
    files = [Path(p) for p in kubeconfig.split(os.pathsep)] if kubeconfig else None
    try:
        merged = load_merged(files)
    except TauError:  # an unreadable kubeconfig is reported by the first API call
        return "default"
    name = context or merged.get("current-context") or ""
    for item in merged.get("contexts") or []:
        if item.get("name") == name:
            return str((item.get("context") or {}).get("namespace") or "default")
    return "default"


def resolve_target(
    *,
    context: str = "",
    namespace: str = "",
    workspace: str = "",
    project: str = "",
    start: Path | None = None,
) -> Target:
    start = start or Path.cwd()
    if context:
        return Target(
            None, context, namespace or _context_namespace(None, context), source="--context"
        )
    if workspace:
        cached = cached_route(workspace)
        if cached is not None:
            return Target(
                cached.kubeconfig,
                cached.context,
                namespace or cached.namespace,
                workspace,
                "cached",
                cached.system_namespace,
            )
    try:
        conn = ensure_connection(start, project=project, interaction=terminal_interaction())
    except DescriptorNotFound:
        if workspace:
            raise UsageError(
                f'no cached connection for workspace "{workspace}" on this machine',
                hint="run `tau workspace connection` in its repository, or pass --context/-n",
            ) from None
        return Target(None, "", namespace or _context_namespace(None, ""), source="kubeconfig")
    return Target(
        str(conn.kubeconfig),
        conn.context,
        namespace or conn.namespace,
        conn.state.workspace,
        "connection",
        conn.state.system_namespace,
    )


def cached_route(workspace: str) -> Target | None:
    for state in cached_connections():
        if state.workspace == workspace and Path(state.kubeconfig_path).is_file():
            return _cached_target(state)
    return None


def cached_targets() -> list[Target]:
    """Every cached connection (one per workspace/context/namespace), newest first."""
    seen, targets = set(), []
    for state in cached_connections():
        key = (state.context_name, state.namespace, state.kubeconfig_path)
        if key in seen or not Path(state.kubeconfig_path).is_file():
            continue
        seen.add(key)
        targets.append(_cached_target(state))
    return targets


def _cached_target(state: ConnectionState) -> Target:
    return Target(
        state.kubeconfig_path,
        state.context_name,
        state.namespace,
        state.workspace,
        "cached",
        state.system_namespace,
    )
