"""`tau cluster`: install, validate and uninstall the TauGrid distribution.

Helm does the installing (the real binary on PATH, wrapped in `helm.py`); this package adds
what Helm does not know: the install plan, the bootstrap pass Kueue's webhooks need, the
component-aware readiness report, node and topology diagnostics, and the queue drain before
uninstall. Cluster reads go through `tau.kube`.
"""
