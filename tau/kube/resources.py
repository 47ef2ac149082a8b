"""The API types TauGrid reads and writes, named once with their REST coordinates.

Modules that need another type add a `Resource` here (or next to their own code) instead of
spelling group/version/plural strings inline.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def display(self) -> str:
        """kubectl's spelling, e.g. `workspaces.tau.azure.com` or `pods`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str = "", name: str = "", subresource: str = "") -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        if name:
            base += f"/{quote(name, safe='')}"
        if subresource:
            base += f"/{subresource}"
        return base


NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
PODS = Resource("", "v1", "pods", "Pod")
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
PERSISTENT_VOLUME_CLAIMS = Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim")
STORAGE_CLASSES = Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False)
SERVICES = Resource("", "v1", "services", "Service")
SECRETS = Resource("", "v1", "secrets", "Secret")
JOBS = Resource("batch", "v1", "jobs", "Job")
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
HORIZONTAL_POD_AUTOSCALERS = Resource(
    "autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler"
)
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")
SELF_SUBJECT_ACCESS_REVIEWS = Resource(
    "authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False
)
SELF_SUBJECT_RULES_REVIEWS = Resource(
    "authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False
)

KUEUE_GROUP = "kueue.x-k8s.io"
LOCAL_QUEUES = Resource(KUEUE_GROUP, "v1beta2", "localqueues", "LocalQueue")
CLUSTER_QUEUES = Resource(KUEUE_GROUP, "v1beta2", "clusterqueues", "ClusterQueue", False)
WORKLOADS = Resource(KUEUE_GROUP, "v1beta2", "workloads", "Workload")

RAY_JOBS = Resource("ray.io", "v1", "rayjobs", "RayJob")
RAY_SERVICES = Resource("ray.io", "v1", "rayservices", "RayService")
SECRET_PROVIDER_CLASSES = Resource(
    "secrets-store.csi.x-k8s.io", "v1", "secretproviderclasses", "SecretProviderClass"
)

TAU_GROUP = "tau.azure.com"
TAU_VERSION = "v1alpha1"
TAU_WORKSPACES = Resource(TAU_GROUP, TAU_VERSION, "workspaces", "TauWorkspace")
TAU_CLUSTERS = Resource(TAU_GROUP, TAU_VERSION, "clusters", "TauCluster", False)
TAU_QUOTA_REQUESTS = Resource(TAU_GROUP, TAU_VERSION, "quotarequests", "TauQuotaRequest")
