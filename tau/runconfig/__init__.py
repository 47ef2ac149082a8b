"""The run config contract: strict models of `tau.yaml`, loading with line-aware errors.

Public API (see docs/run-config.md):

- `discover(cwd, target=None, config=None) -> Path`: which file `tau run` means.
- `load(path) -> LoadedConfig`: the validated config, warnings and field positions; raises
  `ConfigError` (a `tau.errors.ValidationError`) listing every problem.
- `config_hash(config) -> str`: SHA-256 of the canonical JSON of a validated config.
"""

from tau.runconfig.discovery import discover
from tau.runconfig.issues import ConfigError, ConfigIssue
from tau.runconfig.loader import LoadedConfig, config_hash, load, loads
from tau.runconfig.managed import ManagedManifest
from tau.runconfig.models import RunConfig

__all__ = [
    "ConfigError",
    "ConfigIssue",
    "LoadedConfig",
    "ManagedManifest",
    "RunConfig",
    "config_hash",
    "discover",
    "load",
    "loads",
]
