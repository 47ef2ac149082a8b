"""Run logs: every pod of a batch Job, or a RayJob's driver output from its head pod.

Once KubeRay has deleted the head pod (or the RayJob itself), the driver output is read from
the central log offload when its ADX connection is known (tau/lifecycle/offload.py).

`tau logs NAME` also finds the run for you: the connected workspace first, then every
cached workspace connection on this machine; two matches are ambiguous and the command asks
for `--workspace` or `--context/-n` instead of guessing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from tau import keys
from tau.connection import Target
from tau.errors import RuntimeFailure, TauError, UsageError
from tau.jsontypes import JSONObject
from tau.kube import InvalidError, KubeClient, KubeError, NotFoundError
from tau.kube.resources import CONFIG_MAPS, JOBS, PODS, RAY_JOBS, Resource
from tau.kube.stream import exec_output, pod_log
from tau.lifecycle import objects as o
from tau.lifecycle.offload import (
    LogOffload,
    OffloadRead,
    azure_token,
    connection,
    offloaded_lines,
    published_connection,
)

Sources = list[tuple[str, Callable[[], Iterator[str]]]]


@dataclass(frozen=True)
class LogOptions:
    container: str = ""
    all_containers: bool = False
    previous: bool = False
    timestamps: bool = False
    prefix: bool = False
    tail: int = 200
    follow: bool = False
    offload: LogOffload = field(default_factory=LogOffload)


def _containers(pod: JSONObject, opts: LogOptions) -> list[str]:
    spec = pod.get("spec") or {}
    init = [c["name"] for c in spec.get("initContainers") or []]
    main = [c["name"] for c in spec.get("containers") or []]
    if opts.container:
        if opts.container not in init + main:
            raise UsageError(
                f'container "{opts.container}" is not in pod {o.name(pod)} '
                f"(containers: {', '.join(init + main)})",
                owner="researcher: -c/--container",
            )
        return [opts.container]
    if opts.all_containers:
        return init + main
    default = ((pod.get("metadata") or {}).get("annotations") or {}).get(
        "kubectl.kubernetes.io/default-container"
    )
    return [default or main[0]]


def _get(kube: KubeClient, resource: Resource, name: str, namespace: str) -> JSONObject | None:
    try:
        return kube.get_or_none(resource, name, namespace)
    except NotFoundError:
        return None


def find(kube: KubeClient, namespace: str, name: str) -> tuple[str, JSONObject] | None:
    job = _get(kube, JOBS, name, namespace)
    if job is not None:
        return "Job", job
    rayjob = _get(kube, RAY_JOBS, name, namespace)
    return ("RayJob", rayjob) if rayjob is not None else None


def streams(
    kube: KubeClient,
    namespace: str,
    name: str,
    opts: LogOptions,
    *,
    note: Callable[[str], None],
    token: Callable[[str], Callable[[], str]] = azure_token,
) -> Sources:
    """(prefix, line iterator factory) for every container to read. `note` tells the reader
    (the CLI prints it on stderr) when a source is not the pod's own log: the central log
    offload, or the head container standing in for `ray job logs`. `token` gives the ADX
    bearer tokens for an endpoint when the central log offload is read."""
    found = find(kube, namespace, name)
    if found is None:
        offload = _offload(kube, namespace, opts)
        if offload is not None:
            # A RayJob KubeRay (or its TTL) removed: its head pods were named `<name>-*`.
            return _offload_streams(offload, namespace, f"{name}-", opts, note, token, name)
        raise RuntimeFailure(
            f'no Job or RayJob "{name}" found in namespace "{namespace}"',
            hint=f"list runs with `tau run list -n {namespace} --include-external`; a "
            "removed RayJob's driver output is read from the central log offload with "
            "--kusto-cluster, --kusto-endpoint and --kusto-database",
            owner="researcher: run name or namespace",
        )
    kind, obj = found
    if kind == "RayJob":
        return _ray_streams(kube, namespace, name, obj, opts, note, token)
    pods = sorted(
        kube.list(PODS, namespace, label_selector=f"job-name={name}"), key=lambda p: o.name(p)
    )
    if not pods:
        raise RuntimeFailure(
            f"Job {namespace}/{name} has no pods yet (or they were cleaned up)",
            hint=f"see `tau run status {name} -n {namespace}` for where it is waiting",
            owner="",
        )
    result: list[tuple[str, Callable[[], Iterator[str]]]] = []
    for pod in pods:
        for container in _containers(pod, opts):
            result.append(
                (
                    f"[pod/{o.name(pod)}/{container}] ",
                    _reader(kube, namespace, pod, container, opts),
                )
            )
    return result


def _reader(
    kube: KubeClient, namespace: str, pod: JSONObject, container: str, opts: LogOptions
) -> Callable[[], Iterator[str]]:
    def read() -> Iterator[str]:
        try:
            yield from pod_log(
                kube,
                namespace,
                o.name(pod),
                container=container,
                tail=opts.tail,
                previous=opts.previous,
                timestamps=opts.timestamps,
                follow=opts.follow,
            )
        except InvalidError as error:
            # HTTP 400 from the kubelet: no such instance (e.g. --previous without a restart).
            what = "previous instance of " if opts.previous else ""
            raise RuntimeFailure(
                f"cannot read the {what}container {container} of pod {o.name(pod)}: "
                f"{error.one_line().split('rejected it: ', 1)[-1]}",
                hint="--previous needs a container that restarted or was replaced"
                if opts.previous
                else "",
                owner="",
            ) from None

    return read


def _ray_streams(
    kube: KubeClient,
    namespace: str,
    name: str,
    rayjob: JSONObject,
    opts: LogOptions,
    note: Callable[[str], None],
    token: Callable[[str], Callable[[], str]],
) -> Sources:
    st = o.status(rayjob)
    if not st.get("jobId"):
        raise RuntimeFailure(
            f"RayJob {namespace}/{name} has not reported status.jobId yet",
            hint=f"follow startup with `tau run status {name} --watch -n {namespace}`",
        )
    cluster = st.get("rayClusterName")
    if not cluster:
        raise RuntimeFailure(f"RayJob {namespace}/{name} has no rayClusterName yet")
    heads = kube.list(
        PODS, namespace, label_selector=f"ray.io/cluster={cluster},ray.io/node-type=head"
    )
    if not heads:
        offload = _offload(kube, namespace, opts)
        if offload is not None:
            return _offload_streams(offload, namespace, f"{cluster}-head", opts, note, token, name)
        raise RuntimeFailure(
            f"head pod not found for RayJob {name}",
            hint="KubeRay deletes the RayCluster when the job ends (shutdownAfterJobFinishes); "
            "read the driver output from the central log offload with --kusto-cluster, "
            "--kusto-endpoint and --kusto-database",
        )
    head = heads[0]
    container, driver_log = ray_log_container(head, opts)
    label = f"[pod/{o.name(head)}/{container}] "
    if driver_log or opts.follow or opts.container or opts.previous:
        return [(label, _reader(kube, namespace, head, container, opts))]
    job_id = str(st["jobId"])
    return [(label, _driver_reader(kube, namespace, head, container, job_id, opts, note))]


def _offload(kube: KubeClient, namespace: str, opts: LogOptions) -> LogOffload | None:
    """The complete offload connection (flags over the workspace's published one), or None
    when neither names one. Complete flags need no ConfigMap read."""
    flags = opts.offload
    if flags.cluster and flags.endpoint and flags.database:
        return flags
    try:
        configmap = kube.get_or_none(CONFIG_MAPS, keys.LOG_CONNECTION_CONFIGMAP, namespace)
    except KubeError:
        configmap = None  # unreadable is unpublished: the flags must then say it all
    published = published_connection(configmap, namespace)
    if not flags.given() and not published.given():
        return None
    return connection(flags, published, namespace)


def _offload_streams(
    where: LogOffload,
    namespace: str,
    pod_prefix: str,
    opts: LogOptions,
    note: Callable[[str], None],
    token: Callable[[str], Callable[[], str]],
    name: str,
) -> Sources:
    """The offloaded lines as one source; the row's pod/container label is part of the line
    when asked for (`--prefix`, `--all-containers`), as pods/log sources carry theirs."""
    for flag, value in (("-f/--follow", opts.follow), ("--previous", opts.previous)):
        if value:
            raise UsageError(
                f"{flag} does not apply to the central log offload: the head pod of run "
                f"{name} is gone and its logs are read from ADX",
                hint=f"drop {flag}",
                owner=f"researcher: {flag}",
            )
    container = "" if opts.all_containers else opts.container or keys.DRIVER_LOG_CONTAINER
    read = OffloadRead(namespace, pod_prefix, container, opts.tail, opts.timestamps)
    labelled = opts.prefix or opts.all_containers

    def lines() -> Iterator[str]:
        note(
            f"note: the head pod of {namespace}/{name} is gone; reading the central log offload "
            f"(ADX {where.endpoint} database {where.database}, cluster {where.cluster})"
        )
        for label, line in offloaded_lines(where, read, token(where.endpoint)):
            yield (label if labelled else "") + line

    return [("", lines)]


def ray_log_container(head: JSONObject, opts: LogOptions) -> tuple[str, bool]:
    """The head container to read, and whether its log is the driver's output.

    A head rendered by tau carries the driver-log container (tau/render/driver_log.py), whose
    log is the driver's output: pods/log suffices, `--tail`, `--timestamps` and `-f` apply to
    it as to any container. A head without it (another tool's RayJob) leaves `ray job logs`
    through exec as the way to the driver's output, its Ray container's log otherwise."""
    spec = head.get("spec") or {}
    names = [c.get("name", "") for c in spec.get("containers") or [{}]]
    if opts.container:
        every = [c.get("name", "") for c in spec.get("initContainers") or []] + names
        if opts.container not in every:
            raise UsageError(
                f'container "{opts.container}" is not in head pod {o.name(head)} '
                f"(containers: {', '.join(every)})",
                owner="researcher: -c/--container",
            )
        return opts.container, opts.container == keys.DRIVER_LOG_CONTAINER
    if keys.DRIVER_LOG_CONTAINER in names:
        return keys.DRIVER_LOG_CONTAINER, True
    return names[0], False


def _driver_reader(
    kube: KubeClient,
    namespace: str,
    head: JSONObject,
    container: str,
    job_id: str,
    opts: LogOptions,
    note: Callable[[str], None],
) -> Callable[[], Iterator[str]]:
    """The Ray driver's output (`ray job logs` in the head container); the head container's
    own log when exec is unavailable (no pods/exec permission, or no Ray in the pod)."""
    fallback = _reader(kube, namespace, head, container, opts)

    def read() -> Iterator[str]:
        try:
            text = exec_output(
                kube, namespace, o.name(head), container, ["ray", "job", "logs", job_id]
            )
        except KubeError as error:
            note(
                f"note: ray job logs {job_id} is unavailable ({error.layer}); showing the head "
                f"container's log instead"
            )
            yield from fallback()
            return
        lines = text.splitlines()
        yield from (lines if opts.tail < 0 else lines[-opts.tail :] if opts.tail else [])

    return read


def write_logs(
    sources: list[tuple[str, Callable[[], Iterator[str]]]],
    opts: LogOptions,
    out: Callable[[str], None],
) -> None:
    if opts.tail == 0 and not opts.follow:
        return
    prefix = opts.prefix or (len(sources) > 1 and opts.all_containers)
    if not opts.follow:
        for label, read in sources:
            for line in read():
                out((label if prefix else "") + line)
        return
    lock = threading.Lock()
    errors: list[TauError] = []

    def pump(label: str, read: Callable[[], Iterator[str]]) -> None:
        try:
            for line in read():
                with lock:
                    out((label if prefix else "") + line)
        except TauError as error:
            errors.append(error)

    threads = [threading.Thread(target=pump, args=src, daemon=True) for src in sources]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def discover(name: str, current: Target | None, cached: list[Target]) -> Target:
    """The one target holding run `name`: the connected workspace, then cached connections."""
    if current is not None:
        try:
            if find(current.client(), current.namespace, name) is not None:
                return current
        except KubeError:
            pass
    hits = []
    for target in cached:
        if current is not None and (target.context, target.namespace) == (
            current.context,
            current.namespace,
        ):
            continue
        try:
            if find(target.client(), target.namespace, name) is not None:
                hits.append(target)
        except KubeError:
            continue
    if len(hits) == 1:
        return hits[0]
    if not hits:
        where = f'namespace "{current.namespace}"' if current else "no connected workspace"
        raise RuntimeFailure(
            f'run "{name}" was not found in {where} nor in any cached workspace connection',
            hint="pass --context and -n for a run outside your workspaces",
            owner="researcher: run name or route",
        )
    shown = ", ".join(f"{t.workspace or '-'} ({t.context}/{t.namespace})" for t in hits)
    raise UsageError(
        f'run "{name}" exists in several workspaces: {shown}',
        hint="choose one with --workspace, or with --context and -n",
    )
