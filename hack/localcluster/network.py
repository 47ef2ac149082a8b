"""The real node's own network namespace, wired to this machine by one veth pair.

Every local cluster's node lives in a network namespace the harness creates, so kube-proxy's
iptables chains, the CNI bridge and the pod addresses of one cluster never meet another's (the
chain names kube-proxy writes are fixed, so sharing the host namespace would make clusters
overwrite each other). The namespace has no default route: a pod reaches its own bridge, the
Service range (which kube-proxy rewrites) and the host end of the veth, where the apiserver and
the registry listen; the host routes the pod range back into the namespace and forwards nothing.

Each cluster takes one /24 from 198.18.0.0/15 (RFC 2544's range for test networks, never routed
to the internet): ``.1`` is the host end of the veth, ``.2`` the node's InternalIP, and the upper
half ``.128/25`` holds the pods. The /24 is picked under a machine-wide lock so clusters started
at once never take the same one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import ipaddress
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

_RANGE = ipaddress.ip_network("198.18.0.0/15")
_SUBNETS = list(_RANGE.subnets(new_prefix=24))
_LOCK = Path("/run/lock/taugrid-localcluster-net.lock")
# Inside the namespace the names are private, so they are fixed.
NODE_INTERFACE = "eth0"
BRIDGE = "tg0"


class NetworkError(RuntimeError):
    """The namespace or its link could not be made; the message has the failing command."""


def _ip(*args: str, netns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    if shutil.which("ip") is None:
        raise NetworkError("the `ip` command (Debian package iproute2) is not installed")
    cmd = ["ip", *(["-n", netns] if netns else []), *args]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise NetworkError(f"`{' '.join(cmd)}` failed: {result.stderr.strip()}")
    return result


@dataclass(frozen=True)
class NodeNetwork:
    """Names and addresses of one cluster's node network; kept in ``state.json``."""

    cluster_id: str
    subnet: str

    @property
    def netns(self) -> str:
        return f"tgn-{self.cluster_id}"

    @property
    def netns_path(self) -> str:
        return f"/run/netns/{self.netns}"

    @property
    def host_interface(self) -> str:
        return f"tgh-{self.cluster_id}"

    def _host(self, index: int) -> str:
        return str(ipaddress.ip_network(self.subnet)[index])

    @property
    def host_ip(self) -> str:
        """The host end of the veth: where the node reaches the apiserver and the registry."""
        return self._host(1)

    @property
    def node_ip(self) -> str:
        return self._host(2)

    @property
    def pod_cidr(self) -> str:
        return str(list(ipaddress.ip_network(self.subnet).subnets(new_prefix=25))[1])

    @property
    def pod_gateway(self) -> str:
        return self._host(129)

    def enter(self) -> list[str]:
        """The argv prefix that runs a command inside the namespace (network only, same mounts)."""
        return ["nsenter", f"--net={self.netns_path}", "--"]

    def to_json(self) -> dict[str, str]:
        return asdict(self)

    def exists(self) -> bool:
        return Path(self.netns_path).exists()

    def create(self, service_cidr: str) -> None:
        _ip("netns", "add", self.netns)
        try:
            _ip(
                "link",
                "add",
                self.host_interface,
                "type",
                "veth",
                "peer",
                "name",
                NODE_INTERFACE,
                "netns",
                self.netns,
            )
            prefix = ipaddress.ip_network(self.subnet)
            link = f"/{prefix.prefixlen + 6}"  # .0/30: host .1, node .2
            _ip("addr", "add", self.host_ip + link, "dev", self.host_interface)
            _ip("link", "set", self.host_interface, "up")
            _ip("addr", "add", self.node_ip + link, "dev", NODE_INTERFACE, netns=self.netns)
            _ip("link", "set", NODE_INTERFACE, "up", netns=self.netns)
            _ip("link", "set", "lo", "up", netns=self.netns)
            # Pods live on the bridge; ClusterIPs go there too until kube-proxy rewrites them, so
            # a Service nobody backs is dropped in the namespace instead of leaving it.
            _ip("link", "add", BRIDGE, "type", "bridge", netns=self.netns)
            _ip("addr", "add", f"{self.pod_gateway}/25", "dev", BRIDGE, netns=self.netns)
            _ip("link", "set", BRIDGE, "up", netns=self.netns)
            _ip("route", "add", service_cidr, "dev", BRIDGE, netns=self.netns)
            _ip("route", "add", self.pod_cidr, "via", self.node_ip, "dev", self.host_interface)
            for key, value in (
                ("net.ipv4.ip_forward", "1"),
                ("net.bridge.bridge-nf-call-iptables", "1"),
            ):
                _sysctl_in(self, key, value)
        except BaseException:
            self.destroy()
            raise

    def destroy(self) -> None:
        """Delete the namespace: its end of the veth goes with it, and so do the host end and
        the host route. Idempotent."""
        _ip("link", "del", self.host_interface, check=False)
        if self.exists():
            _ip("netns", "del", self.netns, check=False)


def _sysctl_in(network: NodeNetwork, key: str, value: str) -> None:
    path = "/proc/sys/" + key.replace(".", "/")
    result = subprocess.run(
        [*network.enter(), "sh", "-c", f"echo {value} > {path}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise NetworkError(f"cannot set {key}={value} in {network.netns}: {result.stderr.strip()}")


def _subnets_in_use() -> set[str]:
    used: set[str] = set()
    for args in (("-4", "-o", "addr", "show"), ("-4", "route", "show", "table", "all")):
        for word in _ip(*args).stdout.split():
            with contextlib.suppress(ValueError):
                address = ipaddress.ip_interface(word.split("/")[0] if "/" not in word else word)
                if address.ip in _RANGE:
                    used.add(str(ipaddress.ip_network(f"{address.ip}/24", strict=False)))
    return used


@contextlib.contextmanager
def _machine_lock() -> Iterator[None]:
    _LOCK.parent.mkdir(parents=True, exist_ok=True)
    with _LOCK.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def cluster_id(state_dir: Path) -> str:
    return hashlib.sha256(str(state_dir.resolve()).encode()).hexdigest()[:8]


def allocate(state_dir: Path, service_cidr: str) -> NodeNetwork:
    """Create the namespace for the cluster in ``state_dir`` on a /24 no other cluster uses."""
    ident = cluster_id(state_dir)
    with _machine_lock():
        stale = NodeNetwork(ident, str(_SUBNETS[0]))
        stale.destroy()  # left by a killed session of the same state dir
        used = _subnets_in_use()
        start = int(ident, 16) % len(_SUBNETS)
        for offset in range(len(_SUBNETS)):
            subnet = str(_SUBNETS[(start + offset) % len(_SUBNETS)])
            if subnet not in used:
                network = NodeNetwork(ident, subnet)
                network.create(service_cidr)
                return network
    raise NetworkError(f"every /24 of {_RANGE} is in use by other local clusters")


def load(data: dict[str, str] | None) -> NodeNetwork | None:
    return NodeNetwork(**data) if data else None
