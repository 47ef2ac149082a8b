"""API types the run lifecycle reads besides the common ones in `tau.kube.resources`."""

from __future__ import annotations

from tau.kube.resources import KUEUE_GROUP, Resource

EVENTS = Resource("", "v1", "events", "Event")
SERVICES = Resource("", "v1", "services", "Service")
NODES = Resource("", "v1", "nodes", "Node", namespaced=False)
ADMISSION_CHECKS = Resource(KUEUE_GROUP, "v1beta2", "admissionchecks", "AdmissionCheck", False)
RAY_CLUSTERS = Resource("ray.io", "v1", "rayclusters", "RayCluster")
RESOURCE_CLAIMS = Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim")
