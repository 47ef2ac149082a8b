"""The one version of the distribution, in a module every layer may import.

It names the tau CLI and wheel, the chart (charts/taugrid Chart.yaml version and appVersion,
and its first-party sub-charts; tests keep them equal), the image tags the chart pulls by
default, `tau cluster install --version` and Pulumi's taugrid_version default. `tau.__version__`
re-exports it; code inside tau imports it from here, because `tau/__init__.py` is the SDK's
face and sits at the top of the package order.
"""

__version__ = "0.3.2"
