"""``python -m hack.localcluster up|down|status|env|build|kubeconfig``: the developer's local
cluster."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

from . import nodeimage
from .build import BuildError, build
from .cluster import ClusterError, LocalCluster, start


def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "taugrid" / "localcluster" / "default"


REGISTRY_ENV = "TAU_LOCAL_REGISTRY"


def _env_lines(cluster: LocalCluster) -> list[str]:
    return [
        f"export KUBECONFIG={shlex.quote(str(cluster.kubeconfig))}",
        f"export PATH={shlex.quote(str(cluster.bin_dir))}:$PATH",
        # Push images here (plain HTTP, e.g. `skopeo copy --dest-tls-verify=false`); pods on
        # the real node pull them by this same host:port.
        f"export {REGISTRY_ENV}={shlex.quote(cluster.registry)}",
    ]


def _build(_: argparse.Namespace) -> int:
    started = time.monotonic()
    artifacts = build()
    print(f"binaries: {artifacts.bin} ({time.monotonic() - started:.0f}s)", file=sys.stderr)
    for layout in (nodeimage.build_layout(nodeimage.cache()),
                   nodeimage.build_python_layout(nodeimage.cache())):  # fmt: skip
        print(f"image layout: {layout} ({time.monotonic() - started:.0f}s)", file=sys.stderr)
    for name, version in artifacts.versions().items():
        print(f"  {name} {version}", file=sys.stderr)
    return 0


def _up(args: argparse.Namespace) -> int:
    started = time.monotonic()
    cluster = start(
        args.state_dir,
        build(),
        progress=lambda line: print(f"localcluster: {line}", file=sys.stderr),
    )
    print(
        f"local cluster ready at {cluster.server} in {time.monotonic() - started:.0f}s; "
        f"logs in {cluster.log_dir}. Use it with:",
        file=sys.stderr,
    )
    print("\n".join(_env_lines(cluster)))
    return 0


def _down(args: argparse.Namespace) -> int:
    LocalCluster.load(args.state_dir).stop()
    print(f"stopped the local cluster in {args.state_dir}", file=sys.stderr)
    return 0


def _status(args: argparse.Namespace) -> int:
    cluster = LocalCluster.load(args.state_dir)
    components = cluster.component_status()
    if not any(components.values()):
        print(f"local cluster in {args.state_dir}: stopped (start it with `up`)")
        return 1
    for name, alive in components.items():
        print(f"{name:<24} {'running' if alive else 'stopped'}")
    ready = cluster.readyz()
    print(f"{'apiserver /readyz':<24} {'ok' if ready else 'not ready'} ({cluster.server})")
    print(f"{'registry':<24} {cluster.registry}")
    return 0 if ready and components and all(components.values()) else 1


def _env(args: argparse.Namespace) -> int:
    print("\n".join(_env_lines(LocalCluster.load(args.state_dir))))
    return 0


def _kubeconfig(args: argparse.Namespace) -> int:
    """A user's kubeconfig, as a platform hands one to a researcher: a client certificate
    signed by the cluster CA, with no rights until a RoleBinding (the workspace's) grants them."""
    path = LocalCluster.load(args.state_dir).mint_kubeconfig(
        args.user, args.group, args.output.resolve(), args.context
    )
    print(f"kubeconfig for {args.user} (context {args.context}) written to {path}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.localcluster", description=__doc__)
    parser.add_argument(
        "--state-dir",
        type=Path,
        default=default_state_dir(),
        help="where the cluster keeps its kubeconfig, certificates, logs and pids "
        "(default: %(default)s)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name, handler, text in (
        ("build", _build, "build (or find cached) binaries for the pinned versions"),
        ("up", _up, "start the control plane and print the shell exports to use it"),
        ("down", _down, "stop every process of the cluster"),
        ("status", _status, "show which components run; exit 1 unless all are up"),
        ("env", _env, f"print `export KUBECONFIG=...`, `PATH=...` and `{REGISTRY_ENV}=...`"),
    ):
        commands.add_parser(name, help=text).set_defaults(handler=handler)
    minted = commands.add_parser(
        "kubeconfig", help="write a kubeconfig for USER (a CA-signed client certificate)"
    )
    minted.add_argument("user", metavar="USER", help="the Kubernetes user name it authenticates as")
    minted.add_argument(
        "--group", action="append", default=[], help="a group it belongs to (repeatable)"
    )
    minted.add_argument("--context", default="taugrid-local", help="its context's name")
    minted.add_argument("-o", "--output", type=Path, required=True, help="the file to write")
    minted.set_defaults(handler=_kubeconfig)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except (BuildError, ClusterError) as error:
        print(f"localcluster: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
