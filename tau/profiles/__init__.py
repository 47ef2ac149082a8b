"""Workload profiles as `tau` consumes them: from TauCluster status, fail-closed.

Every command that selects a profile (`tau run`, `tau serve`, `tau cluster profiles export`)
goes through these, so live status and snapshots are verified one way, upstream's way:

- `profile_set_hash(profiles)` (`tau.profiles.normalize`): upstream's profileSetHash, byte for
  byte; `normalize` / `validation_problems`: the canonical form the controller publishes.
- `read_profile_set(client)` (`tau.profiles.live`) or `accept_status(tau_cluster)`
  (`tau.profiles.select`) → `ProfileSet`: refuses stale, unready or tampered status;
  `ProfileSet.select(profile=, namespace=, team=, lane=, scopes=)` picks exactly one ready,
  applicable (in the `scopes` the command authorizes by)
  profile and `Selection.stamps()` gives the annotations to render.
- `snapshot_from`, `write_snapshot`, `load_snapshot` (`tau.profiles.snapshot`): offline client
  dry-runs read a `TauWorkloadProfileSnapshot` file (ours or upstream's) with the same rules.
"""
