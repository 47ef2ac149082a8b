"""Leader election on a coordination.k8s.io Lease, so only one replica reconciles."""

from __future__ import annotations

import contextlib
import logging
import socket
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from tau.controller import kubeapi as k
from tau.kube.errors import KubeError
from tau.kube.resources import LEASES

log = logging.getLogger(__name__)

LEASE_NAME = "tau-core-controller.tau.azure.com"
LEASE_SECONDS = 15
RENEW_SECONDS = 5


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _record(lease: dict[str, Any]) -> tuple[Any, ...]:
    """What a holder changes each time it renews: the part of the Lease we watch for change."""
    spec = lease.get("spec") or {}
    return (
        spec.get("holderIdentity"),
        spec.get("renewTime"),
        spec.get("acquireTime"),
        spec.get("leaseDurationSeconds"),
        spec.get("leaseTransitions"),
    )


class LeaderElector:
    """Lease semantics of client-go and the kubernetes client's leaderelection: another
    holder's lease expires when its record has not changed for leaseDurationSeconds on OUR
    monotonic clock. Its renewTime is another machine's wall clock and is never compared with
    ours, so clock skew between nodes cannot hand the lease to two replicas or to none.
    """

    def __init__(
        self,
        client: k.ControllerClient,
        namespace: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.identity = f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
        self.clock = clock
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0

    def _expired(self, lease: dict[str, Any]) -> bool:
        record = _record(lease)
        if record != self._observed:
            self._observed, self._observed_at = record, self.clock()
        duration = (lease.get("spec") or {}).get("leaseDurationSeconds") or LEASE_SECONDS
        return self.clock() - self._observed_at > duration

    def try_acquire(self) -> bool:
        """One attempt to take or renew the lease; True while we hold it."""
        lease = self.client.get_or_none(LEASES, LEASE_NAME, self.namespace)
        spec: dict[str, Any] = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": LEASE_SECONDS,
            "renewTime": _now(),
        }
        try:
            if lease is None:
                spec["acquireTime"] = spec["renewTime"]
                spec["leaseTransitions"] = 0
                body = {
                    "apiVersion": LEASES.api_version,
                    "kind": "Lease",
                    "metadata": {"name": LEASE_NAME, "namespace": self.namespace},
                    "spec": spec,
                }
                self.client.create(LEASES, body, self.namespace)
                return True
            current = lease.get("spec") or {}
            holder = current.get("holderIdentity")
            if holder != self.identity and holder and not self._expired(lease):
                return False
            if holder != self.identity:
                spec["acquireTime"] = spec["renewTime"]
                spec["leaseTransitions"] = int(current.get("leaseTransitions") or 0) + 1
            lease["spec"] = {**current, **spec}
            # The read's resourceVersion travels with the PUT: a replica that renewed or took
            # the lease in between makes this a conflict, never a second leader.
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
