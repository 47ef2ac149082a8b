# terraform.tfvars.example copied without replacing its placeholders.
subscription_id     = "<azure-subscription-id>"
location            = "swedencentral"
resource_group_name = "<resource-group-name>"
cluster_name        = "<cluster-name>"
enable_adx          = true
adx_cluster_name    = "<globally-unique-adx-cluster-name>"
