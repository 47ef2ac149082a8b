"""Leader election on a coordination.k8s.io Lease, so only one replica reconciles."""

from __future__ import annotations

import contextlib
import logging
import socket
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from tau.controller import kubeapi as k
from tau.kube.errors import KubeError
from tau.kube.resources import Resource

log = logging.getLogger(__name__)

LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
LEASE_NAME = "tau-core-controller.tau.azure.com"
LEASE_SECONDS = 15
RENEW_SECONDS = 5


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _expired(lease: dict[str, Any]) -> bool:
    spec = lease.get("spec") or {}
    renewed = spec.get("renewTime") or spec.get("acquireTime")
    if not renewed:
        return True
    when = datetime.fromisoformat(renewed.replace("Z", "+00:00"))
    age = (datetime.now(UTC) - when).total_seconds()
    return age > (spec.get("leaseDurationSeconds") or LEASE_SECONDS)


class LeaderElector:
    def __init__(self, client: k.ControllerClient, namespace: str) -> None:
        self.client = client
        self.namespace = namespace
        self.identity = f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"

    def try_acquire(self) -> bool:
        """One attempt to take or renew the lease; True while we hold it."""
        lease = self.client.get_or_none(LEASES, LEASE_NAME, self.namespace)
        spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": LEASE_SECONDS,
            "renewTime": _now(),
        }
        try:
            if lease is None:
                spec["acquireTime"] = spec["renewTime"]
                body = {
                    "apiVersion": LEASES.api_version,
                    "kind": "Lease",
                    "metadata": {"name": LEASE_NAME, "namespace": self.namespace},
                    "spec": spec,
                }
                self.client.create(LEASES, body, self.namespace)
                return True
            holder = (lease.get("spec") or {}).get("holderIdentity")
            if holder != self.identity and holder and not _expired(lease):
                return False
            if holder != self.identity:
                spec["acquireTime"] = spec["renewTime"]
            lease["spec"] = {**(lease.get("spec") or {}), **spec}
            self.client.replace(LEASES, lease)
            return True
        except KubeError as error:
            log.info("leader election attempt failed: %s", error.message)
            return False

    def acquire(self) -> None:
        log.info("waiting to lead as %s (lease %s/%s)", self.identity, self.namespace, LEASE_NAME)
        while not self.try_acquire():
            time.sleep(RENEW_SECONDS)
        log.info("became leader as %s", self.identity)

    def release(self) -> None:
        lease = self.client.get_or_none(LEASES, LEASE_NAME, self.namespace)
        if lease and (lease.get("spec") or {}).get("holderIdentity") == self.identity:
            lease["spec"]["holderIdentity"] = ""
            lease["spec"]["leaseDurationSeconds"] = 1
            with contextlib.suppress(KubeError):
                self.client.replace(LEASES, lease)
