"""Monorepo checkouts for the run-target tests."""

from tests.unit.repos import make_repo, monorepo, tau_config_dir, write_descriptor

__all__ = ["make_repo", "monorepo", "tau_config_dir", "write_descriptor"]
