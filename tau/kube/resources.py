"""The API types TauGrid reads and writes, named once with their REST coordinates.

The one table of `Resource` definitions: the CLI, the controller, the Portal and the cluster
verbs all import their types from here, so a version bump (Kueue v1beta2 -> v1) is one edit.
A module that needs another type adds it here instead of spelling group/version/plural inline.
It imports nothing heavy, so offline commands and the controller can both use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from tau import keys


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
NODES = Resource("", "v1", "nodes", "Node", namespaced=False)
PODS = Resource("", "v1", "pods", "Pod")
EVENTS = Resource("", "v1", "events", "Event")
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
PERSISTENT_VOLUME_CLAIMS = Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim")
STORAGE_CLASSES = Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False)
SERVICES = Resource("", "v1", "services", "Service")
SECRETS = Resource("", "v1", "secrets", "Secret")
CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap")
JOBS = Resource("batch", "v1", "jobs", "Job")
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
HORIZONTAL_POD_AUTOSCALERS = Resource(
    "autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler"
)
RBAC_GROUP = "rbac.authorization.k8s.io"
ROLES = Resource(RBAC_GROUP, "v1", "roles", "Role")
ROLE_BINDINGS = Resource(RBAC_GROUP, "v1", "rolebindings", "RoleBinding")
CLUSTER_ROLE_BINDINGS = Resource(
    RBAC_GROUP, "v1", "clusterrolebindings", "ClusterRoleBinding", False
)
PRIORITY_CLASSES = Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
RESOURCE_CLAIMS = Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim")
RESOURCE_SLICES = Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False)
VALIDATING_ADMISSION_POLICIES = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingadmissionpolicies",
    "ValidatingAdmissionPolicy",
    False,
)
VALIDATING_ADMISSION_POLICY_BINDINGS = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingadmissionpolicybindings",
    "ValidatingAdmissionPolicyBinding",
    False,
)
SELF_SUBJECT_ACCESS_REVIEWS = Resource(
    "authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False
)
SELF_SUBJECT_RULES_REVIEWS = Resource(
    "authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False
)

KUEUE = keys.KUEUE_GROUP
LOCAL_QUEUES = Resource(KUEUE, "v1beta2", "localqueues", "LocalQueue")
CLUSTER_QUEUES = Resource(KUEUE, "v1beta2", "clusterqueues", "ClusterQueue", False)
WORKLOADS = Resource(KUEUE, "v1beta2", "workloads", "Workload")
RESOURCE_FLAVORS = Resource(KUEUE, "v1beta2", "resourceflavors", "ResourceFlavor", False)
TOPOLOGIES = Resource(KUEUE, "v1beta2", "topologies", "Topology", False)
COHORTS = Resource(KUEUE, "v1beta2", "cohorts", "Cohort", False)
WORKLOAD_PRIORITY_CLASSES = Resource(
    KUEUE, "v1beta2", "workloadpriorityclasses", "WorkloadPriorityClass", False
)
ADMISSION_CHECKS = Resource(KUEUE, "v1beta2", "admissionchecks", "AdmissionCheck", False)
MULTIKUEUE_CONFIGS = Resource(KUEUE, "v1beta1", "multikueueconfigs", "MultiKueueConfig", False)
MULTIKUEUE_CLUSTERS = Resource(KUEUE, "v1beta1", "multikueueclusters", "MultiKueueCluster", False)

RAY_JOBS = Resource("ray.io", "v1", "rayjobs", "RayJob")
RAY_SERVICES = Resource("ray.io", "v1", "rayservices", "RayService")
RAY_CLUSTERS = Resource("ray.io", "v1", "rayclusters", "RayCluster")
SECRET_PROVIDER_CLASSES = Resource(
    "secrets-store.csi.x-k8s.io", "v1", "secretproviderclasses", "SecretProviderClass"
)

TAU_WORKSPACES = Resource(keys.API_GROUP, keys.API_VERSION, "workspaces", "TauWorkspace")
TAU_CLUSTERS = Resource(keys.API_GROUP, keys.API_VERSION, "clusters", "TauCluster", False)
TAU_QUOTA_REQUESTS = Resource(keys.API_GROUP, keys.API_VERSION, "quotarequests", "TauQuotaRequest")
