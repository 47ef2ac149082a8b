"""From a loaded run config to resolved run settings, each value knowing its source.

Which config a `tau run` means (targets in a monorepo project), the layered resolution of run
settings with provenance, the workspace profile and data requests. The connection a run
resolves against comes from `tau.connection`.
"""
