"""The minimal valid workspace connection descriptor the unit suites start from."""

from __future__ import annotations

_TEMPLATE = """\
schema: tau.workspace.connection.v1
workspace: {workspace}
cluster:
  contextName: {context}
access:
  method: kubeconfig
authorization:
  mode: workspace-rbac
  requiredRole: tau-researcher-v1
requirements:
  minTauVersion: 0.1.0
"""


def descriptor_text(workspace: str = "research", context: str = "lab") -> str:
    """A kubeconfig-access, workspace-rbac descriptor (min Tau 0.1.0) as checked in."""
    return _TEMPLATE.format(workspace=workspace, context=context)
