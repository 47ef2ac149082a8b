# The upstream terraform.tfvars.example, copied and filled in as its header asks.
# terraform.tfvars is intentionally ignored and must not be committed.

subscription_id     = "00000000-0000-0000-0000-0000000000bb"
location            = "swedencentral"
resource_group_name = "rg-taugrid-lab"
cluster_name        = "taugrid-lab"

# Managed Entra and local accounts are enabled by default.
aks_admin_group_object_ids = ["22222222-3333-4444-5555-666666666666"]
azure_rbac_enabled          = false

# Use this interpreter on Linux, WSL, and macOS.
command_interpreter = ["bash", "-c"]

# The defaults below create one billable A100 GPU node.
gpu_vm_size             = "Standard_NC24ads_A100_v4"
gpu_node_count          = 1
gpu_count_per_node      = 1
gpu_monitoring_sku_name = "a100-pcie-1g"
gpu_flavor_name         = "taugrid-a100"
gpu_class               = "a100-80gb"
gpu_series              = "nc24ads-a100-v4"

gpu_stack_mode = "self_managed"

normalize_gpu_mig = true

gpu_auto_scaling_enabled = false
gpu_min_count            = 1
gpu_max_count            = 1

# ADX enables adx-mon, DCGM GPU telemetry, and Portal Kusto data.
enable_adx       = true
adx_cluster_name = "taugridlabadx"

workspace_namespace       = "taugrid-default"
enable_lifecycle_recorder = false
