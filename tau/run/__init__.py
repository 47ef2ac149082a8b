"""The run path above both engines: one planner and one backend interface.

`failures` and `status` are the vocabulary both engines share (a retry and a status
document mean the same on a cluster and on this machine); they import nothing from
`tau.lifecycle`, `tau.engine` or `tau.kube`, so the local engine never loads the
Kubernetes client to reuse them.
"""
