"""Drive the stack program with the real Pulumi engine through the Automation API.

The program runs inline, in this Python process: the engine (the `pulumi` CLI) talks to the
language host the Automation API serves here, so no `pulumi-language-python` plugin is needed,
and the stack's state lives in a local file backend. The project settings and stack config are
the ones `pulumi up` reads (`Pulumi.yaml`, `stacks/Pulumi.<stack>.yaml` in the work directory),
so both entry points operate on the same stacks.

The stack config is validated here before the engine starts, with the same model and messages
the program uses: a bad key is one usage error, not an engine failure half-way through an
update.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.config import PROJECT, StackConfigError, parse_stack_config, project_settings
from tau.errors import RuntimeFailure, UsageError, ValidationError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PASSPHRASE_ENV = ("PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE")
BACKEND_ENV = "PULUMI_BACKEND_URL"
DEFAULT_BACKEND = "file://~"
"""What `pulumi login --local` selects: state under ~/.pulumi, shared with CLI users."""
OWNER = "platform operator"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class EngineOptions:
    stack: str
    work_dir: Path = PROJECT_ROOT
    backend_url: str = ""
    """Empty: $PULUMI_BACKEND_URL, else the local backend under ~/.pulumi."""
    pulumi_home: Path | None = None
    """None: $PULUMI_HOME or ~/.pulumi (plugins, workspace settings)."""

    def resolved_backend(self) -> str:
        return self.backend_url or os.environ.get(BACKEND_ENV) or DEFAULT_BACKEND


@dataclass(frozen=True)
class Outcome:
    """What one engine operation did: the change counts by kind and the stack outputs."""

    operation: str
    stack: str
    changes: dict[str, int]
    outputs: dict[str, Any] = field(default_factory=dict)
    secret_outputs: frozenset[str] = frozenset()

    @property
    def changed(self) -> int:
        return sum(count for kind, count in self.changes.items() if kind != "same")

    def public_outputs(self) -> dict[str, Any]:
        """Outputs fit to print: secret values are masked, never shown."""
        return {
            name: "[secret]" if name in self.secret_outputs else value
            for name, value in self.outputs.items()
        }


def check_environment(opts: EngineOptions) -> None:
    """Fail before the engine starts on what the operator must provide (usage errors first)."""
    if not (opts.work_dir / "Pulumi.yaml").is_file():
        raise UsageError(
            f"--work-dir {opts.work_dir}: no Pulumi.yaml there",
            hint="point it at the project directory (the repository root)",
            owner=OWNER,
        )
    if opts.resolved_backend().startswith("file://") and not any(
        name in os.environ for name in PASSPHRASE_ENV
    ):
        raise UsageError(
            "PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE) is not set",
            hint="the local backend encrypts the stack's secrets with it; export it "
            "(an empty value is allowed for stacks without secrets)",
            owner=OWNER,
        )
    if shutil.which("pulumi") is None:
        raise RuntimeFailure(
            "the Pulumi CLI (pulumi) is not on PATH",
            hint="install Pulumi, or build it here with hack/setup/60-pulumi.sh",
            owner=OWNER,
        )


def engine_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The stack config as the program receives it: `{key: value}` of this project."""
    return project_settings({key: getattr(value, "value", value) for key, value in config.items()})


def validate(config: Mapping[str, Any], stack: str) -> None:
    try:
        parse_stack_config(engine_config(config))
    except StackConfigError as error:
        raise ValidationError(
            f"stack {stack}: {error.message}", problems=error.problems, owner=OWNER
        ) from None


def _program() -> None:
    # Imported here: the Pulumi SDK and the component modules load only when the engine runs.
    from infra.program import export_stack

    export_stack()


def open_stack(opts: EngineOptions) -> Any:
    """The stack (created on first use) with the inline program and the local backend."""
    from pulumi import automation as auto

    backend = opts.resolved_backend()
    if backend.startswith("file://"):
        # `pulumi login file://DIR` requires DIR to exist; the first run creates it.
        Path(os.path.expanduser(backend[len("file://") :])).mkdir(parents=True, exist_ok=True)
    env = {BACKEND_ENV: backend}
    workspace = auto.LocalWorkspaceOptions(
        work_dir=str(opts.work_dir),
        pulumi_home=str(opts.pulumi_home) if opts.pulumi_home else None,
        env_vars=env,
    )
    try:
        return auto.create_or_select_stack(
            stack_name=opts.stack, project_name=PROJECT, program=_program, opts=workspace
        )
    except auto.CommandError as error:
        raise RuntimeFailure(
            f"pulumi could not open stack {opts.stack}: {_last_error(str(error))}", owner=OWNER
        ) from None


def _last_error(text: str) -> str:
    """The engine's own error line out of a CommandError's captured output."""
    lines = [line.strip().removeprefix("stderr:").strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    for line in reversed(lines):
        if line.startswith("error:"):
            return line[len("error:") :].strip()
    return lines[-1] if lines else "no output"


def documented_outputs(outputs: Mapping[str, Any]) -> dict[str, Any]:
    """Every documented output name, null where the stack has no such thing.

    The engine drops outputs whose value is null, so a dev stack's `adx_endpoint` would vanish
    from its outputs; the documented contract is the names (Terraform's outputs), so they stay.
    """
    from infra.program import OUTPUT_NAMES

    return {**{name: None for name in OUTPUT_NAMES}, **outputs}


def _changes(summary: Any) -> dict[str, int]:
    return {str(kind): int(count) for kind, count in (summary or {}).items()}


def run(operation: str, opts: EngineOptions, progress: Progress) -> Outcome:
    """Run `preview`, `up` or `destroy` on the stack; engine output goes to `progress`."""
    from pulumi import automation as auto

    check_environment(opts)
    stack = open_stack(opts)
    validate(stack.get_all_config(), opts.stack)
    try:
        if operation == "preview":
            preview = stack.preview(on_output=progress, diff=True)
            return Outcome(operation, opts.stack, _changes(preview.change_summary))
        if operation == "up":
            result = stack.up(on_output=progress)
            return Outcome(
                operation,
                opts.stack,
                _changes(result.summary.resource_changes),
                documented_outputs({name: out.value for name, out in result.outputs.items()}),
                frozenset(name for name, out in result.outputs.items() if out.secret),
            )
        if operation == "destroy":
            result = stack.destroy(on_output=progress)
            return Outcome(operation, opts.stack, _changes(result.summary.resource_changes))
    except auto.CommandError as error:
        raise RuntimeFailure(
            f"pulumi {operation} --stack {opts.stack} failed: {_last_error(str(error))}",
            hint="the engine output above names the resource",
            owner=OWNER,
        ) from None
    raise UsageError(f"unknown operation {operation!r}; use preview, up or destroy")
