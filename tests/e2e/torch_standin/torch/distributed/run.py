"""A stand-in for ``python -m torch.distributed.run`` (torch cannot be installed here).

It takes the arguments tau renders for multi-node torchrun, performs a real rendezvous over TCP
at ``--rdzv-endpoint`` (node rank 0 listens, every other rank resolves the endpoint by DNS and
connects), then runs the training script with the environment torchrun gives its workers.
Standard library only, so it runs in any Python 3 image.
"""

from __future__ import annotations

import argparse
import os
import runpy
import socket
import sys
import time

DEADLINE_SECONDS = 120


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="torchrun")
    parser.add_argument("--nnodes", type=int, default=1)
    parser.add_argument("--node_rank", "--node-rank", type=int, default=0)
    parser.add_argument("--nproc_per_node", "--nproc-per-node", type=int, default=1)
    parser.add_argument("--rdzv-backend", "--rdzv_backend", default="static")
    parser.add_argument("--rdzv-endpoint", "--rdzv_endpoint", default="")
    parser.add_argument("--rdzv-id", "--rdzv_id", default="none")
    parser.add_argument("--standalone", action="store_true")
    parser.add_argument("script")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    return parser.parse_args()


def _connect(host: str, port: int) -> socket.socket:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        try:
            address = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)[0][4]
            return socket.create_connection(address, timeout=10)
        except OSError as error:
            if time.monotonic() > deadline:
                raise SystemExit(f"rendezvous: cannot reach {host}:{port}: {error}") from error
            time.sleep(1)


def _rendezvous(args: argparse.Namespace) -> str:
    host, port = args.rdzv_endpoint.rsplit(":", 1)
    me = socket.gethostname()
    if args.node_rank == 0:
        server = socket.create_server(("0.0.0.0", int(port)))
        server.settimeout(DEADLINE_SECONDS)
        peers = []
        for _ in range(args.nnodes - 1):
            connection, (peer_ip, _) = server.accept()
            with connection:
                line = connection.makefile().readline().strip()
                peers.append(f"{line}@{peer_ip}")
                connection.sendall(f"{args.rdzv_id} {me}\n".encode())
        return "peers " + ",".join(sorted(peers))
    with _connect(host, int(port)) as connection:
        connection.sendall(f"rank{args.node_rank}:{me}\n".encode())
        reply = connection.makefile().readline().split()
    if reply[:1] != [args.rdzv_id]:
        raise SystemExit(f"rendezvous: {host} answered {reply!r}, not run {args.rdzv_id}")
    return f"master {reply[1]} at {host}"


def main() -> None:
    args = _args()
    met = _rendezvous(args) if args.nnodes > 1 else "standalone"
    print(f"rendezvous ok: node_rank={args.node_rank} nnodes={args.nnodes} {met}", flush=True)
    os.environ.update(
        {
            "RANK": str(args.node_rank * args.nproc_per_node),
            "LOCAL_RANK": "0",
            "WORLD_SIZE": str(args.nnodes * args.nproc_per_node),
            "GROUP_RANK": str(args.node_rank),
        }
    )
    sys.argv = [args.script, *args.script_args]
    runpy.run_path(args.script, run_name="__main__")


if __name__ == "__main__":
    main()
