"""Operator- and researcher-facing workspace verbs: connect, verify, inspect, create, adopt.

`connect` turns a discovered connection contract into a verified, pinned connection (an
isolated kubeconfig plus the workspace namespace and queue); `tau run` calls
`ensure_connection` to reuse it while the readiness evidence is fresh.
"""
