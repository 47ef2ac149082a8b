"""Workload profiles as `tau` consumes them: from TauCluster status, fail-closed.

- `normalize` / `profile_set_hash` / `validation_problems` (`tau.profiles.normalize`): the
  canonical form the controller publishes and every reader recomputes.
- `accept_status(tau_cluster)` → `ProfileSet` (`tau.profiles.select`): refuses stale, unready
  or tampered status; `ProfileSet.select(profile=, namespace=, team=, lane=)` picks exactly
  one ready, applicable profile and `Selection.stamps()` gives the annotations to render.
- `snapshot_from_status`, `write_snapshot`, `load_snapshot` (`tau.profiles.snapshot`):
  offline client dry-runs read a `TauWorkloadProfileSnapshot` file with the same rules.
"""
