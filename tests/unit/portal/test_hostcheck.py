"""DNS rebinding protection: the server answers only to Host names that mean this server."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tau.portal.hostcheck import HostCheckMiddleware, HostPolicy, host_name


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("127.0.0.1:8080", "127.0.0.1"),
        ("[::1]:8080", "::1"),
        ("LOCALHOST:80", "localhost"),
        ("portal.lan.", "portal.lan"),
        ("::1", "::1"),
    ],
)
def test_host_name_strips_port_brackets_and_case(header: str, name: str) -> None:
    assert host_name(header) == name


def test_ip_literals_and_localhost_are_always_allowed_other_names_only_when_listed() -> None:
    policy = HostPolicy.for_names(["Portal.LAN"])
    for header in ("127.0.0.1:8080", "10.1.2.3", "[::1]:9", "localhost:8080", "app.localhost"):
        assert policy.allows(header), header
    assert policy.allows("portal.lan:8080")
    for header in ("attacker.example", "attacker.example:8080", "127.0.0.1.nip.io", "", None):
        assert not policy.allows(header), header


def _app(policy: HostPolicy | None = None) -> FastAPI:
    app = FastAPI()

    @app.get("/secret")
    def secret() -> dict[str, str]:
        return {"runs": "everything"}

    app.add_middleware(HostCheckMiddleware, policy=policy)
    return app


def test_a_rebinding_host_gets_421_with_a_json_reason_and_never_reaches_the_route() -> None:
    client = TestClient(_app(), base_url="http://attacker.example:8080")
    response = client.get("/secret")
    assert response.status_code == 421
    assert "everything" not in response.text
    reason = response.json()["reason"]
    assert "'attacker.example:8080'" in reason and "--allow-host" in reason
    assert "owner: the operator running the server" in reason


def test_a_hostile_host_header_is_truncated_and_escaped_in_the_reason() -> None:
    client = TestClient(_app(), base_url="http://127.0.0.1")
    response = client.get("/secret", headers={"host": "x\x1b[31m" + "a" * 5000})
    assert response.status_code == 421
    reason = response.json()["reason"]
    assert "\x1b" not in reason and len(reason) < 400


def test_a_listed_name_is_served() -> None:
    client = TestClient(_app(HostPolicy.for_names(["portal.lan"])), base_url="http://portal.lan")
    assert client.get("/secret").json() == {"runs": "everything"}
