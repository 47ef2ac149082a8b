"""The Ray driver's output as a container log of the head pod.

KubeRay (HTTPMode) runs a RayJob's entrypoint as a Ray job on the head, so the driver's
stdout lives only in Ray's job logs: readable through the dashboard or `ray job logs` in the
head (pods/exec), neither of which a researcher's role grants, and not in any container log
that a cluster's log collector ships. The entrypoint therefore tees its own output into a
file on an emptyDir shared with the `driver-log` container, which prints that file from its
first line as it grows. `tau logs` reads that container with pods/log alone, `-f` follows it
live, and the platform's container-log pipeline collects it like any other log.

The sidecar is an ordinary container that keeps running until the pod ends (a container that
exited would make the head pod NotReady, and KubeRay reaches the dashboard through the head's
Service, which routes only to ready pods); it exits on SIGTERM at once, so the head's long
termination grace does not hold a follower open.
"""

from __future__ import annotations

from tau import keys
from tau.jsontypes import JSONObject
from tau.render.volumes import empty_dir

VOLUME = "tau-driver-log"
PATH = "/var/run/tau-driver"
FILE = f"{PATH}/driver.log"
RESOURCES = {
    "requests": {"cpu": "10m", "memory": "16Mi"},
    "limits": {"cpu": "100m", "memory": "32Mi"},
}

# Entrypoint lines (sh, `set -eu` in force): from here on the shell's stdout and stderr go
# through tee, to Ray's job log as before and to FILE. Where the volume is absent (the driver
# placed off the head) the entrypoint runs as it would without it. Python's own buffering
# would hold a driver's lines back until it exits; unbuffered, `tau logs -f` shows them as
# they are printed.
PREAMBLE = f"""if [ -d {PATH} ] && tau_log_pipe={PATH}/.out.$$ && mkfifo "$tau_log_pipe"; then
  tee -a {FILE} < "$tau_log_pipe" &
  exec > "$tau_log_pipe" 2>&1
  rm -f "$tau_log_pipe"
fi
PYTHONUNBUFFERED=1; export PYTHONUNBUFFERED"""

# The sidecar: wait for the file, then print it from its first line as it grows.
_FOLLOW = f"""trap 'exit 0' TERM INT
while [ ! -e {FILE} ]; do sleep 1 & wait $!; done
tail -n +1 -f {FILE} & wait $!
"""


def attach(pod: JSONObject, image: str, pull_policy: str | None = None) -> None:
    """Give a head pod spec (containers[0] runs Ray and the driver) the shared volume and
    the sidecar."""
    head = pod["containers"][0]
    head.setdefault("volumeMounts", []).append({"name": VOLUME, "mountPath": PATH})
    container: JSONObject = {"name": keys.DRIVER_LOG_CONTAINER, "image": image}
    if pull_policy:
        container["imagePullPolicy"] = pull_policy
    container |= {
        "command": ["/bin/sh", "-c", _FOLLOW],
        "resources": {kind: dict(values) for kind, values in RESOURCES.items()},
        "volumeMounts": [{"name": VOLUME, "mountPath": PATH, "readOnly": True}],
    }
    pod["containers"].append(container)
    pod.setdefault("volumes", []).append(empty_dir(VOLUME))
