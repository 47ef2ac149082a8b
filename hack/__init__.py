"""Developer tooling for TauGrid (not part of the installed distribution)."""
