"""How a batch Job's main container starts the researcher's entrypoint.

The entrypoint travels base64-encoded in `TAU_SCRIPT_B64` and is decoded at start, so a run
needs neither a ConfigMap nor an image rebuild; with `run.source` it is already on disk
under /tau/source. `execution.configs` become `--key=value` flags in sorted order.
"""

from __future__ import annotations

import base64
import shlex

from tau import keys
from tau.render.errors import RenderError
from tau.render.intent import RunIntent
from tau.render.names import headless_service_name
from tau.render.volumes import PROJECT_MOUNT_PATH, SOURCE_MOUNT_PATH

PY_TARGET = "/tmp/tau-entrypoint.py"
SH_TARGET = "/tmp/run.sh"
C10D_PORT = 29500


def config_flags(configs: tuple[tuple[str, object], ...]) -> str:
    parts = []
    for key, value in sorted(configs, key=lambda item: item[0]):
        if value == "":
            parts.append(f" --{key}")
        else:
            parts.append(f" --{key}={shlex.quote(_scalar(value))}")
    return "".join(parts)


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def torchrun_prefix(intent: RunIntent) -> str:
    nproc = max(intent.processes_per_node, 1)
    if not intent.multi_node:
        return f"python3 -m torch.distributed.run --standalone --nproc_per_node={nproc}"
    service = headless_service_name(intent.name)
    return (
        f"python3 -m torch.distributed.run --nnodes={intent.nodes} "
        f"--node_rank=${keys.ENV_JOB_COMPLETION_INDEX} --rdzv-backend=c10d "
        f"--rdzv-endpoint={intent.name}-0.{service}:{C10D_PORT} --rdzv-id={intent.name} "
        f"--nproc_per_node={nproc}"
    )


def script_env(intent: RunIntent) -> dict[str, str]:
    if intent.script is None or intent.source is not None or intent.project is not None:
        return {}
    encoded = base64.b64encode(intent.script.content).decode()
    return {keys.ENV_SCRIPT_B64: encoded, keys.ENV_SCRIPT_SRC: intent.script.name}


def job_command(intent: RunIntent) -> list[str] | None:
    """The container command, or None to keep the image's ENTRYPOINT/CMD."""
    flags = config_flags(intent.configs)
    torchrun = intent.launcher == "torchrun"
    if intent.source is not None or intent.project is not None:
        if intent.project is not None:
            entry = intent.project.entrypoint
            path = f"{PROJECT_MOUNT_PATH}/{entry}"
        else:
            entry = intent.source_entrypoint or ""
            path = f"{SOURCE_MOUNT_PATH}/{entry}"
        if torchrun:
            return ["bash", "-c", f"exec {torchrun_prefix(intent)} {shlex.quote(path)}{flags}"]
        runner = "python3 " if entry.lower().endswith(".py") else ""
        return ["bash", "-c", f"exec {runner}{shlex.quote(path)}{flags}"]
    if intent.script is None:
        if torchrun:
            raise RenderError(
                "execution.launcher torchrun requires run.entrypoint (a .py file)",
                hint="set entrypoint in tau.yaml",
            )
        if flags:
            raise RenderError(
                "execution.configs needs run.entrypoint: flags are passed to the entrypoint",
                hint="set entrypoint or remove execution.configs",
            )
        return None
    name = intent.script.name
    decode = f'echo "${keys.ENV_SCRIPT_B64}" | base64 -d > '
    is_python = name.lower().endswith(".py")
    if torchrun:
        if not is_python:
            raise RenderError(
                f"run.entrypoint {name!r} must be a .py file with execution.launcher: torchrun, "
                "which runs it under python3"
            )
        run = f"{decode}{PY_TARGET} && exec {torchrun_prefix(intent)} {PY_TARGET}{flags}"
        return ["bash", "-c", run]
    shebang = _shebang(intent.script.content)
    if not is_python and intent.launcher == "python" and intent.launcher_explicit:
        if shebang and "python" not in shebang:
            raise RenderError(
                f"run.entrypoint {name!r} has shebang {shebang!r} but execution.launcher is python",
                hint="remove execution.launcher or use a Python entrypoint",
            )
        is_python = True
    if is_python:
        return ["bash", "-c", f"{decode}{PY_TARGET} && exec python3 {PY_TARGET}{flags}"]
    if shebang is None:
        raise RenderError(
            f"run.entrypoint {name!r} has no shebang and is not a .py file",
            hint="add a shebang or set execution.launcher: python",
        )
    if not shebang:
        raise RenderError(f"run.entrypoint {name!r} has an empty shebang line")
    run = f"{decode}{SH_TARGET} && chmod +x {SH_TARGET} && exec {SH_TARGET}{flags}"
    return ["bash", "-c", run]


def _shebang(content: bytes) -> str | None:
    if not content.startswith(b"#!"):
        return None
    return content.split(b"\n", 1)[0][2:].decode(errors="replace").strip()
