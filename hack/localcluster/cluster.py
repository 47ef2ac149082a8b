"""Start, find and stop a local control plane made of real processes on 127.0.0.1.

The start order follows kwokctl's binary runtime and controller-runtime's envtest: etcd, the
apiserver, the controllers, KWOK for the fake nodes, CRDs, then Kueue (its webhooks and CRD
conversion on loopback) and the KubeRay operator, and finally the baseline fixtures. Everything a
later command needs (ports, pids, paths) is kept in ``state.json`` beside the admin kubeconfig, so
``down`` and the test fixture can find a cluster that ``up`` started in another process.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from . import fixtures as fx
from . import manifests, network, node, nodeimage
from .build import Artifacts
from .pki import CertificateAuthority, KeyPair, write_kubeconfig, write_service_account_keys

T = TypeVar("T")

STATE_FILE = "state.json"
ADMIN_KUBECONFIG = "admin.kubeconfig"
# Kueue reads its metrics serving certificate from this fixed path when it does not manage
# certificates itself (cmd/kueue/main.go); any cluster's certificate will do, so it is shared.
KUEUE_METRICS_CERT_DIR = Path("/etc/kueue/metrics/certs")
KUEUE_VISIBILITY_CERT_DIR = Path("/visibility")  # pkg/visibility/server.go
# Service ClusterIPs exist only inside the real node's network namespace, where kube-proxy
# rewrites them; KWOK's pod addresses are written into objects and never connected to. The real
# node's pods take addresses from its own range (see network.py).
SERVICE_CIDR = "10.96.0.0/16"
DNS_SERVICE_IP = "10.96.0.10"
POD_CIDR = "10.244.0.1/16"
_PR_SET_PDEATHSIG = 1
# One loopback port per listener, picked at start so several clusters can coexist.
_PORT_NAMES = (
    "etcd",
    "etcd_peer",
    "apiserver",
    "controller_manager",
    "scheduler",
    "kwok",
    "kueue_health",
    "kueue_metrics",
    "kueue_webhook",
    "kueue_visibility",
    "kuberay_metrics",
    "kuberay_probe",
    "ray_dashboard_proxy",
    "registry",
)


class ClusterError(RuntimeError):
    """The cluster did not come up (or is not there); the message names the component and log."""


def _free_ports(count: int) -> list[int]:
    """Ports free right now on every address (the apiserver and registry listen on all of them,
    so the node namespace reaches them); holding all sockets avoids handing one out twice."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until(
    what: str,
    probe: Callable[[], T],
    timeout: float = 60,
    on_timeout: Callable[[], str] = lambda: "",
) -> T:
    """Poll ``probe`` until it returns something truthy, and return that.

    Tests use it too: the cluster is eventually consistent, so every assertion about what a
    controller did is a wait with a deadline, never a sleep.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = probe()
        if result:
            return result
        time.sleep(0.5)
    raise ClusterError(f"timed out after {timeout:.0f}s waiting for {what}{on_timeout()}")


@dataclass
class ClusterState:
    """What is written to ``state.json``: enough to reach, inspect and stop the cluster."""

    bin_dir: str
    ports: dict[str, int]
    etcd_data_dir: str
    pids: dict[str, int] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    # The real node's network (network.NodeNetwork fields) and the registry's host:port.
    network: dict[str, str] = field(default_factory=dict)
    registry: str = ""
    images: dict[str, str] = field(default_factory=dict)


class LocalCluster:
    """A running (or stopped) cluster rooted at one state directory."""

    def __init__(self, state_dir: Path, state: ClusterState) -> None:
        # Absolute, because it is written into kubeconfig exports and matched in process args.
        self.state_dir = state_dir.resolve()
        self.state = state
        self._processes: dict[str, subprocess.Popen[bytes]] = {}
        # A test session's cluster must not outlive the session, even if it is killed.
        self.tied_to_caller = False

    # --- public surface used by tests and the CLI ------------------------------------------

    @property
    def kubeconfig(self) -> Path:
        return self.state_dir / ADMIN_KUBECONFIG

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.state.ports['apiserver']}"

    @property
    def bin_dir(self) -> Path:
        return Path(self.state.bin_dir)

    @property
    def pki_dir(self) -> Path:
        return self.state_dir / "pki"

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def registry(self) -> str:
        """``127.0.0.1:<port>``: push images here (plain HTTP); the real node pulls them by
        exactly this name."""
        return self.state.registry

    @property
    def images(self) -> dict[str, str]:
        """Images already in the registry, by name (``fixtures.SHELL_IMAGE``, ``pause``)."""
        return dict(self.state.images)

    def push_image(self, layout: Path, tag: str, repository: str) -> str:
        """Copy ``tag`` of an OCI image layout into the registry as ``repository:tag`` and
        return the reference a pod on the real node uses."""
        return nodeimage.copy(layout, tag, f"{self.registry}/{repository}:{tag}")

    @property
    def node_network(self) -> network.NodeNetwork | None:
        return network.load(self.state.network)

    @property
    def node_layout(self) -> node.NodeLayout:
        return node.NodeLayout(self.state_dir / "node", network.cluster_id(self.state_dir))

    def kubectl(
        self,
        *args: str,
        kubeconfig: Path | None = None,
        input: str | None = None,
        check: bool = True,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """Run the cluster's own kubectl; raises with kubectl's stderr when ``check`` fails."""
        cmd = [
            str(self.bin_dir / "kubectl"),
            f"--kubeconfig={kubeconfig or self.kubeconfig}",
            *args,
        ]
        result = subprocess.run(
            cmd, input=input, capture_output=True, text=True, timeout=timeout, check=False
        )
        if check and result.returncode != 0:
            raise ClusterError(f"kubectl {' '.join(args)} failed: {result.stderr.strip()}")
        return result

    def get_json(self, *args: str, kubeconfig: Path | None = None) -> dict[str, Any]:
        """``kubectl get ARGS -o json``, parsed."""
        return json.loads(self.kubectl("get", *args, "-o", "json", kubeconfig=kubeconfig).stdout)

    def apply(self, objects: Iterable[dict[str, Any]]) -> None:
        """Server-side apply, so re-applying a changed object updates it."""
        self.kubectl(
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=taugrid-localcluster",
            "-f",
            "-",
            input=_as_list(objects),
        )

    def create(self, objects: Iterable[dict[str, Any]]) -> None:
        """Plain create: several times faster than apply for the multi-megabyte CRDs."""
        self.kubectl("create", "-f", "-", input=_as_list(objects))

    def mint_kubeconfig(
        self,
        user: str,
        groups: Sequence[str] = (),
        path: Path | None = None,
        context: str = "",
    ) -> Path:
        """A kubeconfig authenticating as ``user`` in ``groups`` by a CA-signed certificate.

        The identity has no permissions until a (Cluster)RoleBinding grants them, which is
        exactly what RBAC tests and "researcher" flows need.
        """
        users = self.state_dir / "users"
        users.mkdir(exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in user)
        pair = CertificateAuthority(self.pki_dir).issue(f"user-{safe}", user, tuple(groups))
        return write_kubeconfig(
            path or users / f"{safe}.kubeconfig",
            self.server,
            CertificateAuthority(self.pki_dir),
            pair,
            user,
            context,
        )

    def readyz(self) -> bool:
        return _https_ok(f"{self.server}/readyz", self._admin_tls())

    def component_status(self) -> dict[str, bool]:
        return {name: _alive(pid) for name, pid in self.state.pids.items()}

    def stop(self) -> None:
        """Stop every process this cluster started (and only those), newest first."""
        for name, pid in reversed(list(self.state.pids.items())):
            process = self._processes.get(name)
            if self._owns(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
                deadline = time.monotonic() + 15
                while _alive(pid) and time.monotonic() < deadline:
                    if process is not None and process.poll() is not None:
                        break
                    time.sleep(0.1)
                if _alive(pid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            if process is not None:  # our child: reap it, even if it had already died
                process.wait(timeout=10)
        shutil.rmtree(self.state.etcd_data_dir, ignore_errors=True)
        layout = self.node_layout
        node.teardown(layout)
        if (net := self.node_network) is not None:
            net.destroy()
            (_OWNERS / f"{net.cluster_id}.json").unlink(missing_ok=True)
        shutil.rmtree(layout.root, ignore_errors=True)
        self.state.pids = {}
        self._save()

    # --- loading --------------------------------------------------------------------------

    @classmethod
    def load(cls, state_dir: Path) -> LocalCluster:
        path = state_dir / STATE_FILE
        if not path.is_file():
            raise ClusterError(f"no local cluster state in {state_dir} (run `up` first)")
        return cls(state_dir, ClusterState(**json.loads(path.read_text())))

    @classmethod
    def from_kubeconfig(cls, kubeconfig: Path) -> LocalCluster:
        return cls.load(kubeconfig.resolve().parent)

    # --- internals ------------------------------------------------------------------------

    def _owns(self, pid: int) -> bool:
        """Only signal a pid still running one of our processes (pids get reused)."""
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return False
        # Our binaries, or a system one (containerd, the registry) started on our state dir.
        ours = Path(exe).parent == self.bin_dir or any(
            str(self.state_dir).encode() in arg for arg in argv
        )
        return ours and _alive(pid)

    def _state_arg(self) -> str:
        return f"--state-dir={self.state_dir}"

    def _save(self) -> None:
        tmp = self.state_dir / (STATE_FILE + ".tmp")
        tmp.write_text(json.dumps(asdict(self.state), indent=2) + "\n")
        tmp.replace(self.state_dir / STATE_FILE)

    def _admin_tls(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.pki_dir / "ca.crt"))
        context.load_cert_chain(self.pki_dir / "admin.crt", self.pki_dir / "admin.key")
        return context

    def _spawn(
        self,
        name: str,
        args: list[str],
        env: dict[str, str] | None = None,
        netns: network.NodeNetwork | None = None,
    ) -> None:
        """Start one component; with ``netns`` it runs in the node's network namespace (nsenter
        execs it, so the pid is the component's own)."""
        log = (self.log_dir / f"{name}.log").open("wb")
        executable = args[0] if os.path.isabs(args[0]) else str(self.bin_dir / args[0])
        process = subprocess.Popen(
            [*(netns.enter() if netns else []), executable, *args[1:]],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            cwd=self.state_dir,
            start_new_session=True,
            preexec_fn=_die_with_parent if self.tied_to_caller else None,
        )
        log.close()
        self._processes[name] = process
        self.state.pids[name] = process.pid
        self._save()

    def _log_tail(self, name: str, lines: int = 30) -> str:
        path = self.log_dir / f"{name}.log"
        try:
            tail = path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        return f"\n--- last lines of {path} ---\n" + "\n".join(tail)

    def _wait_component(self, name: str, check: Callable[[], bool], timeout: float) -> None:
        def ready() -> bool:
            process = self._processes[name]
            if process.poll() is not None:
                raise ClusterError(
                    f"{name} exited with code {process.returncode}{self._log_tail(name)}"
                )
            return check()

        wait_until(name, ready, timeout, lambda: self._log_tail(name))


def _established_crds(cluster: LocalCluster) -> set[str]:
    return {
        crd["metadata"]["name"]
        for crd in cluster.get_json("customresourcedefinitions")["items"]
        if any(
            c["type"] == "Established" and c["status"] == "True"
            for c in (crd.get("status") or {}).get("conditions") or []
        )
    }


def _as_list(objects: Iterable[dict[str, Any]]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)})


def _https_ok(url: str, context: ssl.SSLContext) -> bool:
    try:
        with urllib.request.urlopen(url, context=context, timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _insecure_https_ok(url: str) -> bool:
    """Health endpoints of components with self-signed serving certs, on loopback only."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return _https_ok(url, context)


_ETCD_PREFIX = "taugrid-etcd-"
_ETCD_PID_FILE = "etcd.pid"


def _etcd_scratch_dir() -> str:
    """etcd on tmpfs: fsync-free and gone with the machine, as a test cluster should be.

    etcd's data lives in ``data/`` next to an ``etcd.pid``; a cluster whose owner was killed
    leaves the directory behind (about 130 MB of memory), so each start sweeps those whose etcd
    is gone.
    """
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() else Path(tempfile.gettempdir())
    for stale in base.glob(f"{_ETCD_PREFIX}*/{_ETCD_PID_FILE}"):
        with contextlib.suppress(OSError, ValueError):
            pid = int(stale.read_text())
            if not (_alive(pid) and Path(f"/proc/{pid}/comm").read_text().strip() == "etcd"):
                shutil.rmtree(stale.parent)
    return tempfile.mkdtemp(prefix=_ETCD_PREFIX, dir=base)


def _die_with_parent() -> None:
    """Runs in the child before exec: have the kernel SIGKILL it when its parent dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def start(
    state_dir: Path,
    artifacts: Artifacts,
    timeout: float = 300,
    *,
    tied_to_caller: bool = False,
    progress: Callable[[str], None] = lambda _: None,
) -> LocalCluster:
    """Bring up the whole plane in ``state_dir``; on any failure, stop what was started.

    ``tied_to_caller`` makes every process die with the calling process (test sessions);
    ``progress`` receives one line per step, with the elapsed time.
    ``timeout`` bounds each slow step; a 2-core machine shared with other clusters needs minutes.
    """
    if (state_dir / STATE_FILE).is_file():
        existing = LocalCluster.load(state_dir)
        if any(existing.component_status().values()):
            raise ClusterError(f"a cluster is already running from {state_dir}; run `down` first")
    state_dir.mkdir(parents=True, exist_ok=True)
    for sub in ("pki", "logs", "kwok", "kueue", "users"):
        (state_dir / sub).mkdir(exist_ok=True)
    ports = dict(zip(_PORT_NAMES, _free_ports(len(_PORT_NAMES)), strict=True))
    cluster = LocalCluster(
        state_dir,
        ClusterState(str(artifacts.bin), ports, _etcd_scratch_dir(), versions=artifacts.versions()),
    )
    cluster.tied_to_caller = tied_to_caller
    cluster._save()
    try:
        _bring_up(cluster, artifacts, timeout, progress)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _bring_up(
    cluster: LocalCluster, artifacts: Artifacts, timeout: float, progress: Callable[[str], None]
) -> None:
    started = time.monotonic()

    def step(done: str) -> None:
        progress(f"{done} ({time.monotonic() - started:.0f}s)")

    p = cluster.state.ports
    pki = cluster.pki_dir
    _sweep_abandoned_nodes()
    try:
        net = network.allocate(cluster.state_dir, SERVICE_CIDR)
    except network.NetworkError as error:
        raise ClusterError(f"the real node's network namespace: {error}") from error
    _OWNERS.mkdir(parents=True, exist_ok=True)
    (_OWNERS / f"{net.cluster_id}.json").write_text(
        json.dumps({"state_dir": str(cluster.state_dir)})
    )
    cluster.state.network = net.to_json()
    cluster._save()
    ca = CertificateAuthority.create(pki)
    serving = ca.issue(
        "apiserver",
        "kube-apiserver",
        hosts=(
            "127.0.0.1",
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
            "10.96.0.1",
            net.host_ip,
        ),
    )
    kubelet_client = ca.issue(
        "apiserver-kubelet-client", "kube-apiserver-kubelet-client", ("system:masters",)
    )
    write_service_account_keys(pki / "sa.key", pki / "sa.pub")
    # The aggregation layer's front proxy, as kubeadm sets it up; without it every component
    # that delegates authentication logs a missing requestheader CA forever.
    front_proxy_ca = CertificateAuthority.create(pki, "front-proxy-ca")
    front_proxy = front_proxy_ca.issue("front-proxy-client", "front-proxy-client")

    def kubeconfig_for(name: str, cn: str, orgs: tuple[str, ...] = ()) -> Path:
        pair: KeyPair = ca.issue(name, cn, orgs)
        return write_kubeconfig(
            cluster.state_dir / f"{name}.kubeconfig", cluster.server, ca, pair, cn
        )

    admin = kubeconfig_for("admin", "kubernetes-admin", ("system:masters",))
    admin.replace(cluster.kubeconfig)
    kcm = kubeconfig_for("controller-manager", "system:kube-controller-manager")
    scheduler = kubeconfig_for("scheduler", "system:kube-scheduler")
    # The add-on controllers run with cluster-admin, as their Helm charts grant in AKS.
    kwok = kubeconfig_for("kwok", "kwok-controller", ("system:masters",))
    kueue = kubeconfig_for("kueue", "kueue-controller-manager", ("system:masters",))
    kuberay = kubeconfig_for("kuberay", "kuberay-operator", ("system:masters",))

    etcd_url = f"http://127.0.0.1:{p['etcd']}"
    peer_url = f"http://127.0.0.1:{p['etcd_peer']}"
    cluster._spawn(
        "etcd",
        [
            "etcd",
            "--name=default",
            f"--data-dir={Path(cluster.state.etcd_data_dir) / 'data'}",
            f"--listen-client-urls={etcd_url}",
            f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=default={peer_url}",
            "--unsafe-no-fsync",
            "--listen-metrics-urls=",
            "--log-level=warn",
        ],
    )
    (Path(cluster.state.etcd_data_dir) / _ETCD_PID_FILE).write_text(str(cluster.state.pids["etcd"]))
    _start_registry(cluster)
    cluster._wait_component("etcd", lambda: _http_ok(f"{etcd_url}/health"), 60)
    step("etcd ready")

    cluster._spawn(
        "kube-apiserver",
        [
            "kube-apiserver",
            f"--etcd-servers={etcd_url}",
            # All addresses: the node namespace and its pods reach it at the veth's host end,
            # which the `kubernetes` Service's endpoint names (in-cluster clients use it).
            "--bind-address=0.0.0.0",
            f"--advertise-address={net.host_ip}",
            f"--secure-port={p['apiserver']}",
            f"--tls-cert-file={serving.cert}",
            f"--tls-private-key-file={serving.key}",
            f"--client-ca-file={ca.pair.cert}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=NodeRestriction",
            "--allow-privileged=true",
            "--kubelet-preferred-address-types=InternalIP",
            f"--kubelet-client-certificate={kubelet_client.cert}",
            f"--kubelet-client-key={kubelet_client.key}",
            f"--requestheader-client-ca-file={front_proxy_ca.pair.cert}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={front_proxy.cert}",
            f"--proxy-client-key-file={front_proxy.key}",
            "--profiling=false",
        ],
    )
    cluster._wait_component("kube-apiserver", cluster.readyz, timeout)
    step("kube-apiserver ready")

    common = ["--bind-address=127.0.0.1", "--leader-elect=false", "--profiling=false"]
    cluster._spawn(
        "kube-controller-manager",
        [
            "kube-controller-manager",
            f"--kubeconfig={kcm}",
            f"--authentication-kubeconfig={kcm}",
            f"--authorization-kubeconfig={kcm}",
            f"--secure-port={p['controller_manager']}",
            *common,
            f"--root-ca-file={ca.pair.cert}",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            "--use-service-account-credentials=true",
            f"--cluster-signing-cert-file={ca.pair.cert}",
            f"--cluster-signing-key-file={ca.pair.key}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            f"--cert-dir={pki / 'controller-manager'}",
        ],
    )
    cluster._spawn(
        "kube-scheduler",
        [
            "kube-scheduler",
            f"--kubeconfig={scheduler}",
            f"--authentication-kubeconfig={scheduler}",
            f"--authorization-kubeconfig={scheduler}",
            f"--secure-port={p['scheduler']}",
            *common,
            f"--cert-dir={pki / 'scheduler'}",
        ],
    )

    # CRDs first: KWOK watches its Logs kinds, and Kueue needs the Ray kinds to enable those
    # integrations. Ray's CRDs are too large for client-side apply's annotation.
    crd_docs: list[dict[str, Any]] = []
    for name in ("kwok.x-k8s.io_logs.yaml", "kwok.x-k8s.io_clusterlogs.yaml"):
        crd_docs += manifests.load_all(artifacts.manifests / "kwok-crds" / name)
    for path in sorted((artifacts.manifests / "kuberay-crds").glob("*.yaml")):
        crd_docs += manifests.load_all(path)
    webhook_url = f"https://127.0.0.1:{p['kueue_webhook']}"
    crd_docs += manifests.kueue_crds(
        artifacts.manifests / "kueue-crds", webhook_url, ca.pair.cert_pem()
    )
    cluster.create(crd_docs)
    wanted = {crd["metadata"]["name"] for crd in crd_docs}
    # Not `kubectl wait`: it errors out on a CRD whose status has no conditions yet.
    wait_until("CRDs to be established", lambda: wanted <= _established_crds(cluster), timeout)
    step("CRDs established")

    default_log = cluster.state_dir / "kwok" / "default.log"
    default_log.write_text(manifests.cri_log([fx.DEFAULT_POD_LOG_LINE]))
    cluster.create([manifests.default_cluster_logs(default_log)])
    kwok_config = cluster.state_dir / "kwok" / "kwok.yaml"
    kwok_config.write_text(manifests.kwok_config(artifacts.manifests / "kwok-node-stages"))
    kwok_serving = ca.issue("kwok", "kwok", hosts=("127.0.0.1", "localhost"))
    cluster._spawn(
        "kwok",
        [
            "kwok",
            f"--kubeconfig={kwok}",
            f"--config={kwok_config}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector="
            f"{fx.KWOK_NODE_ANNOTATION}={fx.KWOK_NODE_ANNOTATION_VALUE}",
            "--node-ip=127.0.0.1",
            f"--node-port={p['kwok']}",
            f"--server-address=127.0.0.1:{p['kwok']}",
            f"--tls-cert-file={kwok_serving.cert}",
            f"--tls-private-key-file={kwok_serving.key}",
            f"--cidr={POD_CIDR}",
            "--node-lease-duration-seconds=40",
            "--enable-crds=Logs,ClusterLogs",
        ],
    )
    cluster.create(fx.node_objects())  # create keeps the status (allocatable) given here
    _wait_registry(cluster)
    cluster.state.images = nodeimage.push(
        nodeimage.build_layout(nodeimage.cache()), cluster.registry
    )
    cluster._save()
    _start_node(cluster, ca, net)
    step("registry ready, real node starting")

    # Kueue: webhook serving cert in its own dir, metrics cert at the hard-coded path.
    kueue_dir = cluster.state_dir / "kueue"
    webhook_pair = ca.issue("kueue-webhook", "kueue-webhook", hosts=("127.0.0.1", "localhost"))
    shutil.copyfile(webhook_pair.cert, kueue_dir / "tls.crt")
    shutil.copyfile(webhook_pair.key, kueue_dir / "tls.key")
    _ensure_shared_cert(ca, KUEUE_METRICS_CERT_DIR, "kueue-metrics")
    _ensure_shared_cert(ca, KUEUE_VISIBILITY_CERT_DIR, "kueue-visibility")
    (kueue_dir / "config.yaml").write_text(
        manifests.kueue_config(
            p["kueue_health"],
            p["kueue_metrics"],
            p["kueue_webhook"],
            p["kueue_visibility"],
            kueue_dir,
        )
    )
    cluster.create(
        [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": fx.KUEUE_NAMESPACE}}]
    )
    # --kubeconfig (not only $KUBECONFIG): the visibility server delegates authentication and
    # authorization to kube-apiserver through the file that flag names.
    cluster._spawn(
        "kueue",
        ["kueue", f"--config={kueue_dir / 'config.yaml'}", f"--kubeconfig={kueue}"],
        env={"KUBECONFIG": str(kueue)},
    )
    # KubeRay asks each RayCluster's dashboard, at a cluster DNS name, how its jobs and serve
    # applications are doing. Its HTTP proxy is our fake dashboard on loopback, so nothing is
    # resolved or dialled in the cluster; Go never proxies loopback, so apiserver traffic is
    # direct.
    dashboard = p["ray_dashboard_proxy"]
    repo_root = str(Path(__file__).resolve().parents[2])
    cluster._spawn(
        "ray-dashboard",
        [sys.executable, "-m", "hack.localcluster.raydashboard", cluster._state_arg()],
        env={
            "PYTHONPATH": os.pathsep.join(filter(None, [repo_root, os.environ.get("PYTHONPATH")]))
        },
    )
    cluster._wait_component(
        "ray-dashboard", lambda: _http_ok(f"http://127.0.0.1:{dashboard}/healthz"), 60
    )
    cluster._spawn(
        "ray-operator",
        [
            "ray-operator",
            "--enable-leader-election=false",
            f"--metrics-addr=127.0.0.1:{p['kuberay_metrics']}",
            f"--health-probe-bind-address=127.0.0.1:{p['kuberay_probe']}",
            "--log-stdout-encoder=console",
        ],
        env={
            "KUBECONFIG": str(kuberay),
            "HTTP_PROXY": f"http://127.0.0.1:{dashboard}",
            "http_proxy": f"http://127.0.0.1:{dashboard}",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        },
    )

    cluster._wait_component(
        "kube-scheduler",
        lambda: _insecure_https_ok(f"https://127.0.0.1:{p['scheduler']}/readyz"),
        60,
    )
    cluster._wait_component(
        "kube-controller-manager",
        lambda: _insecure_https_ok(f"https://127.0.0.1:{p['controller_manager']}/healthz"),
        60,
    )
    cluster._wait_component(
        "kueue", lambda: _http_ok(f"http://127.0.0.1:{p['kueue_health']}/readyz"), timeout
    )
    step("kueue ready")
    cluster.apply(
        manifests.kueue_webhooks(
            artifacts.manifests / "kueue-webhook", webhook_url, ca.pair.cert_pem()
        )
    )
    cluster.apply(manifests.kueue_visibility(p["kueue_visibility"]))
    cluster._wait_component(
        "ray-operator", lambda: _http_ok(f"http://127.0.0.1:{p['kuberay_probe']}/readyz"), 60
    )
    _wait_node(cluster, net, timeout)
    step("real node ready")
    cluster._wait_component(
        "kwok",
        lambda: (
            cluster.kubectl(
                "wait", "--for=condition=Ready", "node", "--all", "--timeout=5s", check=False
            ).returncode
            == 0
        ),
        60,
    )

    step("ray-operator ready, fake nodes ready")
    cluster.apply(fx.kueue_objects())
    cluster.kubectl(
        "wait", "--for=condition=Active", f"clusterqueue/{fx.CLUSTER_QUEUE}", "--timeout=60s"
    )
    step(f"ClusterQueue {fx.CLUSTER_QUEUE} active")
    for version in manifests.VISIBILITY_VERSIONS:
        cluster.kubectl(
            "wait",
            "--for=condition=Available",
            f"apiservice/{version}.{manifests.VISIBILITY_GROUP}",
            "--timeout=60s",
        )
    step("Kueue visibility API available")


def _ensure_shared_cert(ca: CertificateAuthority, directory: Path, name: str) -> None:
    """Kueue reads these certificates from fixed paths; any cluster's pair will do (its
    clients skip verification), so one is written once and shared."""
    if (directory / "tls.crt").is_file():
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except PermissionError as error:
        raise ClusterError(
            f"Kueue needs {directory} for its {name} certificate; create it writable for this"
            f" user (e.g. `sudo install -d -o $USER {directory}`)"
        ) from error
    pair = ca.issue(name, name, hosts=("127.0.0.1", "localhost"))
    for suffix, source in (("crt", pair.cert), ("key", pair.key)):
        tmp = directory / f".tls.{suffix}.tmp"
        shutil.copyfile(source, tmp)
        tmp.replace(directory / f"tls.{suffix}")


_REGISTRY_CONFIG = """\
version: 0.1
log: {{level: warn, accesslog: {{disabled: true}}}}
storage:
  filesystem: {{rootdirectory: {data}}}
  delete: {{enabled: true}}
http: {{addr: "0.0.0.0:{port}"}}
"""


# One record per running real node: which state dir owns it, so a later start can clean up
# after a session that was killed (its containers, mounts and namespace outlive it).
_OWNERS = Path("/run/taugrid-localcluster")


def _sweep_abandoned_nodes() -> None:
    for record in sorted(_OWNERS.glob("*.json")) if _OWNERS.is_dir() else []:
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            state_dir = Path(json.loads(record.read_text())["state_dir"])
            try:
                owner: LocalCluster | None = LocalCluster.load(state_dir)
            except ClusterError:
                owner = None
            if owner is not None and any(owner.component_status().values()):
                continue
            ident = record.stem
            node.teardown(node.NodeLayout(state_dir / "node", ident))
            network.NodeNetwork(ident, "0.0.0.0/24").destroy()
            record.unlink()


def _start_registry(cluster: LocalCluster) -> None:
    """Debian's distribution (v2) registry; all addresses, so the node namespace reaches it."""
    binary = shutil.which("docker-registry")
    if binary is None:
        raise ClusterError("docker-registry is not installed (run hack/setup/15-node-packages.sh)")
    directory = cluster.state_dir / "registry"
    (directory / "data").mkdir(parents=True, exist_ok=True)
    config = directory / "config.yml"
    port = cluster.state.ports["registry"]
    config.write_text(_REGISTRY_CONFIG.format(data=directory / "data", port=port))
    cluster.state.registry = f"127.0.0.1:{port}"
    cluster._spawn("registry", [binary, "serve", str(config)])


def _wait_registry(cluster: LocalCluster) -> None:
    cluster._wait_component("registry", lambda: _http_ok(f"http://{cluster.registry}/v2/"), 60)


def _unix_serving(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def _node_env() -> dict[str, str]:
    path = os.environ.get("PATH", "")
    return {"PATH": os.pathsep.join([path, "/usr/local/sbin", "/usr/sbin", "/sbin"])}


def _start_node(cluster: LocalCluster, ca: CertificateAuthority, net: network.NodeNetwork) -> None:
    """containerd, kubelet, kube-proxy and CoreDNS in the node namespace, talking to the
    apiserver at the veth's host end; local-path-provisioner beside the other controllers."""
    layout = cluster.node_layout
    for directory in (
        layout.containerd_root,
        layout.containerd_state,
        layout.cni_conf_dir,
        layout.kubelet_dir,
        layout.pod_logs,
        layout.local_path,
    ):
        directory.mkdir(parents=True, exist_ok=True)
    inside = f"https://{net.host_ip}:{cluster.state.ports['apiserver']}"

    def node_kubeconfig(name: str, cn: str, orgs: tuple[str, ...] = ()) -> Path:
        return write_kubeconfig(
            layout.root / f"{name}.kubeconfig", inside, ca, ca.issue(name, cn, orgs), cn
        )

    containerd = shutil.which("containerd")
    if containerd is None:
        raise ClusterError("containerd is not installed (run hack/setup/15-node-packages.sh)")
    hosts = layout.registry_hosts / cluster.registry
    hosts.mkdir(parents=True, exist_ok=True)
    (hosts / "hosts.toml").write_text(node.registry_hosts_toml(cluster.registry, net))
    layout.containerd_config.write_text(
        node.containerd_config(layout, cluster.state.images[nodeimage.PAUSE_TAG])
    )
    (layout.cni_conf_dir / "10-taugrid.conflist").write_text(
        json.dumps(node.cni_config(net), indent=2)
    )
    env = _node_env()
    try:
        node.weigh_pod_cgroups()
    except OSError as error:
        raise ClusterError(f"cannot set the real node's pod CPU weight: {error}") from None
    cluster._spawn(
        "containerd", [containerd, f"--config={layout.containerd_config}"], env=env, netns=net
    )
    # kubelet exits at once when the CRI socket does not answer yet (seen on a loaded machine:
    # "validate CRI v1 runtime API ... failed to connect"), so it starts only once containerd
    # serves.
    cluster._wait_component("containerd", lambda: _unix_serving(layout.containerd_socket), 60)

    kubelet_kubeconfig = node_kubeconfig(
        "kubelet", f"system:node:{fx.REAL_NODE}", ("system:nodes",)
    )
    resolv = layout.root / "resolv.conf"
    resolv.write_text("# pods use the cluster DNS; nothing upstream is reachable\n")
    kubelet_config = layout.root / "kubelet.yaml"
    kubelet_config.write_text(
        yaml.safe_dump(
            node.kubelet_config(layout, net, ca.pair.cert, DNS_SERVICE_IP, resolv),
            sort_keys=False,
        )
    )
    labels = ",".join(f"{k}={v}" for k, v in fx.REAL_NODE_LABELS.items())
    cluster._spawn(
        "kubelet",
        [
            "kubelet",
            f"--config={kubelet_config}",
            f"--kubeconfig={kubelet_kubeconfig}",
            f"--root-dir={layout.kubelet_dir}",
            f"--cert-dir={layout.kubelet_dir / 'pki'}",
            f"--hostname-override={fx.REAL_NODE}",
            f"--node-ip={net.node_ip}",
            f"--node-labels={labels}",
            "--v=1",
        ],
        env=env,
        netns=net,
    )

    proxy_config = layout.root / "kube-proxy.yaml"
    proxy_config.write_text(
        yaml.safe_dump(
            node.kube_proxy_config(node_kubeconfig("kube-proxy", "system:kube-proxy"), net),
            sort_keys=False,
        )
    )
    cluster._spawn("kube-proxy", ["kube-proxy", f"--config={proxy_config}"], env=env, netns=net)

    cluster.apply(node.dns_objects(net, DNS_SERVICE_IP))
    corefile = layout.root / "Corefile"
    corefile.write_text(
        node.corefile(net, node_kubeconfig("coredns", "coredns", ("system:masters",)))
    )
    cluster._spawn("coredns", ["coredns", "-conf", str(corefile)], netns=net)

    cluster.apply(node.local_path_objects(layout, cluster.state.images[fx.SHELL_IMAGE]))
    provisioner = cluster.state_dir / "local-path-provisioner.kubeconfig"
    write_kubeconfig(
        provisioner,
        cluster.server,
        ca,
        ca.issue("local-path-provisioner", "local-path-provisioner", ("system:masters",)),
        "local-path-provisioner",
    )
    cluster._spawn(
        "local-path-provisioner",
        [
            "local-path-provisioner",
            "start",
            f"--kubeconfig={provisioner}",
            f"--provisioner-name={fx.LOCAL_PATH_PROVISIONER}",
            f"--namespace={node.LOCAL_PATH_NAMESPACE}",
            f"--service-account-name={node.LOCAL_PATH_SERVICE_ACCOUNT}",
            f"--helper-image={cluster.state.images[fx.SHELL_IMAGE]}",
            "--configmap-name=local-path-config",
        ],
    )


def _node_ready(cluster: LocalCluster) -> bool:
    result = cluster.kubectl("get", "node", fx.REAL_NODE, "-o", "json", check=False)
    if result.returncode != 0:
        return False
    conditions = json.loads(result.stdout).get("status", {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _wait_node(cluster: LocalCluster, net: network.NodeNetwork, timeout: float) -> None:
    for name in ("containerd", "kube-proxy", "coredns", "local-path-provisioner"):
        process = cluster._processes[name]
        if process.poll() is not None:
            raise ClusterError(
                f"{name} exited with code {process.returncode}{cluster._log_tail(name)}"
            )
    cluster._wait_component("kubelet", lambda: _node_ready(cluster), timeout)
    cluster._wait_component("coredns", lambda: _http_ok(f"http://{net.node_ip}:8181/ready"), 60)
