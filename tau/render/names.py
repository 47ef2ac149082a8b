"""Kubernetes name rules that decide whether a rendered object can exist at all.

A Job's name becomes the `batch.kubernetes.io/job-name` pod label (63 chars), an Indexed
torchrun Job also needs `<name>-headless` to fit a DNS label, and KubeRay derives
`<name>-raycluster-xxxxx-head-svc` names from a RayJob, which caps it at 47 characters.
"""

from __future__ import annotations

import re

from tau.render.errors import RenderError

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

LABEL_MAX = 63
HEADLESS_SUFFIX = "-headless"
JOB_NAME_MAX = LABEL_MAX
INDEXED_JOB_NAME_MAX = LABEL_MAX - len(HEADLESS_SUFFIX)
RAYJOB_NAME_MAX = 47


def headless_service_name(job_name: str) -> str:
    return job_name + HEADLESS_SUFFIX


def check_job_name(name: str, *, indexed: bool) -> None:
    """A Job name becomes a pod label value; an indexed one also a hostname and a Service."""
    limit = INDEXED_JOB_NAME_MAX if indexed else JOB_NAME_MAX
    if indexed:
        _check_dns_label(name, "run name")
    elif not name or not DNS1123_SUBDOMAIN.match(name):
        raise RenderError(
            f"run name {name!r} must be a DNS-1123 subdomain (lowercase letters, digits, "
            "'-' and '.')",
            hint="set name in tau.yaml or pass TARGET",
        )
    if len(name) > limit:
        why = (
            f"multi-node torchrun also creates Service {headless_service_name(name)!r}, "
            f"so the run name may have at most {limit} characters"
            if indexed
            else f"a Job name may have at most {limit} characters"
        )
        raise RenderError(f"run name {name!r} is too long ({len(name)} chars); {why}")


def check_rayjob_name(name: str) -> None:
    _check_dns_label(name, "RayJob name")
    if len(name) > RAYJOB_NAME_MAX:
        raise RenderError(
            f"RayJob name {name!r} is too long ({len(name)} chars; KubeRay limit is "
            f"{RAYJOB_NAME_MAX})",
            hint="shorten name in tau.yaml",
        )


def check_namespace(namespace: str) -> None:
    if not DNS1123_LABEL.match(namespace) or len(namespace) > LABEL_MAX:
        raise RenderError(
            f"namespace {namespace!r} is not a valid DNS-1123 label",
            hint="set policy.namespace, -n/--namespace or the workspace target namespace",
        )


def _check_dns_label(name: str, what: str) -> None:
    if not name:
        raise RenderError(f"{what} is empty", hint="set name in tau.yaml or pass TARGET")
    if not DNS1123_LABEL.match(name):
        raise RenderError(
            f"{what} {name!r} must be a DNS-1123 label (lowercase letters, digits and '-', "
            "starting and ending with a letter or digit)"
        )
