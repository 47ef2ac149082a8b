"""The Portal pod can be placed on a tainted pool, like the controller."""

from __future__ import annotations


def test_portal_tolerations_and_node_selector_reach_the_pod(render):
    toleration = {"key": "pool", "operator": "Equal", "value": "ops", "effect": "NoSchedule"}
    objects = render(
        "taugrid-core.portal.nodeSelector.pool=ops",
        'json:taugrid-core.portal.tolerations=[{"key":"pool","operator":"Equal",'
        '"value":"ops","effect":"NoSchedule"}]',
    )
    [portal] = [
        o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "tau-portal"
    ]
    spec = portal["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"pool": "ops"}
    assert spec["tolerations"] == [toleration]
