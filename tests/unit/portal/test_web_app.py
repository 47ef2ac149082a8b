"""The Portal's HTTP surface: routes, the SPA, the shared Stellar link, OpenAPI, Host check."""

from __future__ import annotations

from pathlib import Path

from tau.portal.web.config import OperatorScope, PortalConfig

from .web_helpers import client, portal

NS = "research"


def test_root_redirects_to_the_portal_and_health_is_ok() -> None:
    http = client(portal(PortalConfig(namespaces=(NS,)), []))
    root = http.get("/", follow_redirects=False)
    assert root.status_code == 302 and root.headers["location"] == "/portal"
    assert http.get("/healthz").json() == {"status": "ok"}
    assert http.get("/readyz").json()["ready"] is True


def test_spa_routes_fall_back_to_the_shell_and_missing_files_are_404() -> None:
    http = client(portal(PortalConfig(namespaces=(NS,)), []))
    for path in ("/portal", "/portal/runs", f"/portal/runs/{NS}/x", "/portal/unknown/route"):
        page = http.get(path)
        assert page.status_code == 200 and "TauGrid Portal" in page.text
    assert http.get("/portal/missing.js").status_code == 404
    assert http.get("/portal/assets/portal.js").status_code == 200
    assert http.get("/portal/assets/..%2F..%2Fserver.py").status_code == 404


def test_a_workspace_other_than_the_served_one_is_refused() -> None:
    http = client(portal(PortalConfig(namespaces=(NS,), workspace="team-a"), []))
    assert http.get("/api/portal/runs?workspace=team-a").status_code == 200
    refused = http.get("/api/portal/runs?workspace=team-b")
    assert refused.status_code == 400 and "team-b" in refused.json()["reason"]


def test_the_shared_stellar_link_serves_the_workspace_store(demo_store: Path) -> None:
    config = PortalConfig(namespaces=(NS,), workspace="shared-research", store=demo_store)
    http = client(portal(config, []))
    page = http.get("/stellar?target=demo&project=demo&workspace=shared-research")
    assert page.status_code == 200 and "Stellar" in page.text
    experiments = http.get("/api/portal/experiments").json()["experiments"]
    [demo] = [e for e in experiments if e["experiment_id"] == "demo"]
    assert demo["stellarUrl"] == "/stellar?target=demo&project=demo&workspace=shared-research"
    assert http.get("/stellar?target=demo&workspace=elsewhere").status_code == 400


def test_without_a_store_experiments_and_stellar_answer_503_with_the_reason() -> None:
    http = client(portal(PortalConfig(namespaces=(NS,)), []))
    for path in ("/api/portal/experiments", "/stellar?target=x"):
        response = http.get(path)
        assert response.status_code == 503
        assert "portal.storePath" in response.json()["reason"]


def test_the_openapi_document_lists_every_board() -> None:
    spec = client(portal(PortalConfig(namespaces=(NS,)), [])).get("/openapi.json").json()
    assert {
        "/healthz",
        "/readyz",
        "/api/portal/runs",
        "/api/portal/runs/{namespace}/{name}",
        "/api/portal/runs/{namespace}/{name}/logs",
        "/api/portal/jobs",
        "/api/portal/nodes",
        "/api/portal/experiments",
        "/api/portal/overview",
        "/api/portal/workspaces",
    } <= set(spec["paths"])


def test_a_host_name_that_is_not_allowed_is_refused() -> None:
    config = PortalConfig(namespaces=(NS,), allowed_hosts=("tau-portal.tau-system.svc",))
    made = portal(config, [])
    from fastapi.testclient import TestClient

    from tau.portal.web.app import create_app

    app = create_app(made)
    assert TestClient(app, base_url="http://tau-portal.tau-system.svc").get("/healthz").is_success
    rebound = TestClient(app, base_url="http://attacker.example").get("/api/portal/runs")
    assert rebound.status_code == 421


def test_operator_scopes_parse_and_reject_malformed_text() -> None:
    assert OperatorScope.parse("vision=team-a/gpu-queue") == OperatorScope(
        "vision", "team-a", "gpu-queue"
    )
    import pytest

    from tau.errors import UsageError

    with pytest.raises(UsageError, match="TEAM=NAMESPACE/LOCALQUEUE"):
        OperatorScope.parse("team-a/gpu-queue")
    with pytest.raises(UsageError) as bad_mode:
        PortalConfig(namespaces=(NS,), jobs_scope_mode="everything")
    assert "portal.jobs.scopeMode" in bad_mode.value.one_line()


def test_without_a_workspace_namespace_runs_are_503_and_nodes_still_serve() -> None:
    http = client(portal(PortalConfig(namespaces=()), []))
    response = http.get("/api/portal/runs")
    assert response.status_code == 503
    assert "portal.workloadNamespace" in response.json()["reason"]
    assert http.get("/api/portal/nodes").status_code == 200
    assert http.get("/api/portal/overview").json()["runs"]["total"] == 0
