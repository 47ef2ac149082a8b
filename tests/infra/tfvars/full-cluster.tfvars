# The "full cluster" walkthrough: ADX and lifecycle history in the first apply, plus the
# Entra-backed bootstrap workspace, on the managed GPU experience.
subscription_id     = "00000000-0000-0000-0000-0000000000cc"
resource_group_name = "rg-taugrid-full"
cluster_name        = "taugrid-full"
tenant_id           = null

gpu_stack_mode    = "aks_managed_preview"
normalize_gpu_mig = false

enable_adx                = true
adx_cluster_name          = ""
enable_lifecycle_recorder = true
workspace_namespace       = "taugrid-default"

bootstrap_workspace = {
  name                  = "taugrid-default"
  entra_group_object_id = "33333333-4444-5555-6666-777777777777"
}

tags = {
  scenario = "taugrid-aks"
  owner    = "platform-team"
}
