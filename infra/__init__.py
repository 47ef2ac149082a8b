"""TauGrid's infrastructure as a Pulumi program: AKS, GPU pools, identities, ADX, the platform.

Each concern is one ComponentResource with typed args; `program.run` composes them from the
typed stack config (`config.StackConfig`). Heavy SDKs are imported by the component modules
only, never by `infra.config`, so terraform-compat and config validation stay fast.
"""
