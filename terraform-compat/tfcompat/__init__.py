"""Bring an upstream-style Terraform environment (`terraform.tfvars`, state) to Pulumi stacks."""
