"""The real CPU node: containerd, runc and the CNI reference plugins under a kubelet built from the
control plane's own Kubernetes version, with kube-proxy and CoreDNS, all inside the cluster's node
network namespace (see ``network.py``), plus local-path-provisioner for workload PVCs.

What this machine needs, found by running it (the host mounts cgroup v1 and its root lacks
CAP_SYS_RESOURCE):

- kubelet: ``failCgroupV1: false``, ``cgroupDriver: cgroupfs``, ``cgroupsPerQOS: false`` and no
  node-allocatable enforcement. Pods are still limited: runc writes each container's memory and
  CPU limits into the container's own cgroup (containerd's ``/k8s.io/<container id>``, since
  without QoS cgroups the kubelet names no parent); ``down`` removes the ones this node made.
- containerd's CRI plugin: ``restrict_oom_score_adj`` (a negative ``oom_score_adj`` is refused, and
  every sandbox would fail with runc's "can't get final child's PID from pipe: EOF"); the pause
  image comes from the cluster's own registry; pod namespaces are mounted under its state dir.
- CPU weight: every container's cgroup sits under containerd's one ``/k8s.io`` parent, which
  the kernel schedules as a single entity of weight 1024 against every runnable process of this
  machine. On the shared machine under load (15 runnable processes) the whole node then got a
  fraction of a core: a Ray head took 80 s to start and its ``ray_client_server``, which waits a
  fixed 30 s for its raylet to register, exited and took the head with it. The parent gets
  ``POD_CPU_SHARES`` instead, so the node's pods compete like a small machine of their own;
  each container's CPU limit (its CFS quota) still caps what it takes.
- kubelet refuses a loopback node IP, so the node's InternalIP is the namespace end of the veth,
  which the apiserver reaches for ``kubectl logs`` and ``exec``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from . import fixtures as fx
from .network import BRIDGE, NodeNetwork

CNI_BIN_DIR = Path("/usr/lib/cni")
CLUSTER_DOMAIN = "cluster.local"
KUBELET_PORT = 10250
LOCAL_PATH_NAMESPACE = "local-path-storage"
LOCAL_PATH_SERVICE_ACCOUNT = "local-path-provisioner"
_CGROUP_ROOT = Path("/sys/fs/cgroup")
# containerd's cgroup parent of every container in its k8s.io namespace (cgroup v1, cgroupfs).
POD_CGROUP_PARENT = "k8s.io"
# Eight busy processes' worth: measured on the shared 2-core machine at load 15, a Ray head
# started in 36 s with it and failed with the default 1024 (see above).
POD_CPU_SHARES = 8192
CONTAINER_LOG_LINKS = Path("/var/log/containers")


@dataclass(frozen=True)
class NodeLayout:
    """Where one cluster's node keeps its runtime state: all of it under ``<state>/node``."""

    root: Path
    cluster_id: str

    @property
    def containerd_config(self) -> Path:
        return self.root / "containerd" / "config.toml"

    @property
    def containerd_socket(self) -> Path:
        return self.root / "containerd" / "containerd.sock"

    @property
    def containerd_root(self) -> Path:
        return self.root / "containerd" / "root"

    @property
    def containerd_state(self) -> Path:
        return self.root / "containerd" / "state"

    @property
    def registry_hosts(self) -> Path:
        return self.root / "containerd" / "certs.d"

    @property
    def cni_conf_dir(self) -> Path:
        return self.root / "cni" / "net.d"

    @property
    def kubelet_dir(self) -> Path:
        return self.root / "kubelet"

    @property
    def pod_logs(self) -> Path:
        return self.root / "pod-logs"

    @property
    def local_path(self) -> Path:
        return self.root / "local-path"

    @property
    def task_bundles(self) -> Path:
        """One directory per live container, its OCI ``config.json`` naming its cgroup."""
        return self.containerd_state / "io.containerd.runtime.v2.task"


def containerd_config(layout: NodeLayout, sandbox_image: str) -> str:
    cri = "io.containerd.grpc.v1.cri"
    config: dict[str, Any] = {
        "version": 2,
        "root": str(layout.containerd_root),
        "state": str(layout.containerd_state),
        "grpc": {"address": str(layout.containerd_socket)},
        "ttrpc": {"address": ""},
        "debug": {"address": ""},
        "metrics": {"address": ""},
        "disabled_plugins": [
            "io.containerd.snapshotter.v1.aufs",
            "io.containerd.snapshotter.v1.btrfs",
            "io.containerd.snapshotter.v1.devmapper",
            "io.containerd.snapshotter.v1.zfs",
            "io.containerd.tracing.processor.v1.otlp",
        ],
        "plugins": {
            cri: {
                "sandbox_image": sandbox_image,
                "restrict_oom_score_adj": True,
                "netns_mounts_under_state_dir": True,
                "disable_apparmor": True,
                "stream_server_address": "127.0.0.1",
                "stream_server_port": "0",
                "enable_cdi": False,
                "cni": {"bin_dir": str(CNI_BIN_DIR), "conf_dir": str(layout.cni_conf_dir)},
                "registry": {"config_path": str(layout.registry_hosts)},
                "containerd": {
                    "snapshotter": "overlayfs",
                    "default_runtime_name": "runc",
                    "runtimes": {
                        "runc": {
                            "runtime_type": "io.containerd.runc.v2",
                            "options": {
                                "SystemdCgroup": False,
                                "Root": str(layout.containerd_state / "runc"),
                            },
                        }
                    },
                },
            },
        },
    }
    return _toml(config)


def _toml(table: dict[str, Any], prefix: str = "") -> str:
    """The little TOML containerd's config needs: scalars, string lists and nested tables."""
    lines: list[str] = []
    nested: list[tuple[str, dict[str, Any]]] = []
    for key, value in table.items():
        quoted = key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)
        if isinstance(value, dict):
            nested.append((f"{prefix}.{quoted}" if prefix else quoted, value))
        else:
            lines.append(f"{quoted} = {json.dumps(value)}")
    text = "\n".join(lines) + ("\n" if lines else "")
    for name, sub in nested:
        text += f"\n[{name}]\n" + _toml(sub, name)
    return text


def registry_hosts_toml(registry: str, network: NodeNetwork) -> str:
    """Image names say ``127.0.0.1:<port>``; in the node namespace that is the veth's host end."""
    port = registry.rsplit(":", 1)[1]
    endpoint = f"http://{network.host_ip}:{port}"
    return (
        f'server = "{endpoint}"\n\n'
        f'[host."{endpoint}"]\n'
        '  capabilities = ["pull", "resolve"]\n'
        "  skip_verify = true\n"
    )


def cni_config(network: NodeNetwork) -> dict[str, Any]:
    return {
        "cniVersion": "0.4.0",
        "name": "taugrid-node",
        "plugins": [
            {
                "type": "bridge",
                "bridge": BRIDGE,
                "isGateway": True,
                "hairpinMode": True,
                "ipMasq": False,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": network.pod_cidr, "gateway": network.pod_gateway}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                },
            },
            {"type": "portmap", "capabilities": {"portMappings": True}, "snat": False},
        ],
    }


def kubelet_config(
    layout: NodeLayout, network: NodeNetwork, ca_file: Path, dns_ip: str, resolv_conf: Path
) -> dict[str, Any]:
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "failCgroupV1": False,
        "cgroupDriver": "cgroupfs",
        "cgroupsPerQOS": False,
        "enforceNodeAllocatable": [],
        "failSwapOn": False,
        "containerRuntimeEndpoint": f"unix://{layout.containerd_socket}",
        "address": network.node_ip,
        "port": KUBELET_PORT,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": 10248,
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(ca_file)},
        },
        "authorization": {"mode": "Webhook"},
        "clusterDNS": [dns_ip],
        "clusterDomain": CLUSTER_DOMAIN,
        "resolvConf": str(resolv_conf),
        "podLogsDir": str(layout.pod_logs),
        "registerWithTaints": [fx.REAL_NODE_TAINT],
        "maxPods": 110,
        "serializeImagePulls": False,
        "imageGCHighThresholdPercent": 100,
        "evictionHard": {
            "memory.available": "100Mi",
            "nodefs.available": "1%",
            "imagefs.available": "1%",
        },
        "evictionPressureTransitionPeriod": "5s",
        "nodeStatusReportFrequency": "10s",
        "nodeStatusUpdateFrequency": "5s",
        "syncFrequency": "10s",
        "fileCheckFrequency": "10s",
        "shutdownGracePeriod": "0s",
        "localStorageCapacityIsolation": True,
        "protectKernelDefaults": False,
    }


def kube_proxy_config(kubeconfig: Path, network: NodeNetwork) -> dict[str, Any]:
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "mode": "iptables",
        "hostnameOverride": fx.REAL_NODE,
        "bindAddress": network.node_ip,
        "healthzBindAddress": f"{network.node_ip}:10256",
        "metricsBindAddress": "127.0.0.1:10249",
        "clusterCIDR": network.pod_cidr,
        "detectLocalMode": "ClusterCIDR",
        # The namespace's conntrack sysctls are read-only; leave them as the kernel set them.
        "conntrack": {
            "maxPerCore": 0,
            "min": 0,
            "tcpEstablishedTimeout": "0s",
            "tcpCloseWaitTimeout": "0s",
        },
        "iptables": {"localhostNodePorts": False},
    }


def corefile(network: NodeNetwork, kubeconfig: Path) -> str:
    """Cluster names only: anything else is refused, never forwarded off this machine."""
    return f"""\
{CLUSTER_DOMAIN}:53 in-addr.arpa:53 ip6.arpa:53 {{
    bind {network.node_ip}
    errors
    ready {network.node_ip}:8181
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        kubeconfig {kubeconfig}
        pods insecure
        ttl 5
    }}
    cache 5
    loadbalance
}}
"""


def dns_objects(network: NodeNetwork, dns_ip: str) -> list[dict[str, Any]]:
    """``kube-dns`` as kubeadm names it, backed by CoreDNS running in the node namespace."""
    ports = [("dns", "UDP"), ("dns-tcp", "TCP")]
    meta = {"namespace": "kube-system", "labels": {"k8s-app": "kube-dns"}}
    return [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "kube-dns", **meta},
            "spec": {
                "clusterIP": dns_ip,
                "ports": [
                    {"name": n, "port": 53, "protocol": p, "targetPort": 53} for n, p in ports
                ],
            },
        },
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": "kube-dns-node",
                "namespace": "kube-system",
                "labels": {
                    "kubernetes.io/service-name": "kube-dns",
                    "endpointslice.kubernetes.io/managed-by": "taugrid-localcluster",
                },
            },
            "addressType": "IPv4",
            "endpoints": [
                {
                    "addresses": [network.node_ip],
                    "conditions": {"ready": True},
                    "nodeName": fx.REAL_NODE,
                }
            ],
            "ports": [{"name": n, "port": 53, "protocol": p} for n, p in ports],
        },
    ]


def local_path_objects(layout: NodeLayout, helper_image: str) -> list[dict[str, Any]]:
    """The provisioner's namespace, helper-pod account and scripts, and the StorageClass."""
    helper_pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "helper-pod"},
        "spec": {
            "containers": [
                {
                    "name": "helper-pod",
                    "image": helper_image,
                    "imagePullPolicy": "IfNotPresent",
                    "securityContext": {"runAsUser": 0, "runAsGroup": 0},
                }
            ]
        },
    }
    config = {
        "nodePathMap": [
            {"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": [str(layout.local_path)]}
        ]
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": LOCAL_PATH_NAMESPACE}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": LOCAL_PATH_SERVICE_ACCOUNT, "namespace": LOCAL_PATH_NAMESPACE},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "local-path-config", "namespace": LOCAL_PATH_NAMESPACE},
            "data": {
                "config.json": json.dumps(config),
                "setup": '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n',
                "teardown": '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n',
                "helperPod.yaml": yaml.safe_dump(helper_pod),
            },
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": fx.STORAGE_CLASS},
            "provisioner": fx.LOCAL_PATH_PROVISIONER,
            "volumeBindingMode": "WaitForFirstConsumer",
            "reclaimPolicy": "Delete",
        },
    ]


def _hierarchies() -> list[Path]:
    if not _CGROUP_ROOT.is_dir():
        return []
    return [
        p
        for p in _CGROUP_ROOT.iterdir()
        if p.is_dir() and not p.is_symlink() and (p / "cgroup.procs").exists()
    ]


def weigh_pod_cgroups() -> None:
    """Give the pods' cgroup parent its CPU weight (see the module docstring). The parent is
    containerd's, shared by every real node on this machine, and outlives this one."""
    parent = _CGROUP_ROOT / "cpu" / POD_CGROUP_PARENT
    parent.mkdir(exist_ok=True)
    (parent / "cpu.shares").write_text(f"{POD_CPU_SHARES}\n")


def _container_cgroups(layout: NodeLayout) -> set[str]:
    paths = set()
    for config in layout.task_bundles.glob("*/*/config.json"):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            path = json.loads(config.read_text())["linux"]["cgroupsPath"]
            if path:
                paths.add(path.strip("/"))
    return paths


def _descendants(roots: set[int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(proc.name))
    found, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo += children.get(pid, [])
    return found


def _shim_pids(layout: NodeLayout) -> set[int]:
    """containerd's shims outlive containerd; they name our socket in their arguments."""
    socket = str(layout.containerd_socket).encode()
    pids = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if socket in (proc / "cmdline").read_bytes().split(b"\0"):
                    pids.add(int(proc.name))
    return pids


def teardown(layout: NodeLayout) -> None:
    """After the node's daemons stopped: kill its shims and every container process under them
    (shims are subreapers, so nothing escapes), unmount the node's filesystems and pod network
    namespaces, and remove the containers' cgroups. Idempotent."""
    cgroups = _container_cgroups(layout)
    for _ in range(20):
        victims = _descendants(_shim_pids(layout))
        for hierarchy in _hierarchies():
            for path in cgroups:
                with contextlib.suppress(OSError, ValueError):
                    victims |= {
                        int(p) for p in (hierarchy / path / "cgroup.procs").read_text().split()
                    }
        if not victims:
            break
        for pid in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
    _unmount_under(layout.root)
    # The kubelet links every container log into this fixed directory, named by pod and
    # container id; only the links into this node's log directory are ours.
    for link in CONTAINER_LOG_LINKS.glob("*.log") if CONTAINER_LOG_LINKS.is_dir() else []:
        with contextlib.suppress(OSError):
            if os.readlink(link).startswith(str(layout.pod_logs) + "/"):
                link.unlink()
    for hierarchy in _hierarchies():
        for path in cgroups:
            with contextlib.suppress(OSError):
                (hierarchy / path).rmdir()


def _unmount_under(root: Path) -> None:
    prefix = str(root.resolve()) + "/"
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return
    points = [line.split()[4] for line in mounts]
    for point in sorted({p for p in points if p.startswith(prefix)}, key=len, reverse=True):
        decoded = point.encode().decode("unicode_escape")
        subprocess.run(["umount", "-l", decoded], capture_output=True, check=False)
