"""Serving: turn a pinned image and an optional checkpoint into an admitted endpoint.

- `deploy(DeployRequest)` (`tau.serving.deploy`): flags → workload profile (fail-closed, live
  or snapshot) → the namespace's default LocalQueue → RayService or Deployment (+ Service,
  HPA) → client dry-run, server dry-run or server-side apply.
- `status`, `scale`, `delete` (`tau.serving.manage`): inspect, resize and remove an endpoint.

Serving reads the namespace and context passed explicitly (the platform handoff), never the
repository's workspace connection descriptor.
"""
