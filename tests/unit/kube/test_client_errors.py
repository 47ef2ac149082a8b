"""Every API-server failure is one typed error naming its layer, never credential bytes."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlsplit

import pytest

from tau.kube import (
    AccessError,
    AuthorizationError,
    ConflictError,
    InvalidError,
    KubeClient,
    NotFoundError,
    UnavailableError,
)
from tau.kube.resources import PODS, TAU_WORKSPACES
from tests.unit.closed_port import closed_port_kubeconfig

WS_PATH = "/apis/tau.azure.com/v1alpha1/namespaces/tau-system/workspaces/research"


def status_body(code: int, reason: str, message: str, name: str = "") -> dict:
    details = {"name": name, "group": "tau.azure.com", "kind": "workspaces"} if name else None
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code}
    body.update(reason=reason, message=message)
    if details:
        body["details"] = details
    return body


def test_get_returns_the_decoded_object_and_sends_the_bearer_token(scripted):
    script, kubeconfig = scripted
    script.answer("GET", WS_PATH, 200, {"kind": "TauWorkspace", "metadata": {"name": "research"}})
    client = KubeClient(kubeconfig, "stand-in")
    obj = client.get(TAU_WORKSPACES, "research", "tau-system")
    assert obj["metadata"]["name"] == "research"
    method, _, headers, _ = script.requests[-1]
    assert method == "GET"
    assert headers["Authorization"] == "Bearer s3cr3t-token-value"


@pytest.mark.parametrize(
    ("status", "reason", "error_type", "layer"),
    [
        (401, "Unauthorized", AccessError, "access"),
        (403, "Forbidden", AuthorizationError, "authorization"),
        (404, "NotFound", NotFoundError, "not found"),
        (409, "AlreadyExists", ConflictError, "conflict"),
        (422, "Invalid", InvalidError, "validation"),
        (503, "ServiceUnavailable", UnavailableError, "apiserver unavailable"),
    ],
)
def test_http_failures_become_typed_errors_naming_the_layer(
    scripted, status, reason, error_type, layer
):
    script, kubeconfig = scripted
    script.answer("GET", WS_PATH, status, status_body(status, reason, "nope", name="research"))
    with pytest.raises(error_type) as caught:
        KubeClient(kubeconfig, "stand-in").get(TAU_WORKSPACES, "research", "tau-system")
    line = caught.value.one_line()
    assert line.startswith(f"{layer}: ")
    assert 'workspaces.tau.azure.com "research"' in line
    assert "\n" not in line
    assert "s3cr3t" not in line
    assert caught.value.owner


def test_a_missing_api_type_is_distinguished_from_a_missing_object(scripted):
    script, kubeconfig = scripted
    client = KubeClient(kubeconfig, "stand-in")
    with pytest.raises(NotFoundError) as caught:
        client.get_or_none(TAU_WORKSPACES, "research", "tau-system")
    assert caught.value.resource_missing
    assert "TauGrid" in caught.value.one_line()

    script.answer("GET", WS_PATH, 404, status_body(404, "NotFound", "x", name="research"))
    assert client.get_or_none(TAU_WORKSPACES, "research", "tau-system") is None


def test_delete_can_ignore_a_missing_object(scripted):
    script, kubeconfig = scripted
    script.answer("DELETE", WS_PATH, 404, status_body(404, "NotFound", "x", name="research"))
    client = KubeClient(kubeconfig, "stand-in")
    assert client.delete(TAU_WORKSPACES, "research", "tau-system", ignore_missing=True) is None
    with pytest.raises(NotFoundError):
        client.delete(TAU_WORKSPACES, "research", "tau-system")


def test_create_dry_run_and_status_patch_use_the_server_side_conventions(scripted):
    script, kubeconfig = scripted
    collection = "/apis/tau.azure.com/v1alpha1/namespaces/tau-system/workspaces"
    script.answer("POST", collection, 201, {"metadata": {"name": "research"}})
    script.answer("PATCH", WS_PATH + "/status", 200, {"status": {"phase": "Ready"}})
    client = KubeClient(kubeconfig, "stand-in")
    obj = {"metadata": {"name": "research", "namespace": "tau-system"}}
    client.create(TAU_WORKSPACES, obj, dry_run=True)
    _, path, _, body = script.requests[-1]
    assert path.endswith("?dryRun=All")
    assert json.loads(body) == obj
    client.patch(
        TAU_WORKSPACES,
        "research",
        {"status": {"phase": "Ready"}},
        "tau-system",
        subresource="status",
    )
    _, path, headers, _ = script.requests[-1]
    assert path == WS_PATH + "/status"
    assert headers["Content-Type"] == "application/merge-patch+json"


def test_can_i_posts_a_self_subject_access_review(scripted):
    script, kubeconfig = scripted
    script.answer(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        201,
        {"status": {"allowed": False, "reason": "no RBAC policy matched"}},
    )
    review = KubeClient(kubeconfig, "stand-in").can_i(
        "create", "rayjobs", group="ray.io", namespace="research"
    )
    assert not review.allowed
    assert review.reason == "no RBAC policy matched"
    sent = json.loads(script.requests[-1][3])
    assert sent["spec"]["resourceAttributes"] == {
        "verb": "create",
        "resource": "rayjobs",
        "group": "ray.io",
        "namespace": "research",
    }


def test_an_unknown_context_is_an_access_error_naming_it(scripted):
    _, kubeconfig = scripted
    with pytest.raises(AccessError) as caught:
        KubeClient(kubeconfig, "no-such-context").list(PODS, "default")
    assert '"no-such-context"' in caught.value.one_line()


def test_a_missing_kubeconfig_file_is_an_access_error(tmp_path):
    with pytest.raises(AccessError) as caught:
        KubeClient(tmp_path / "absent", "x").list(PODS, "default")
    assert "does not exist" in caught.value.one_line()


def test_a_malformed_kubeconfig_is_an_access_error_not_a_crash(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("clusters: [\n")
    with pytest.raises(AccessError) as caught:
        KubeClient(kubeconfig, "x").list(PODS, "default")
    assert caught.value.one_line().startswith("access: cannot load context")
    assert "malformed" in caught.value.one_line()


def test_no_kubeconfig_anywhere_names_where_it_looked(tmp_path, monkeypatch):
    absent = tmp_path / "absent"
    monkeypatch.setenv("KUBECONFIG", str(absent))
    with pytest.raises(AccessError) as caught:
        KubeClient(None, "").list(PODS, "default")
    line = caught.value.one_line()
    assert f"no kubeconfig found ($KUBECONFIG: {absent})" in line
    assert "set KUBECONFIG" in line


def test_missing_kubeconfig_entries_are_skipped_like_kubectl(scripted, tmp_path, monkeypatch):
    script, kubeconfig = scripted
    script.answer("GET", "/api/v1/namespaces/default/pods", 200, {"items": []})
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'absent'}:{kubeconfig}")
    assert KubeClient(None, "stand-in").list(PODS, "default") == []


def test_a_silent_port_is_reported_as_apiserver_unavailable(tmp_path):
    kubeconfig = closed_port_kubeconfig(tmp_path / "kubeconfig", scheme="http")
    with pytest.raises(UnavailableError) as caught:
        KubeClient(kubeconfig, "x", timeout=2).list(PODS, "default")
    assert caught.value.one_line().startswith("apiserver unavailable: ")


def test_watches_stream_events_and_fail_with_the_same_typed_errors(scripted):
    from tau.kube.stream import watch

    script, kubeconfig = scripted
    pods = "/api/v1/namespaces/default/pods"
    script.answer("GET", pods, 200, {"type": "ADDED", "object": {"metadata": {"name": "p"}}})
    events = list(watch(KubeClient(kubeconfig, "stand-in"), PODS, "default", timeout_seconds=1))
    assert events == [{"type": "ADDED", "object": {"metadata": {"name": "p"}}}]
    assert ("watch", "1") in parse_qsl(urlsplit(script.requests[-1][1]).query)

    script.answer("GET", pods, 403, status_body(403, "Forbidden", 'pods is forbidden: "alice"'))
    with pytest.raises(AuthorizationError) as caught:
        next(watch(KubeClient(kubeconfig, "stand-in"), PODS, "default"))
    assert caught.value.one_line().startswith("authorization: cannot watch pods in namespace")


def test_the_api_servers_warning_headers_are_read_as_their_text():
    from tau.kube.client import warning_texts

    podsecurity = (
        '299 - "would violate PodSecurity \\"restricted:latest\\": allowPrivilegeEscalation '
        '!= false (container \\"main\\" must set securityContext.allowPrivilegeEscalation=false)"'
    )
    assert warning_texts([podsecurity, '299 - ""', "not RFC 7234"]) == [
        'would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false '
        '(container "main" must set securityContext.allowPrivilegeEscalation=false)',
        "not RFC 7234",
    ]
