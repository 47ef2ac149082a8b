"""The `tau` command line: one module per public root, wired lazily by `main`."""
