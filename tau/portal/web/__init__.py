"""`taugrid-portal portal serve`: the cluster Portal (boards over a watch cache, Stellar mounted).

Modules: `config` (scope and sources), `cache` (LIST+WATCH informers read like a KubeClient),
one module per board (`runs`, `detail`, `queue`, `nodes`), `app` (routes, OpenAPI) and
`serving` (the process). FastAPI and uvicorn load only when the Portal starts.
"""
