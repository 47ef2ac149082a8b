"""The watch cache reads like the API server: label selectors, missing objects, missing types."""

from __future__ import annotations

import pytest

from tau.kube import KubeClient, NotFoundError
from tau.kube.informer import MISSING, SYNCED, ObjectCache, matches, request_kind
from tau.kube.resources import JOBS, LOCAL_QUEUES


def test_label_selectors_match_like_the_api_server() -> None:
    labels = {"job-name": "a", "tau.azure.com/job": "a"}
    assert matches(labels, "job-name=a")
    assert matches(labels, "job-name==a,tau.azure.com/job")
    assert not matches(labels, "job-name=b")
    assert not matches(labels, "job-name!=a")
    assert not matches(labels, "!job-name")
    assert matches(labels, "")


def test_the_cache_answers_get_and_list_like_a_client() -> None:
    cache = ObjectCache(KubeClient("/nonexistent/kubeconfig"))
    cache.add(JOBS, ("a",))
    informer = cache.informer(JOBS, "a")
    informer.state = SYNCED
    informer.items = {
        "one": {"metadata": {"name": "one", "labels": {"job-name": "one"}}},
        "two": {"metadata": {"name": "two", "labels": {}}},
    }
    assert cache.get(JOBS, "one", "a")["metadata"]["name"] == "one"
    assert [o["metadata"]["name"] for o in cache.list(JOBS, "a", label_selector="job-name")] == [
        "one"
    ]
    with pytest.raises(NotFoundError) as missing:
        cache.get(JOBS, "three", "a")
    assert not missing.value.resource_missing
    informer.state = MISSING
    with pytest.raises(NotFoundError) as no_type:
        cache.list(JOBS, "a")
    assert no_type.value.resource_missing


def test_an_all_namespaces_informer_answers_for_one_namespace() -> None:
    cache = ObjectCache(KubeClient("/nonexistent/kubeconfig"))
    cache.add(LOCAL_QUEUES)
    informer = cache.informer(LOCAL_QUEUES)
    informer.state = SYNCED
    for namespace in ("a", "b"):
        obj = {"metadata": {"name": "jobqueue", "namespace": namespace}}
        informer.items[informer.key_of(obj)] = obj
    assert cache.get(LOCAL_QUEUES, "jobqueue", "b")["metadata"]["namespace"] == "b"
    assert [o["metadata"]["namespace"] for o in cache.list(LOCAL_QUEUES, "a")] == ["a"]
    assert [o["metadata"]["namespace"] for o in cache.items(LOCAL_QUEUES, "b")] == ["b"]
    assert len(cache.list(LOCAL_QUEUES)) == 2
    with pytest.raises(NotFoundError):
        cache.get(LOCAL_QUEUES, "jobqueue", "c")


def test_requests_are_named_by_kubernetes_verb_and_resource() -> None:
    assert request_kind("GET", "/api/v1/nodes", []) == ("list", "nodes")
    assert request_kind("GET", "/api/v1/nodes", [("watch", "1")]) == ("watch", "nodes")
    assert request_kind("GET", "/api/v1/namespaces/x", None) == ("get", "namespaces")
    assert request_kind("PATCH", "/api/v1/nodes/n1", None) == ("patch", "nodes")
    assert request_kind("PUT", "/apis/tau.azure.com/v1alpha1/clusters/cluster/status", None) == (
        "update",
        "clusters/status",
    )
    assert request_kind("GET", "/apis/kueue.x-k8s.io/v1beta2/namespaces/a/localqueues", None) == (
        "list",
        "localqueues",
    )
    assert request_kind("POST", "/apis/coordination.k8s.io/v1/namespaces/a/leases", None) == (
        "create",
        "leases",
    )
    assert request_kind("GET", "/version", None) == ("get", "/version")
