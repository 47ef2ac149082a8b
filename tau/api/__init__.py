"""Typed models of TauGrid's Kubernetes API and client-side contracts.

The pydantic models are the single definition: CRD YAML (`python -m tau.api.crds`), offline
validation and the controller's parsing all derive from them.
"""
