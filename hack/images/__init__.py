"""Daemonless builds of this project's images (docker/*.Containerfile) and pushes to a registry.

python -m hack.images build [NAME...]
python -m hack.images push --registry 127.0.0.1:5000 [NAME...]
"""

from .build import Builder, BuildError, Built, cache_root, image_names
from .registry import ImageRef, push, serve_registry

__all__ = [
    "BuildError",
    "Builder",
    "Built",
    "ImageRef",
    "cache_root",
    "image_names",
    "push",
    "serve_registry",
]
