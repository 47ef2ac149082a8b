"""The tau-core controller: reconcilers for TauWorkspace, TauCluster and TauQuotaRequest.

Run it with `python -m tau.controller --system-namespace tau-system`. Reconcilers are plain
functions of the object and what they read from the API server; `tau.controller.operator`
wires them to kopf's watches and a small per-object work queue.
"""
