"""`tau data`: the dataset and model registries on the workspace's data PVC.

Registry logic is a set of pure functions over a data root (`tau.data.root`); the CLI picks
the root: the workspace PVC through short-lived helper pods (`tau.data.podroot`), or a
local directory (`--registry file://DIR`). Serving resolves `--from-model` with
`tau.data.models.resolve_model_ref`.
"""
