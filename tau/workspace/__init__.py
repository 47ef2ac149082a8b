"""Operator- and researcher-facing workspace verbs: inspect, create, adopt, quota, init-repo.

The connection itself (discovery, pins, verification) lives in `tau.connection`; these verbs
read workspaces (`inspect`), author TauWorkspace/TauQuotaRequest objects (`authoring`) and
scaffold a connected repository (`scaffold`).
"""
