"""The typed stack configuration: every variable of the upstream Terraform root, same names.

Operators moving from `terraform.tfvars` keep their variable names, defaults and validation
messages, so one model serves `pulumi up`, the stack files in `stacks/` and terraform-compat.
Validation runs before the program registers a single resource: a bad key never leaves a
half-created environment behind.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tau import __version__ as TAU_VERSION
from tau import keys
from tau.errors import ValidationError as TauValidationError

PROJECT = "taugrid"
"""The Pulumi project name, and therefore the namespace of every stack config key."""

SELF_MANAGED = "self_managed"
AKS_MANAGED_PREVIEW = "aks_managed_preview"

ADX_METRICS_DATABASE = "Metrics"
ADX_LOGS_DATABASE = "Logs"
ADX_DATABASES = (ADX_METRICS_DATABASE, ADX_LOGS_DATABASE, "CostTracking", "Audit")
ADX_NAME_PREFIX = "taugrid"
ADX_NAME_HASH_CHARS = 13

CLUSTER_NAME_PATTERN = re.compile(r"^[a-zA-Z][-a-zA-Z0-9]{0,53}$")
DNS1123_LABEL_PATTERN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
UUID_PATTERN = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
ADX_NAME_PATTERN = re.compile(r"^[a-z0-9]{4,22}$")
RESERVED_WORKSPACE_NAMESPACES = ("default", "tau-system", "tau-platform")

# The validation messages are the Terraform root's, word for word: runbooks and CI logs that
# grep for them keep working after the move to Pulumi.
MSG_CLUSTER_NAME = (
    "cluster_name must start with a letter, use only letters, digits, and hyphens, "
    "and be at most 54 characters."
)
MSG_GPU_STACK_MODE = "gpu_stack_mode must be self_managed or aks_managed_preview."
MSG_GPU_MIN_COUNT = "gpu_min_count must be non-negative."
MSG_GPU_MAX_COUNT = "gpu_max_count must be greater than or equal to gpu_min_count."
MSG_RECORDER_REQUIRES_ADX = "enable_lifecycle_recorder requires enable_adx=true."
MSG_WORKSPACE_NAMESPACE = (
    "workspace_namespace must be a DNS-1123 label of at most 63 characters and must not be "
    "default, tau-system, tau-platform, or start with kube-."
)
MSG_BOOTSTRAP_WORKSPACE = (
    "bootstrap_workspace.name must be a lowercase Kubernetes name of at most 63 characters, "
    "and entra_group_object_id must be an Entra group object ID UUID."
)
MSG_ADX_CLUSTER_NAME = (
    "adx_cluster_name must be empty for automatic generation or contain 4 to 22 lowercase "
    "letters or digits."
)
MSG_GENERATED_DIRECTORY = "generated_directory must be null or a non-empty path."
MSG_AUTOSCALING_WITH_MIG = (
    "gpu_auto_scaling_enabled cannot be used with normalize_gpu_mig because newly scaled A100 "
    "nodes would not be normalized. Set normalize_gpu_mig=false only after validating the "
    "selected GPU SKU does not require MIG normalization."
)
MSG_AUTOSCALING_WITH_PREVIEW = (
    "gpu_auto_scaling_enabled is not supported with gpu_stack_mode=aks_managed_preview during "
    "the AKS Managed GPU Experience preview."
)
MSG_BOOTSTRAP_REQUIRES_INSTALL = (
    "bootstrap_workspace requires install_taugrid=true: the TauWorkspace kind is installed by "
    "the platform."
)
MSG_ADX_REQUIRES_AZURE = (
    "enable_adx creates Azure resources and cannot be combined with kube_context; "
    "unset kube_context or set enable_adx=false."
)
MSG_SUBSCRIPTION_REQUIRED = (
    "subscription_id is required: it names the Azure subscription the stack deploys into "
    "(only a stack with kube_context set targets an existing cluster without Azure)."
)


class BootstrapWorkspace(BaseModel):
    """The single Entra-backed TauWorkspace applied right after the platform installs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    entra_group_object_id: str

    @field_validator("entra_group_object_id")
    @classmethod
    def _check(cls, value: str, info: Any) -> str:
        name = info.data.get("name", "")
        if not (
            DNS1123_LABEL_PATTERN.match(name) and len(name) <= 63 and UUID_PATTERN.match(value)
        ):
            raise ValueError(MSG_BOOTSTRAP_WORKSPACE)
        return value


class StackConfig(BaseModel):
    """One stack's configuration. Field names are the Terraform variable names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # --- Azure account and AKS ------------------------------------------------------------
    subscription_id: str | None = Field(
        default=None, description="Azure subscription ID (required unless kube_context is set)."
    )
    tenant_id: str | None = Field(
        default=None, description="Managed Entra tenant ID; null uses the caller's tenant."
    )
    aks_admin_group_object_ids: list[str] = Field(
        default_factory=list,
        description="Entra groups granted AKS cluster-admin; managed Entra stays on when empty.",
    )
    azure_rbac_enabled: bool = Field(
        default=False,
        description="Azure RBAC for Kubernetes authorization; keep false so TauWorkspace "
        "RoleBindings authorize.",
    )
    location: str = Field(default="swedencentral", description="Azure region.")
    resource_group_name: str = Field(default="rg-taugrid-aks", description="Resource group.")
    cluster_name: str = Field(default="taugrid-aks", description="AKS name and DNS prefix.")
    kubernetes_version: str | None = Field(
        default=None, description="AKS Kubernetes version; null uses the regional default."
    )
    system_node_count: int = Field(default=2, description="System pool node count.")
    system_vm_size: str = Field(default="Standard_D4ds_v6", description="System pool VM size.")

    # --- GPU pool -------------------------------------------------------------------------
    enable_gpu: bool = Field(
        default=True,
        description="false: no GPU pool, no GPU flavor in the baseline queue, no GPU monitoring.",
    )
    gpu_node_pool_name: str = Field(default="gpu", description="GPU user pool name.")
    gpu_stack_mode: Literal["self_managed", "aks_managed_preview"] = Field(
        default=SELF_MANAGED,
        description="self_managed installs the device plugin and DCGM exporter; "
        "aks_managed_preview uses the AKS Managed GPU Experience preview.",
    )
    gpu_vm_size: str = Field(default="Standard_NC24ads_A100_v4", description="GPU VM SKU.")
    gpu_node_count: int = Field(default=1, description="GPU nodes when autoscaling is off.")
    gpu_auto_scaling_enabled: bool = Field(
        default=False, description="Cluster autoscaling for the GPU pool."
    )
    gpu_min_count: int = Field(default=1, description="Autoscaling minimum (>= 0).")
    gpu_max_count: int = Field(default=1, description="Autoscaling maximum (>= gpu_min_count).")
    gpu_count_per_node: int = Field(default=1, description="GPUs per node; must match the SKU.")
    gpu_monitoring_sku_name: str = Field(
        default="a100-pcie-1g", description="gpu-monitoring profile key (aks.azure.com/gpu-sku)."
    )
    gpu_flavor_name: str = Field(default="taugrid-a100", description="Kueue ResourceFlavor name.")
    gpu_class: str = Field(default="a100-80gb", description=f"Node label {keys.GPU_CLASS}.")
    gpu_series: str = Field(
        default="nc24ads-a100-v4", description="Node label kueue.azure.com/gpu-series."
    )
    normalize_gpu_mig: bool = Field(
        default=True, description="Disable MIG on the initial GPU pool before installing."
    )

    # --- TauGrid --------------------------------------------------------------------------
    taugrid_version: str = Field(
        default=TAU_VERSION,
        description="Chart version when taugrid_chart is a repository chart (default: this "
        "release's).",
    )
    install_taugrid: bool = Field(default=True, description="Install the TauGrid platform.")
    command_interpreter: list[str] = Field(
        default_factory=lambda: ["pwsh", "-NoProfile", "-NonInteractive", "-Command"],
        description="Terraform local-exec interpreter; accepted for tfvars compatibility, "
        "unused (every step is a Pulumi resource).",
    )
    generated_directory: str | None = Field(
        default=None,
        description="Terraform's generated-file directory; accepted for tfvars compatibility, "
        "unused (Pulumi writes no local files).",
    )

    # --- ADX and identities ---------------------------------------------------------------
    enable_adx: bool = Field(default=False, description="Create the Azure Data Explorer plane.")
    enable_lifecycle_recorder: bool = Field(
        default=False, description="Lifecycle recorder and Portal run history (needs ADX)."
    )
    workspace_namespace: str = Field(
        default=keys.DEFAULT_WORKSPACE, description="TauWorkspace target namespace."
    )
    bootstrap_workspace: BootstrapWorkspace | None = Field(
        default=None, description="Optional {name, entra_group_object_id} workspace to apply."
    )
    adx_cluster_name: str = Field(
        default="", description="Explicit ADX name; empty generates taugrid + 13 hex chars."
    )
    adx_sku_name: str = Field(
        default="Dev(No SLA)_Standard_D11_v2",
        description="ADX SKU; the default is the docs' dev SKU (no SLA, one instance).",
    )
    adx_sku_capacity: int = Field(default=1, description="ADX instance count.")
    adx_streaming_ingestion_enabled: bool = Field(
        default=True, description="ADX streaming ingestion."
    )
    dcgm_exporter_chart_version: str = Field(
        default="4.8.3", description="Upstream NVIDIA DCGM exporter chart version."
    )
    tags: dict[str, str] = Field(
        default_factory=lambda: {"scenario": "taugrid-aks"}, description="Azure resource tags."
    )

    # --- Pulumi additions (no Terraform counterpart) --------------------------------------
    kube_context: str | None = Field(
        default=None,
        description="Install the platform onto this existing kubeconfig context and create "
        "nothing in Azure (the dev stack).",
    )
    kubeconfig: str | None = Field(
        default=None,
        description="Kubeconfig file for kube_context; null uses $KUBECONFIG or ~/.kube/config.",
    )
    taugrid_chart: str = Field(
        default="charts/taugrid-bundle",
        description="The chart to install: a path relative to the project root, or a "
        "repository reference installed at taugrid_version.",
    )
    taugrid_values: dict[str, Any] = Field(
        default_factory=dict,
        description="Extra chart values layered over the generated document (like one more "
        "-f file).",
    )

    @field_validator("cluster_name")
    @classmethod
    def _cluster_name(cls, value: str) -> str:
        if not CLUSTER_NAME_PATTERN.match(value):
            raise ValueError(MSG_CLUSTER_NAME)
        return value

    @field_validator("gpu_stack_mode", mode="before")
    @classmethod
    def _gpu_stack_mode(cls, value: Any) -> Any:
        if value not in (SELF_MANAGED, AKS_MANAGED_PREVIEW):
            raise ValueError(MSG_GPU_STACK_MODE)
        return value

    @field_validator("gpu_min_count")
    @classmethod
    def _gpu_min_count(cls, value: int) -> int:
        if value < 0:
            raise ValueError(MSG_GPU_MIN_COUNT)
        return value

    @field_validator("workspace_namespace")
    @classmethod
    def _workspace_namespace(cls, value: str) -> str:
        if (
            not value
            or len(value) > 63
            or not DNS1123_LABEL_PATTERN.match(value)
            or value in RESERVED_WORKSPACE_NAMESPACES
            or value.startswith("kube-")
        ):
            raise ValueError(MSG_WORKSPACE_NAMESPACE)
        return value

    @field_validator("adx_cluster_name")
    @classmethod
    def _adx_cluster_name(cls, value: str) -> str:
        if value and not ADX_NAME_PATTERN.match(value):
            raise ValueError(MSG_ADX_CLUSTER_NAME)
        return value

    @field_validator("generated_directory")
    @classmethod
    def _generated_directory(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError(MSG_GENERATED_DIRECTORY)
        return value

    @field_validator(
        "aks_admin_group_object_ids",
        "command_interpreter",
        "bootstrap_workspace",
        "tags",
        "taugrid_values",
        mode="before",
    )
    @classmethod
    def _structured(cls, value: Any) -> Any:
        # The Pulumi engine hands structured config to the program as JSON text.
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError:
                return value
        return value

    # --- derived values (Terraform locals) ------------------------------------------------

    @property
    def provisions_azure(self) -> bool:
        """False for a stack that only installs the platform onto an existing context."""
        return self.kube_context is None

    @property
    def has_gpu_pool(self) -> bool:
        return self.provisions_azure and self.enable_gpu

    @property
    def gpu_quota(self) -> int:
        nodes = self.gpu_max_count if self.gpu_auto_scaling_enabled else self.gpu_node_count
        return nodes * self.gpu_count_per_node

    @property
    def resolved_adx_cluster_name(self) -> str:
        return adx_cluster_name(
            self.subscription_id or "",
            self.resource_group_name,
            self.cluster_name,
            explicit=self.adx_cluster_name,
        )


def adx_cluster_name(
    subscription_id: str, resource_group_name: str, cluster_name: str, *, explicit: str = ""
) -> str:
    """The ADX cluster name: globally unique, stable across applies, at most 22 characters.

    Hashing the three identifying names gives every environment its own candidate without a
    naming service; an explicit name wins when Azure reports the candidate taken.
    """
    if explicit:
        return explicit
    seed = f"{subscription_id}:{resource_group_name}:{cluster_name}".encode()
    return ADX_NAME_PREFIX + hashlib.sha256(seed).hexdigest()[:ADX_NAME_HASH_CHARS]


class StackConfigError(TauValidationError):
    """Stack configuration that violates the contract; every problem names its key."""

    def __init__(self, problems: list[str]) -> None:
        # One problem is the message itself; several are listed, with a count as the message.
        super().__init__(
            _summary(problems), problems=problems if len(problems) > 1 else [], owner="platform"
        )
        self.all_problems = list(problems)


def _cross_field_problems(config: StackConfig) -> list[str]:
    problems: list[str] = []
    if config.provisions_azure and not config.subscription_id:
        problems.append(MSG_SUBSCRIPTION_REQUIRED)
    if config.gpu_max_count < config.gpu_min_count:
        problems.append(MSG_GPU_MAX_COUNT)
    if config.enable_lifecycle_recorder and not config.enable_adx:
        problems.append(MSG_RECORDER_REQUIRES_ADX)
    if config.enable_adx and not config.provisions_azure:
        problems.append(MSG_ADX_REQUIRES_AZURE)
    if config.bootstrap_workspace is not None and not config.install_taugrid:
        problems.append(MSG_BOOTSTRAP_REQUIRES_INSTALL)
    if config.has_gpu_pool and config.gpu_auto_scaling_enabled:
        # Terraform checks these as GPU node pool preconditions: only when the pool exists.
        if config.normalize_gpu_mig:
            problems.append(MSG_AUTOSCALING_WITH_MIG)
        if config.gpu_stack_mode == AKS_MANAGED_PREVIEW:
            problems.append(MSG_AUTOSCALING_WITH_PREVIEW)
    return problems


def _describe(error: Mapping[str, Any]) -> str:
    key = ".".join(str(part) for part in error["loc"] if not isinstance(part, int))
    if error["type"] == "value_error":
        message = str(error["ctx"]["error"])
    elif error["type"] == "extra_forbidden":
        message = "is not a setting of this project; check the spelling (see docs/infra.md)"
    else:
        message = error["msg"]
    return message if message.startswith(key.split(".")[0]) else f"{key}: {message}"


def parse_stack_config(values: Mapping[str, Any]) -> StackConfig:
    """Validate plain `{key: value}` settings (no project prefix); raise one error naming all."""
    try:
        config = StackConfig.model_validate(dict(values))
    except ValidationError as exc:
        problems = [_describe(error) for error in exc.errors()]
        raise StackConfigError(problems) from None
    problems = _cross_field_problems(config)
    if problems:
        raise StackConfigError(problems)
    return config


def _summary(problems: list[str]) -> str:
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} problems in the stack configuration"


def project_settings(config_map: Mapping[str, Any]) -> dict[str, Any]:
    """Pick this project's keys out of a Pulumi config map (`taugrid:key` -> `key`).

    Keys of other namespaces (`azure-native:location`, `kubernetes:context`) belong to
    providers and are left alone.
    """
    prefix = PROJECT + ":"
    return {
        key[len(prefix) :]: value for key, value in config_map.items() if key.startswith(prefix)
    }


def settings_from_stack_file(document: Mapping[str, Any]) -> dict[str, Any]:
    """The project settings of a parsed `Pulumi.<stack>.yaml` document."""
    return project_settings(document.get("config") or {})


def to_stack_settings(config: StackConfig) -> dict[str, Any]:
    """What a stack file holds: settings given explicitly or differing from the defaults.

    Unset (null) values are left out: Pulumi config has no null, and null is every nullable
    setting's default anyway.
    """
    defaults = StackConfig.model_construct()
    explicit: dict[str, Any] = {}
    for name in StackConfig.model_fields:
        value = getattr(config, name)
        if value is None:
            continue
        if name in config.model_fields_set or value != getattr(defaults, name):
            explicit[name] = value.model_dump() if isinstance(value, BaseModel) else value
    return explicit
