"""From a working directory to everything a command resolves against.

Discovery (Git worktree boundary, monorepo catalog, workspace connection descriptor or local
assignment), local state under the Tau config dir, isolated kubeconfigs, and the layered
resolution of run settings with provenance.
"""
