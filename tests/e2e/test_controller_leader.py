"""Leader election on a real coordination.k8s.io Lease, with each replica's clock its own.

Expiry follows the Lease semantics of client-go: a holder is gone when its record has not
changed for leaseDurationSeconds on the observer's clock. The holder's renewTime is written by
another machine's wall clock, so here it is deliberately far off and must not matter.
"""

from __future__ import annotations

from controller_harness import unique

from tau.controller import leader
from tau.controller.kubeapi import ControllerClient
from tau.controller.leader import LEASE_NAME, LEASE_SECONDS, LeaderElector
from tau.kube.resources import LEASES


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_live_holder_keeps_the_lease_and_a_silent_one_loses_it(local_cluster, monkeypatch):
    namespace = unique("tau-lease")
    local_cluster.kubectl("create", "namespace", namespace)
    client = ControllerClient(local_cluster.kubeconfig)
    first, second = Clock(), Clock()
    holder = LeaderElector(client, namespace, clock=first)
    standby = LeaderElector(client, namespace, clock=second)

    # The holder's machine runs a year behind: by wall-clock comparison its lease would look
    # long expired on every renewal.
    stamps = iter(f"2025-01-01T00:00:{s:02d}.000000Z" for s in range(60))
    monkeypatch.setattr(leader, "_now", lambda: next(stamps))
    assert holder.try_acquire()
    for _ in range(5):
        second.now += LEASE_SECONDS / 2
        assert not standby.try_acquire()  # seen renewing, so never expired
        assert holder.try_acquire()

    # The holder stops renewing: the standby takes over only after a full lease duration of
    # its own clock without change.
    assert not standby.try_acquire()
    second.now += LEASE_SECONDS - 1
    assert not standby.try_acquire()
    second.now += 2
    assert standby.try_acquire()
    spec = client.get_or_none(LEASES, LEASE_NAME, namespace)["spec"]
    assert spec["holderIdentity"] == standby.identity
    assert spec["leaseTransitions"] == 1

    # The old holder comes back and sees another holder's fresh record: it does not lead.
    assert not holder.try_acquire()
    local_cluster.kubectl("delete", "namespace", namespace, "--wait=false")
