"""The container wrapper: what runs around the researcher's command in a cluster pod.

It exists for three contracts that only the pod itself can keep:

- **profiling** (innermost stage, `profiled`): the process whose rank is `profiler.rank`
  (or every process for `all`) runs under nsys/ncu, writing `rank-<rank>.<ext>` under
  `TAU_PROFILE_OUT_DIR`; any other rank runs the command unchanged. nsys ends the workload
  when its capture window closes, which is a completed capture (exit 0), not a failure;

- **metrics offload handshake**: wait (bounded) for the sidecar's ready file, run the
  workload, write the completion file (state, reason) when it exits or is terminated, then
  wait (bounded) for the sidecar's done file, so the terminal `tau/run_status` point is
  durable before the pod ends;
- **staged publishing**: only after the workload exits 0, copy every top-level regular file
  of `TAU_OUTPUT_STAGING_DIR` into `<TAU_OUTPUT_DIR>/.tau-artifacts/<publication>/`
  (sha256 before and after the copy, no clobber, identical re-publish accepted), then write
  `.tau-artifacts-complete` last. A failed attempt publishes nothing.

It is POSIX sh using only cp, ln, mv, mkdir, rm, sha256sum and sleep, because it runs in the
researcher's image (and as a Ray job entrypoint, which Ray starts with /bin/sh). Stages wrap
in the reference order: profiler, then staged publication, then the metrics offload
handshake (outermost), so publication sees the profiled command's final exit code.
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
# nsys stops the workload with SIGTERM when profiler.duration ends.
EXIT_SIGTERM = 143
EXIT_TOOL_MISSING = 127
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


def _first_set(names: tuple[str, ...], fallback: str) -> str:
    expression = fallback
    for name in reversed(names):
        expression = f"${{{name}:-{expression}}}"
    return expression


_PROFILE_VARS = {
    "@MODE@": keys.ENV_PROFILE_MODE,
    "@TOOL@": keys.ENV_PROFILE_TOOL,
    "@RANK@": keys.ENV_PROFILE_RANK,
    "@OUT_DIR@": keys.ENV_PROFILE_OUT_DIR,
    "@EXT@": keys.ENV_PROFILE_EXT,
    "@WARMUP@": keys.ENV_PROFILE_WARMUP_SEC,
    "@ACTIVE@": keys.ENV_PROFILE_ACTIVE_SEC,
}

_PROFILE = r"""tau_rank=@RANK_EXPR@
if [ "$@RANK@" != all ] && [ "$tau_rank" != "$@RANK@" ]; then
  echo "tau profiler: rank $tau_rank runs without $@TOOL@ (profiler.rank is $@RANK@)" >&2
  exec "$@"
fi
case $tau_rank in
  ''|*[!0-9]*)
    echo "tau profiler: rank '$tau_rank' is not a number; running without $@TOOL@" >&2
    exec "$@";;
esac
if ! command -v "$@TOOL@" >/dev/null 2>&1; then
  echo "tau profiler: profiler.mode $@MODE@ needs $@TOOL@ on PATH in the workload image;" \
    "install it there or remove profiler" >&2
  exit @EXIT_TOOL_MISSING@
fi
mkdir -p "$@OUT_DIR@" || exit 1
tau_base=$@OUT_DIR@/rank-$tau_rank
tau_report=$tau_base.$@EXT@
if [ "$@MODE@" = ncu ]; then
  set -- ncu --target-processes all -f -o "$tau_base" "$@"
else
  [ "$@ACTIVE@" = 0 ] || set -- "--duration=$@ACTIVE@" "$@"
  [ "$@WARMUP@" = 0 ] || set -- "--delay=$@WARMUP@" "$@"
  set -- nsys profile --force-overwrite=true "--output=$tau_base" "$@"
fi
echo "tau profiler: rank $tau_rank runs under $@TOOL@; report $tau_report" >&2
trap 'tau_terminated=1; kill -TERM "$tau_child" 2>/dev/null' TERM INT
"$@" &
tau_child=$!
wait "$tau_child"; tau_status=$?
while kill -0 "$tau_child" 2>/dev/null; do wait "$tau_child"; tau_status=$?; done
if [ "$@MODE@" = nsys ] && [ "$@ACTIVE@" != 0 ] && [ "$tau_status" -eq @EXIT_SIGTERM@ ] &&
  [ -z "${tau_terminated:-}" ] && [ -f "$tau_report" ]; then
  echo "tau profiler: the ${@ACTIVE@}s capture (profiler.duration) is complete;" \
    "nsys stopped the workload" >&2
  tau_status=0
fi
[ -f "$tau_report" ] || echo "tau profiler: $@TOOL@ wrote no report at $tau_report" >&2
exit "$tau_status"
"""


def _profile_script() -> str:
    text = _PROFILE
    for placeholder, name in _PROFILE_VARS.items():
        text = text.replace(placeholder, name)
    return (
        text.replace("@RANK_EXPR@", _first_set(keys.RANK_ENV, "0"))
        .replace("@EXIT_TOOL_MISSING@", str(EXIT_TOOL_MISSING))
        .replace("@EXIT_SIGTERM@", str(EXIT_SIGTERM))
    )


PROFILE_SCRIPT = _profile_script()


def profiled(intent: RunIntent, command: list[str]) -> list[str]:
    """`command` as the profiler stage runs it (`sh -c SCRIPT tau-profiler <command...>`);
    unchanged without `profiler`. The stage reads the `TAU_PROFILE_*` env of the pod."""
    if intent.profiler is None:
        return command
    return ["/bin/sh", "-c", PROFILE_SCRIPT, "tau-profiler", *command]


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
