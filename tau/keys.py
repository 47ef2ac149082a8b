"""Every label, annotation, environment variable and condition name TauGrid writes or reads.

A key spelled twice is a key that drifts: Kueue never admits a workload whose queue label
is misspelled in one renderer. Each name is defined here once, grouped by the area that
owns it. Add a section for a new area; keep existing names stable (they are a contract with
clusters that already run TauGrid workloads).
"""

from __future__ import annotations

# --- Tau metadata domain (rendering: tau/render) -------------------------------------------

# The API group of TauGrid's own kinds and the prefix of every tau label and annotation.
API_GROUP = "tau.azure.com"
API_VERSION = "v1alpha1"
TAU_API_VERSION = API_GROUP + "/" + API_VERSION
DOMAIN = API_GROUP + "/"

# Ownership / identity labels.
MANAGED_BY = DOMAIN + "managed-by"
MANAGED_BY_VALUE = "tau"
WORKSPACE = DOMAIN + "workspace"
JOB = DOMAIN + "job"
RUN = DOMAIN + "run"
RUN_ID = DOMAIN + "run-id"
WORKLOAD_KIND = DOMAIN + "workload-kind"
SERVICE = DOMAIN + "service"
DATASET = DOMAIN + "dataset"
ONBOARDING_SMOKE = DOMAIN + "onboarding-smoke"
# What a tau helper pod does (`reader` for `tau run get`, `registry-*` for `tau data`).
ROLE = DOMAIN + "role"

# Ownership / identity annotations.
NAMESPACE = DOMAIN + "namespace"
WORKSPACE_ID = DOMAIN + "workspace-id"
RESULT_SCOPE = DOMAIN + "result-scope"
OWNER_NAME = DOMAIN + "owner-name"
OWNER_KIND = DOMAIN + "owner-kind"
DURABLE_ID = DOMAIN + "durable-id"
DURABLE_ID_LEGACY = DOMAIN + "durable_id"
CLUSTER_NAME = DOMAIN + "cluster-name"
CONTROLLER_VERSION = DOMAIN + "controller-version"

# Scheduling labels.
TEAM = DOMAIN + "team"
LANE = DOMAIN + "lane"
SHAPE = DOMAIN + "shape"
TOPOLOGY = DOMAIN + "topology"
GPU_CLASS = DOMAIN + "gpu-class"
PROFILE = DOMAIN + "profile"

# Scheduling annotations.
CLUSTER_QUEUE = DOMAIN + "cluster-queue"
RESOURCE_FLAVOR = DOMAIN + "resource-flavor"
POD_PRIORITY_CLASS = DOMAIN + "pod-priority-class"
WORKLOAD_PRIORITY_CLASS = DOMAIN + "workload-priority-class"
TAU_CLUSTER_GENERATION = DOMAIN + "tau-cluster-generation"
WORKLOAD_PROFILE_SET_HASH = DOMAIN + "workload-profile-set-hash"
WORKLOAD_PROFILE = DOMAIN + "workload-profile"

# Topology labels carried by nodes (placement `same-network-domain` / `same-site`).
NETWORK_DOMAIN = DOMAIN + "network-domain"
SITE = DOMAIN + "site"

# GPU.
GPU_COUNT = DOMAIN + "gpu-count"
GPU_SIZE = DOMAIN + "gpu-size"
GPU_CONTRACT = DOMAIN + "gpu-contract"
DRA_CLAIM_TEMPLATE = DOMAIN + "dra-claim-template"

# Storage / results annotations.
STORAGE_MOUNTS = DOMAIN + "storage-mounts"
RESULT_PATH = DOMAIN + "result-path"
RESULT_PVC = DOMAIN + "result-pvc"
RESULT_ARTIFACTS = DOMAIN + "result-artifacts"
RESULT_NOTE = DOMAIN + "result-note"
ARTIFACT_URI = DOMAIN + "artifact-uri"
CHECKPOINT_URI = DOMAIN + "checkpoint-uri"
ARTIFACT_PUBLICATION = DOMAIN + "artifact-publication"
ARTIFACT_PUBLICATION_ID = DOMAIN + "artifact-publication-id"
CHECKPOINT_ARTIFACT = DOMAIN + "checkpoint-artifact"

# Profiler (`profiler.*`): what was captured, where, for which rank.
PROFILER_MODE = DOMAIN + "profile-mode"
PROFILER_PATH = DOMAIN + "profile-path"
PROFILER_PVC = DOMAIN + "profile-pvc"
PROFILER_RANK = DOMAIN + "profile-rank"
PROFILER_WORLD_SIZE = DOMAIN + "profile-world-size"
PROFILER_WARMUP = DOMAIN + "profile-warmup"
PROFILER_DURATION = DOMAIN + "profile-duration"

# Experiment / Stellar.
EXPERIMENT = DOMAIN + "experiment"
STELLAR_EXPERIMENT = DOMAIN + "stellar-experiment"
STELLAR_GROUP = DOMAIN + "stellar-group"
STELLAR_PROJECT = DOMAIN + "stellar-project"
STELLAR_PREFIX = DOMAIN + "stellar-"
EXPERIMENT_SOURCE = DOMAIN + "experiment-source"
METRICS_SESSION_ID = DOMAIN + "metrics-session-id"
CAPTURE_VERSION = DOMAIN + "capture-version"
CAPTURE_VERSION_VALUE = "v1alpha1"
STELLAR_EXPERIMENT_ID = DOMAIN + "stellar-experiment-id"
STELLAR_EXPERIMENT_TITLE_RETIRED = DOMAIN + "stellar-experiment-title"  # never emitted
STELLAR_GROUP_VALUE = DOMAIN + "stellar-group-value"
STELLAR_PROJECT_VALUE = DOMAIN + "stellar-project-value"
STELLAR_QUESTION = DOMAIN + "stellar-question"
STELLAR_TAGS = DOMAIN + "stellar-tags"

# Provenance annotations.
CODE_SHA = DOMAIN + "code-sha"
CONFIG_HASH = DOMAIN + "config-hash"
IMAGE = DOMAIN + "image"
IMAGE_DIGEST = DOMAIN + "image-digest"
TAU_COMMAND = DOMAIN + "tau-command"
SUBMISSION_ID = DOMAIN + "submission-id"
PAYLOAD_DIGEST = DOMAIN + "payload-digest"
MANIFEST_PAYLOAD_DIGEST = DOMAIN + "manifest-payload-digest"
SCRIPT_PAYLOAD_DIGEST = DOMAIN + "script-payload-digest"
SOURCE_PAYLOAD_DIGEST = DOMAIN + "source-payload-digest"

# Execution.
WORKLOADSPEC_EXECUTION = DOMAIN + "workloadspec-execution"

# Pod-template annotations copied from the workload ("correlation" subset, plus every
# stellar-* key).
CORRELATION_ANNOTATIONS = (WORKSPACE_ID, RESULT_SCOPE, EXPERIMENT_SOURCE, METRICS_SESSION_ID)

# --- Platform defaults ----------------------------------------------------------------------
# The names the chart installs and a workspace, run or helper uses when it names none; every
# default below is read from here (tests/unit/core/test_single_sources.py fails on a copy).

# The run config files looked for in a project root, in this order.
CONFIG_FILE_NAMES = ("tau.yaml", "tau.yml", ".tau.yaml")
# The workspace (and its namespace) `tau workspace create` makes when none is named.
DEFAULT_WORKSPACE = "taugrid-default"
# The LocalQueue of every workspace in v0, and the ClusterQueue it points at.
DEFAULT_QUEUE = "jobqueue"
# The workspace data PVC (`tau data`, `tau serve` checkpoints).
DEFAULT_PVC = "blob-training"
# PriorityClass / WorkloadPriorityClass of the `default` and `priority` tiers.
DEFAULT_PRIORITY_CLASS = "taugrid-default"
PRIORITY_CLASS = "taugrid-priority"
# ttlSecondsAfterFinished of a run's Job/RayJob (8h).
DEFAULT_TTL_SECONDS = 28800

# --- Kueue ----------------------------------------------------------------------------------

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_DOMAIN = KUEUE_GROUP + "/"
KUEUE_VISIBILITY_GROUP = "visibility." + KUEUE_GROUP
KUEUE_QUEUE_NAME = KUEUE_DOMAIN + "queue-name"
KUEUE_PRIORITY_CLASS = KUEUE_DOMAIN + "priority-class"
# The label Kueue puts on a Workload naming the uid of the job it admits.
KUEUE_JOB_UID = KUEUE_DOMAIN + "job-uid"
KUEUE_PODSET_REQUIRED_TOPOLOGY = KUEUE_DOMAIN + "podset-required-topology"
KUEUE_PODSET_PREFERRED_TOPOLOGY = KUEUE_DOMAIN + "podset-preferred-topology"
KUEUE_PODSET_UNCONSTRAINED_TOPOLOGY = KUEUE_DOMAIN + "podset-unconstrained-topology"
KUEUE_TOPOLOGY_ANNOTATIONS = (
    KUEUE_PODSET_REQUIRED_TOPOLOGY,
    KUEUE_PODSET_PREFERRED_TOPOLOGY,
    KUEUE_PODSET_UNCONSTRAINED_TOPOLOGY,
)

# --- KubeRay --------------------------------------------------------------------------------

RAY_API_VERSION = "ray.io/v1"
RAY_NODE_TYPE = "ray.io/node-type"
RAY_CLUSTER = "ray.io/cluster"
# The head pod's container whose log is the Ray driver's output (tau/render/driver_log.py);
# `tau logs` reads it with pods/log alone.
DRIVER_LOG_CONTAINER = "driver-log"
# The central log offload `tau logs` reads once a head pod is gone (tau/lifecycle/offload.py):
# adx-mon's container-log table, and the workspace ConfigMap publishing its ADX connection.
LOG_OFFLOAD_TABLE = "ContainerLogs"
LOG_CONNECTION_CONFIGMAP = "tau-log-connection"
LOG_CONNECTION_KEY = "connection.json"
LOG_CONNECTION_SCHEMA = "tau.logs.connection.v1"
# The chart values the platform declares the connection in; the controller publishes them.
LOG_OFFLOAD_VALUES = "tau-core-controller.logOffload.kusto"

# --- Serving (tau serve: tau/serving, tau/render/rayservice.py, tau/render/deployment.py) ---

# Kueue pod integration of a plain Deployment: every pod is a Kueue-managed workload and the
# Deployment is the parent Kueue suspends (all or nothing).
KUEUE_MANAGED = KUEUE_DOMAIN + "managed"
KUEUE_POD_SUSPENDING_PARENT = KUEUE_DOMAIN + "pod-suspending-parent"
# The selector label of a served Deployment, its Service and its HPA target.
APP_LABEL = "app"
ENV_MODEL_PATH = "TAU_MODEL_PATH"
ENV_SERVE_NODES = "TAU_SERVE_NODES"
ENV_SERVE_GPUS_PER_NODE = "TAU_SERVE_GPUS_PER_NODE"

# --- Local engine (tau/engine) --------------------------------------------------------------

ENV_LOCAL_STATE_DIR = "TAU_LOCAL_STATE_DIR"
# The local engine's Ray driver: the cluster it joins and its token authentication.
ENV_RAY_ADDRESS = "RAY_ADDRESS"
ENV_RAY_AUTH_MODE = "RAY_AUTH_MODE"
ENV_RAY_AUTH_TOKEN_PATH = "RAY_AUTH_TOKEN_PATH"
# spec.managedBy, label and annotation of a local run's status document.
LOCAL_ENGINE_MANAGED_BY = DOMAIN + "local-engine"
ENGINE = DOMAIN + "engine"
LOCAL_ATTEMPT = DOMAIN + "local-attempt"

# --- Kubernetes / Azure well-known keys -----------------------------------------------------

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
HOSTNAME_LABEL = "kubernetes.io/hostname"
AKS_NODE_MODE = "kubernetes.azure.com/mode"
AZURE_WORKLOAD_IDENTITY_USE = "azure.workload.identity/use"
NVIDIA_GPU = "nvidia.com/gpu"
NVIDIA_MIG_PREFIX = "nvidia.com/mig-"  # + a MIG profile such as 1g.10gb
ADX_MON_SCRAPE = "adx-mon/scrape"
ADX_MON_PORT = "adx-mon/port"

# --- Environment contract of rendered workloads ---------------------------------------------

ENV_PROFILE = "TAU_PROFILE"
ENV_DATA_DIR = "TAU_DATA_DIR"
ENV_HOT_DIR = "TAU_HOT_DIR"
ENV_DATASETS_DIR = "TAU_DATASETS_DIR"
ENV_CHECKPOINTS_DIR = "TAU_CHECKPOINTS_DIR"
ENV_DURABLE_DATASETS_DIR = "TAU_DURABLE_DATASETS_DIR"
ENV_DURABLE_CHECKPOINTS_DIR = "TAU_DURABLE_CHECKPOINTS_DIR"
ENV_OUTPUT_DIR = "TAU_OUTPUT_DIR"
ENV_OUTPUT_STAGING_DIR = "TAU_OUTPUT_STAGING_DIR"
ENV_SCRIPT_B64 = "TAU_SCRIPT_B64"
ENV_SCRIPT_SRC = "TAU_SCRIPT_SRC"
ENV_PAYLOAD_B64 = "TAU_PAYLOAD_B64"
ENV_PAYLOAD_DIGEST = "TAU_PAYLOAD_DIGEST"
ENV_PAYLOAD_TARGET_DIR = "TAU_PAYLOAD_TARGET_DIR"
ENV_DIST_BACKEND = "TAU_DIST_BACKEND"
ENV_NUM_WORKERS = "TAU_NUM_WORKERS"
ENV_WORLD_SIZE = "TAU_WORLD_SIZE"
ENV_RAY_TRAIN_CONFIG_JSON = "TAU_RAY_TRAIN_CONFIG_JSON"
ENV_TUNE_TRAIN_PATH = "TAU_TUNE_TRAIN_PATH"
ENV_TUNE_TRAIN_MODULE = "TAU_TUNE_TRAIN_MODULE"
ENV_TUNE_METRIC = "TAU_TUNE_METRIC"
ENV_TUNE_MODE = "TAU_TUNE_MODE"
ENV_TUNE_NUM_SAMPLES = "TAU_TUNE_NUM_SAMPLES"
ENV_TUNE_MAX_CONCURRENT_TRIALS = "TAU_TUNE_MAX_CONCURRENT_TRIALS"
ENV_TUNE_PARAM_SPACE = "TAU_TUNE_PARAM_SPACE"
ENV_METRICS_READY_FILE = "TAU_METRICS_READY_FILE"
ENV_METRICS_DONE_FILE = "TAU_METRICS_DONE_FILE"
ENV_METRICS_COMPLETION_FILE = "TAU_METRICS_COMPLETION_FILE"
ENV_METRICS_SESSION_ID = "TAU_METRICS_SESSION_ID"
# The profiler stage of the wrapper (tau/render/wrapper.py) reads these.
ENV_PROFILE_MODE = "TAU_PROFILE_MODE"
ENV_PROFILE_TOOL = "TAU_PROFILE_TOOL"
ENV_PROFILE_RANK = "TAU_PROFILE_RANK"
ENV_PROFILE_OUT_DIR = "TAU_PROFILE_OUT_DIR"
ENV_PROFILE_RUN_ID = "TAU_PROFILE_RUN_ID"
ENV_PROFILE_NAMESPACE = "TAU_PROFILE_NAMESPACE"
ENV_PROFILE_EXT = "TAU_PROFILE_EXT"
ENV_PROFILE_WARMUP_SEC = "TAU_PROFILE_WARMUP_SEC"
ENV_PROFILE_ACTIVE_SEC = "TAU_PROFILE_ACTIVE_SEC"
ENV_PROFILE_OUT = "TAU_PROFILE_OUT"
ENV_PROFILE_OUT_PATTERN = "TAU_PROFILE_OUT_PATTERN"
# Where a process learns its rank, first set wins (launchers: torch/Ray, Open MPI, PMI);
# a process with none of them is rank 0.
RANK_ENV = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK")

# Managed workflows (tau/render/workflow.py) and the Python SDK's in-pod wrapper (tau/sdk).
ENV_METRICS_HISTORY = "TAU_METRICS_HISTORY"
ENV_UPSTREAM_CHECKPOINT = "TAU_UPSTREAM_CHECKPOINT"
ENV_STORAGE_HOT_STATUS = "TAU_STORAGE_HOT_STATUS"
ENV_STORAGE_HOT_WRITE_MBPS = "TAU_STORAGE_HOT_WRITE_MBPS"
# Key Vault secrets through the Secrets Store CSI driver (runtime.env_kv).
SECRETS_STORE_API_VERSION = "secrets-store.csi.x-k8s.io/v1"
SECRETS_STORE_DRIVER = "secrets-store.csi.k8s.io"
SECRETS_STORE_MOUNT = "/mnt/secrets-store"
# Datasets a run consumes (`dataset:NAME@TOKEN` references), as JSON [{name, version, digest}].
DATASETS = DOMAIN + "datasets"

# Retry / resume: the only TAU_ names a user may set in runtime.env.
ENV_RESUME_FROM = "TAU_RESUME_FROM"
ENV_RETRY_ATTEMPT = "TAU_RETRY_ATTEMPT"
ENV_RETRY_MAX = "TAU_RETRY_MAX"
ENV_RETRY_REASON = "TAU_RETRY_REASON"
USER_SETTABLE_TAU_ENV = (ENV_RESUME_FROM, ENV_RETRY_ATTEMPT, ENV_RETRY_MAX, ENV_RETRY_REASON)
TAU_ENV_PREFIX = "TAU_"

# Distributed launchers (set by Tau, reserved in runtime.env).
ENV_MASTER_ADDR = "MASTER_ADDR"
ENV_MASTER_PORT = "MASTER_PORT"
ENV_JOB_COMPLETION_INDEX = "JOB_COMPLETION_INDEX"
ENV_OMP_NUM_THREADS = "OMP_NUM_THREADS"
NCCL_ENV_PREFIX = "NCCL_"
# Ray pod defaults (tau/render/rayjob.py): the Hugging Face cache on the pod's disk, NCCL's log
# level and the pod network interface; the local engine drops the cache and the interface.
ENV_HF_HOME = "HF_HOME"
ENV_NCCL_DEBUG = "NCCL_DEBUG"
ENV_NCCL_SOCKET_IFNAME = "NCCL_SOCKET_IFNAME"

# --- Environment read by the CLI ------------------------------------------------------------

ENV_DEBUG = "TAU_DEBUG"  # set: a crash prints its traceback instead of one line
ENV_PYTHON = "TAU_PYTHON"  # the interpreter `tau python` runs
ENV_SYSTEM_NAMESPACE = "TAU_SYSTEM_NAMESPACE"
ENV_PORTAL_URL = "TAU_PORTAL_URL"
ENV_BINARY = "TAU_BINARY"  # the `tau` the Python SDK hands a run to
# Kubernetes client configuration (kubectl's names).
ENV_KUBECONFIG = "KUBECONFIG"
ENV_KUBERNETES_SERVICE_HOST = "KUBERNETES_SERVICE_HOST"  # set inside a pod
ENV_XDG_CONFIG_HOME = "XDG_CONFIG_HOME"
ENV_XDG_STATE_HOME = "XDG_STATE_HOME"  # local run records
ENV_XDG_DATA_HOME = "XDG_DATA_HOME"  # local /data and experiment store
ENV_AZURE_AUTHORITY_HOST = "AZURE_AUTHORITY_HOST"

ENV_CONTEXT = "TAU_CONTEXT"
ENV_CONFIG_DIR = "TAU_CONFIG_DIR"
# Workspace connection (tau/workspace): AKS sign-in flow and Azure Resource Manager endpoint.
ENV_AUTH_MODE = "TAU_AUTH_MODE"
ENV_AZURE_RESOURCE_MANAGER = "TAU_AZURE_RESOURCE_MANAGER"
ENV_REVALIDATION_TIMEOUT = "TAU_CONNECTION_REVALIDATION_TIMEOUT"
ENV_TEAM = "TAU_TEAM"
ENV_METRICS_OFFLOAD_IMAGE = "TAU_METRICS_OFFLOAD_IMAGE"
ENV_METRICS_OFFLOAD_OUT = "TAU_METRICS_OFFLOAD_OUT"
ENV_METRICS_OFFLOAD_SOURCE = "TAU_METRICS_OFFLOAD_SOURCE"
ENV_METRICS_OFFLOAD_REMOTE_WRITE_ENDPOINT = "TAU_METRICS_OFFLOAD_REMOTE_WRITE_ENDPOINT"
ENV_METRICS_OFFLOAD_INTERVAL = "TAU_METRICS_OFFLOAD_INTERVAL"
# `taugrid-portal experiment offload metrics` flags read from the environment.
ENV_METRICS_OFFLOAD_RUN = "TAU_METRICS_OFFLOAD_RUN"
ENV_METRICS_OFFLOAD_PROJECT = "TAU_METRICS_OFFLOAD_PROJECT"
ENV_METRICS_OFFLOAD_EXPERIMENT = "TAU_METRICS_OFFLOAD_EXPERIMENT"
ENV_METRICS_OFFLOAD_GROUP = "TAU_METRICS_OFFLOAD_GROUP"
ENV_METRICS_OFFLOAD_COMPLETION_FILE = "TAU_METRICS_OFFLOAD_COMPLETION_FILE"
ENV_METRICS_OFFLOAD_ARTIFACT_URI = "TAU_METRICS_OFFLOAD_ARTIFACT_URI"
ENV_METRICS_OFFLOAD_CHECKPOINT_URI = "TAU_METRICS_OFFLOAD_CHECKPOINT_URI"
ENV_METRICS_OFFLOAD_TAGS = "TAU_METRICS_OFFLOAD_TAGS"
ENV_POD_NAME = "POD_NAME"
ENV_NODE_NAME = "NODE_NAME"
# Helper pods (`tau data`): an image mirror for clusters without Docker Hub, and where they may
# run when every node is tainted: `k=v,k2=v2` and `key=value:Effect,key:Effect` (Exists).
ENV_HELPER_IMAGE = "TAU_HELPER_IMAGE"
ENV_HELPER_NODE_SELECTOR = "TAU_HELPER_NODE_SELECTOR"
ENV_HELPER_TOLERATIONS = "TAU_HELPER_TOLERATIONS"
# Payloads handed to a `tau data` registry helper pod (base64, chunked as NAME_0, NAME_1, ...).
ENV_HELPER_OPS = "TAU_OPS"
ENV_HELPER_LIST = "TAU_LIST"
ENV_HELPER_BLOB_PREFIX = "TAU_BLOB_"  # + the blob's index

# --- Experiment store and the tau.stellar logger (tau/evidence, tau/stellar.py) --------------

ENV_EXP_STORE = "TAU_EXP_STORE"
# The KueueViz frontend bundle the Portal serves under /kueueviz/ (the Portal image sets it).
ENV_KUEUEVIZ_BUNDLE = "TAU_KUEUEVIZ_BUNDLE"
ENV_EXP_STORE_ROOT = "TAU_EXP_STORE_ROOT"
ENV_PROJECT = "TAU_PROJECT"
ENV_GROUP = "TAU_GROUP"
ENV_EXPERIMENT_ID = "TAU_EXPERIMENT_ID"
ENV_EXPERIMENT = "TAU_EXPERIMENT"
ENV_STELLAR_DIR = "TAU_STELLAR_DIR"
ENV_JOB_NAME = "JOB_NAME"
# Run name for tau.stellar when init() names none (the local engine sets it to the run name).
ENV_RUN_NAME = "TAU_RUN_NAME"
# Store-root composite: TAU_EXP_STORE_ROOT / TAU_CONTEXT / TAU_TEAM / TAU_PROJECT.
EXP_STORE_SCOPE_ENV = (ENV_CONTEXT, ENV_TEAM, ENV_PROJECT)

# --- tau-core controller (tau/controller, tau/profiles) --------------------------------------

APP_MANAGED_BY = "app.kubernetes.io/managed-by"
CONTROLLER_NAME = "tau-core-controller"
LOCAL_QUEUE = DOMAIN + "local-queue"
KUEUE_DEFAULT_LOCAL_QUEUE = KUEUE_DOMAIN + "default-local-queue"
PSA_ENFORCE = "pod-security.kubernetes.io/enforce"
PSA_AUDIT = "pod-security.kubernetes.io/audit"
PSA_WARN = "pod-security.kubernetes.io/warn"
AZURE_WORKLOAD_IDENTITY_CLIENT_ID = "azure.workload.identity/client-id"
PRIMARY_WORKSPACE = DOMAIN + "v0-primary-workspace"
WORKSPACE_FINALIZER = DOMAIN + "workspace-cleanup"
QUOTA_APPROVED = DOMAIN + "approved"
QUOTA_REJECTED = DOMAIN + "rejected"
QUOTA_REVIEWED_BY = DOMAIN + "reviewed-by"
KUEUE_GPU_SERIES = "kueue.azure.com/gpu-series"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
MULTIKUEUE_CONTROLLER = KUEUE_DOMAIN + "multikueue"

# Condition types (TauWorkspace, TauCluster, workload profiles, TauQuotaRequest).
COND_READY = "Ready"
COND_RBAC_READY = "RBACReady"
COND_QUEUE_READY = "QueueReady"
COND_WORKLOAD_IDENTITY_READY = "WorkloadIdentityReady"
COND_LOG_CONNECTION_READY = "LogConnectionReady"
COND_DRIFT_DETECTED = "DriftDetected"
COND_NODES_READY = "NodesReady"
COND_WORKLOAD_PROFILES_READY = "WorkloadProfilesReady"
COND_MULTIKUEUE_READY = "MultiKueueReady"
COND_QUEUES_READY = "QueuesReady"
COND_WORKSPACES_READY = "WorkspacesReady"
COND_OWNERSHIP_CONFLICT = "OwnershipConflict"
COND_DELETION_BLOCKED = "DeletionBlocked"
COND_OBSERVE_ONLY = "ObserveOnly"
COND_RECONCILE_PAUSED = "ReconcilePaused"
COND_LOCAL_QUEUES_RESOLVED = "LocalQueuesResolved"
COND_CLUSTER_QUEUES_READY = "ClusterQueuesReady"
COND_EXECUTION_READY = "ExecutionReady"
COND_RESOURCE_FLAVORS_READY = "ResourceFlavorsReady"
COND_TOPOLOGIES_READY = "TopologiesReady"
COND_PRIORITY_CLASSES_READY = "PriorityClassesReady"
COND_APPROVED = "Approved"
COND_QUOTA_MUTATED = "QuotaMutated"
# Condition reasons the CLI interprets (the rest live with the reconcilers).
REASON_ADDITIONAL_WORKSPACE_BLOCKED = "AdditionalWorkspaceBlocked"

# --- Distribution chart and `tau cluster` (charts/taugrid, tau/cluster) ----------------------

# The optional third-party operators and the values switch of each. charts/taugrid (as checked
# in) has neither; charts/taugrid-bundle, the published chart, adds both as dependencies.
CHART_OPERATORS = (
    ("kueue", "components.kueue.enabled"),
    ("kuberay-operator", "components.kuberayOperator.enabled"),
)
BUNDLE_CHART_DIR = "charts/taugrid-bundle"
APP_NAME = "app.kubernetes.io/name"
APP_INSTANCE = "app.kubernetes.io/instance"
APP_PART_OF = "app.kubernetes.io/part-of"
APP_PART_OF_VALUE = "taugrid"
APP_COMPONENT = "app.kubernetes.io/component"
PORTAL_COMPONENT = "portal"
HELM_CHART_LABEL = "helm.sh/chart"
PROBE_MANAGED_BY_VALUE = "tau-validate"  # APP_MANAGED_BY of `validate nodes` probe pods
TAU_GPU_SERIES = DOMAIN + "gpu-series"  # legacy series label, refused on CPU flavors
NVIDIA_GPU_PRODUCT = "nvidia.com/gpu.product"
AKS_ACCELERATOR = "kubernetes.azure.com/accelerator"
ZONE_LABEL = "topology.kubernetes.io/zone"
DRA_NVIDIA_GPU = "gpu.nvidia.com"
GPU_MONITORING = (
    DOMAIN + "gpu-monitoring"
)  # `true` on the GPU metrics exporter pods  # DRA device class / Kueue deviceClassMapping name
COND_ACTIVE = "Active"  # Kueue ClusterQueue / AdmissionCheck condition
# Node conditions the gpu-monitoring chart's node-problem-detector checks set (True = problem).
GPU_HEALTH_CONDITIONS = (
    "NvidiaSmiProblem",
    "GPUMissing",
    "NVLinkStatusInactive",
    "GPUECCErrors",
    "IBLinkIssue",
    "DcgmHealthProblem",
)

# --- Infrastructure (infra/: Pulumi components) ----------------------------------------------

AKS_GPU_SKU = "aks.azure.com/gpu-sku"
AKS_AGENTPOOL = "kubernetes.azure.com/agentpool"
KUBERNETES_OS = "kubernetes.io/os"
# pulumi-kubernetes await annotations on objects it has no built-in readiness for (>= 4.18).
PULUMI_WAIT_FOR = "pulumi.com/waitFor"
PULUMI_TIMEOUT_SECONDS = "pulumi.com/timeoutSeconds"
# Set false: the NVIDIA device plugin waits instead of crash-looping where no driver is up.
ENV_NVIDIA_FAIL_ON_INIT_ERROR = "FAIL_ON_INIT_ERROR"
