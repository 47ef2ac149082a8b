"""The container wrapper: what runs around the researcher's command in a cluster pod.

It exists for two contracts that only the pod itself can keep:

- **metrics offload handshake**: wait (bounded) for the sidecar's ready file, run the
  workload, write the completion file (state, reason) when it exits or is terminated, then
  wait (bounded) for the sidecar's done file, so the terminal `tau/run_status` point is
  durable before the pod ends;
- **staged publishing**: only after the workload exits 0, copy every top-level regular file
  of `TAU_OUTPUT_STAGING_DIR` into `<TAU_OUTPUT_DIR>/.tau-artifacts/<publication>/`
  (sha256 before and after the copy, no clobber, identical re-publish accepted), then write
  `.tau-artifacts-complete` last. A failed attempt publishes nothing.

It is POSIX sh using only cp, ln, mv, mkdir, rm, sha256sum and sleep, because it runs in the
researcher's image (and as a Ray job entrypoint, which Ray starts with /bin/sh).
"""

from __future__ import annotations

import shlex

from tau import keys
from tau.render.intent import RunIntent
from tau.render.volumes import METRICS_RUNTIME_PATH

READY_FILE = f"{METRICS_RUNTIME_PATH}/metrics-ready"
DONE_FILE = f"{METRICS_RUNTIME_PATH}/metrics-done"
COMPLETION_FILE = f"{METRICS_RUNTIME_PATH}/metrics-completion.json"
HANDSHAKE_TIMEOUT_SECONDS = 120
# Exit codes the wrapper itself chooses (the workload's own code passes through otherwise).
EXIT_PUBLISH_REFUSED = 126
EXIT_OFFLOADER_NOT_READY = 125
# Publication dir name when no id was allocated (client and server dry-runs).
DRY_RUN_PUBLICATION = "dry-run"

_PUBLISH = r"""tau_sum() { sha256sum < "$1"; }
tau_refuse() { echo "tau: staged output $1" >&2; return 1; }
tau_publish() {
  tau_src=$TAU_OUTPUT_STAGING_DIR
  tau_dst=$TAU_OUTPUT_DIR/.tau-artifacts/$tau_publication
  mkdir -p "$tau_src" "$tau_dst" || return 1
  for tau_f in "$tau_src"/* "$tau_src"/.[!.]* "$tau_src"/..?*; do
    [ -e "$tau_f" ] || [ -L "$tau_f" ] || continue
    tau_n=${tau_f##*/}
    case $tau_n in .tau*) tau_refuse "$tau_n: reserved name"; return 1;; esac
    [ -L "$tau_f" ] && { tau_refuse "$tau_n: symlinks are not published"; return 1; }
    [ -f "$tau_f" ] || { tau_refuse "$tau_n: not a regular file"; return 1; }
  done
  for tau_f in "$tau_src"/* "$tau_src"/.[!.]* "$tau_src"/..?*; do
    [ -f "$tau_f" ] || continue
    tau_n=${tau_f##*/}
    tau_out=$tau_dst/$tau_n
    tau_before=$(tau_sum "$tau_f") || return 1
    if [ -e "$tau_out" ]; then
      [ "$(tau_sum "$tau_out")" = "$tau_before" ] && continue
      tau_refuse "$tau_n: $tau_out exists with different content; not overwritten"; return 1
    fi
    tau_tmp=$tau_dst/.tau-publish-$tau_n.$$
    cp "$tau_f" "$tau_tmp" || { rm -f "$tau_tmp"; return 1; }
    if [ "$(tau_sum "$tau_f")" != "$tau_before" ] || [ "$(tau_sum "$tau_tmp")" != "$tau_before" ]
    then
      rm -f "$tau_tmp"; tau_refuse "$tau_n changed while it was published"; return 1
    fi
    if ! ln "$tau_tmp" "$tau_out" 2>/dev/null; then
      if [ -e "$tau_out" ]; then
        [ "$(tau_sum "$tau_out")" = "$tau_before" ] ||
          { rm -f "$tau_tmp"; tau_refuse "$tau_n: $tau_out appeared with other content"; return 1; }
      else
        mv -n "$tau_tmp" "$tau_out" || { rm -f "$tau_tmp"; return 1; }
      fi
    fi
    rm -f "$tau_tmp"
  done
  printf 'complete %s\n' "$tau_publication" > "$tau_dst/.tau-artifacts-complete.tmp.$$" &&
    mv "$tau_dst/.tau-artifacts-complete.tmp.$$" "$tau_dst/.tau-artifacts-complete"
}
"""


def _wait(path: str) -> str:
    return (
        f'tau_i=0\nwhile [ ! -f "{path}" ] && [ $tau_i -lt {HANDSHAKE_TIMEOUT_SECONDS} ]; do\n'
        "  sleep 1; tau_i=$((tau_i+1))\ndone\n"
    )


_READY = f"${keys.ENV_METRICS_READY_FILE}"
_DONE = f"${keys.ENV_METRICS_DONE_FILE}"
_COMPLETION = f"${keys.ENV_METRICS_COMPLETION_FILE}"

_WAIT_READY = _wait(_READY) + (
    f'if [ ! -f "{_READY}" ]; then\n'
    "  echo 'tau: the metrics-offload sidecar never became ready; not starting the workload' >&2\n"
    "  tau_complete failed metrics-offloader-not-ready 'sidecar not ready'\n"
    f"  exit {EXIT_OFFLOADER_NOT_READY}\n"
    "fi\n"
)

_COMPLETE = (
    "tau_complete() {\n"
    '  printf \'{"state":"%s","reason":"%s","message":"%s"}\\n\' '
    '"$1" "$2" "$3" \\\n'
    f'    > "{_COMPLETION}.tmp.$$" && mv "{_COMPLETION}.tmp.$$" "{_COMPLETION}"\n'
    "}\n"
)

_WAIT_DONE = _wait(_DONE) + (
    f'[ -f "{_DONE}" ] || '
    "echo 'tau: the metrics-offload sidecar did not confirm the final flush' >&2\n"
)

# Runs the workload in the background so SIGTERM can be forwarded to it and recorded.
_RUN = """tau_term() { tau_terminated=1; kill -TERM "$tau_child" 2>/dev/null; }
trap tau_term TERM INT
{command} &
tau_child=$!
while :; do
  wait "$tau_child"; tau_status=$?
  if [ -n "${tau_terminated:-}" ] && kill -0 "$tau_child" 2>/dev/null; then continue; fi
  break
done
"""


def handshake_env(intent: RunIntent) -> dict[str, str]:
    """The main container's side of the offload handshake (the wrapper reads these)."""
    if intent.metrics_offload is None:
        return {}
    return {
        keys.ENV_METRICS_SESSION_ID: intent.metrics_offload.session_id,
        keys.ENV_METRICS_READY_FILE: READY_FILE,
        keys.ENV_METRICS_DONE_FILE: DONE_FILE,
        keys.ENV_METRICS_COMPLETION_FILE: COMPLETION_FILE,
    }


def needed(intent: RunIntent) -> bool:
    return intent.metrics_offload is not None or intent.staged_publish


def publication(intent: RunIntent) -> str:
    return intent.publication_id or DRY_RUN_PUBLICATION


def script(intent: RunIntent, command: str) -> str:
    """The sh script running `command` (already shell text) under both contracts."""
    offload = intent.metrics_offload is not None
    parts = ["set +e\ntau_status=0\n"]
    if intent.staged_publish:
        parts += [f"tau_publication={shlex.quote(publication(intent))}\n", _PUBLISH]
    if offload:
        parts += [_COMPLETE, _WAIT_READY]
    parts.append(_RUN.replace("{command}", command))
    if intent.staged_publish:
        parts.append(
            'if [ "$tau_status" -eq 0 ] && [ -z "${tau_terminated:-}" ]; then\n'
            "  tau_publish || { echo 'tau: staged outputs were not published' >&2; "
            f"tau_status={EXIT_PUBLISH_REFUSED}; tau_refused=1; }}\n"
            "fi\n"
        )
    if offload:
        refused = (
            'elif [ -n "${tau_refused:-}" ]; then '
            "tau_complete failed publish-refused 'staged outputs were not published'\n"
            if intent.staged_publish
            else ""
        )
        parts.append(
            'if [ -n "${tau_terminated:-}" ]; then '
            'tau_complete cancelled workload-termination "exit $tau_status"\n'
            f"{refused}"
            'elif [ "$tau_status" -eq 0 ]; then '
            "tau_complete succeeded workload-entrypoint-exit 'exit 0'\n"
            'else tau_complete failed workload-entrypoint-exit "exit $tau_status"\n'
            "fi\n"
        )
        parts.append(_WAIT_DONE)
    parts.append('exit "$tau_status"\n')
    return "".join(parts)


def wrap_command(intent: RunIntent, command: list[str]) -> list[str]:
    """A container command list wrapped: `sh -c SCRIPT tau-wrapper <command...>`."""
    return ["/bin/sh", "-c", script(intent, '"$@"'), "tau-wrapper", *command]
