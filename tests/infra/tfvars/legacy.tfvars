# An older revision's variables: enable_portal was removed upstream (Portal is always on).
subscription_id = "00000000-0000-0000-0000-0000000000dd"
cluster_name    = "taugrid-legacy"
enable_portal   = true
enable_gpu      = false
taugrid_version = "0.3.1"
adx_sku_name     = "Dev(No SLA)_Standard_D11_v2"
adx_sku_capacity = 1
