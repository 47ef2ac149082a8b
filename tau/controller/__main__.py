"""`python -m tau.controller`: run the tau-core controller."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from tau import keys
from tau.controller.operator import Options, run
from tau.controller.workspace import DEFAULT_POD_SECURITY, POD_SECURITY_LEVELS
from tau.errors import TauError, UsageError
from tau.lifecycle.offload import LogOffload, check_endpoint

DEFAULT_SYSTEM_NAMESPACE = "tau-system"
LOG_OFFLOAD_FLAGS = {
    "endpoint": "--log-offload-endpoint",
    "database": "--log-offload-database",
    "cluster": "--log-offload-cluster",
}
LOG_OFFLOAD_OWNER = f"platform operator (chart values {keys.LOG_OFFLOAD_VALUES})"


def parse(argv: list[str] | None = None) -> Options:
    parser = argparse.ArgumentParser(
        prog="python -m tau.controller",
        description="Reconcile TauWorkspace, TauCluster and TauQuotaRequest objects.",
    )
    parser.add_argument(
        "--system-namespace",
        help="namespace holding TauWorkspaces and TauQuotaRequests"
        f" (default {DEFAULT_SYSTEM_NAMESPACE})",
    )
    parser.add_argument(
        "--platform-namespace", help="legacy alias of --system-namespace (values must agree)"
    )
    parser.add_argument("--health-probe-bind-address", default=":8081", help="/healthz, /readyz")
    parser.add_argument("--metrics-bind-address", default=":8080", help="/metrics")
    parser.add_argument(
        "--leader-elect", action="store_true", help="hold a Lease so only one replica reconciles"
    )
    parser.add_argument(
        "--pod-security-enforce",
        default=DEFAULT_POD_SECURITY,
        choices=POD_SECURITY_LEVELS,
        help="Pod Security level the workspace namespaces this controller creates enforce"
        f" (default {DEFAULT_POD_SECURITY}; audit and warn stay restricted)",
    )
    parser.add_argument(
        "--log-offload-endpoint",
        default="",
        help="ADX query endpoint (https://<cluster>.<region>.kusto.windows.net) of the central"
        " log offload, published in every workspace namespace as ConfigMap tau-log-connection",
    )
    parser.add_argument(
        "--log-offload-database", default="", help="ADX database holding ContainerLogs"
    )
    parser.add_argument(
        "--log-offload-cluster",
        default="",
        help="the Cluster value adx-mon's collector writes for this cluster's rows",
    )
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING"])
    args = parser.parse_args(argv)
    try:
        log_offload = log_offload_option(
            LogOffload(
                args.log_offload_cluster, args.log_offload_endpoint, args.log_offload_database
            )
        )
    except UsageError as error:
        parser.error(error.one_line())
    system, legacy = args.system_namespace, args.platform_namespace
    if system and legacy and system != legacy:
        parser.error(
            f"--system-namespace={system} conflicts with --platform-namespace={legacy};"
            " pass one of them"
        )
    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if args.log_level != "DEBUG":
        # kopf reports every watch event it hands over; our reconcilers log what matters.
        logging.getLogger("kopf.objects").setLevel(logging.WARNING)
    return Options(
        system_namespace=system or legacy or DEFAULT_SYSTEM_NAMESPACE,
        health_address=args.health_probe_bind_address,
        metrics_address=args.metrics_bind_address,
        leader_elect=args.leader_elect,
        pod_security=args.pod_security_enforce,
        log_offload=log_offload,
    )


def log_offload_option(flags: LogOffload) -> LogOffload | None:
    """The log connection to publish: all three --log-offload-* flags or none, the endpoint
    held to the rule `tau logs` reads it by (a bare https origin: it receives a bearer token)."""
    if not flags.given():
        return None
    missing = [flag for name, flag in LOG_OFFLOAD_FLAGS.items() if not getattr(flags, name)]
    if missing:
        raise UsageError(
            f"the log offload needs {', '.join(LOG_OFFLOAD_FLAGS.values())} together;"
            f" {', '.join(missing)} missing",
            owner=LOG_OFFLOAD_OWNER,
        )
    endpoint = check_endpoint(flags.endpoint, "--log-offload-endpoint", LOG_OFFLOAD_OWNER)
    return LogOffload(flags.cluster, endpoint, flags.database)


def main(argv: list[str] | None = None) -> int:
    options = parse(argv)

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run(options, stop)

    try:
        asyncio.run(serve())
    except TauError as error:
        print(f"error: tau-core-controller: {error.one_line()}", file=sys.stderr)
        return error.exit_code
    except OSError as error:
        print(f"error: tau-core-controller cannot start: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
