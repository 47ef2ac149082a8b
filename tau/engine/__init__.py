"""The local engine: run a checked-in target as local processes under the cluster's contract.

Not a scheduler and not a fake cluster. The same resolved `RunIntent` that renders a Job or
RayJob becomes a local process with the same `TAU_*` environment (paths mapped onto this
machine), a local run record with the cluster's lifecycle vocabulary, and the same evidence
in the local experiment store. Selection is explicit (`tau run TARGET --local`); a cluster
problem never falls back to local execution.
"""
