"""The watch cache reads like the API server: label selectors, missing objects, missing types."""

from __future__ import annotations

import pytest

from tau.kube import KubeClient, NotFoundError
from tau.kube.informer import MISSING, SYNCED, ObjectCache, matches
from tau.kube.resources import JOBS


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
