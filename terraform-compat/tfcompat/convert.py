"""`terraform.tfvars` -> `stacks/Pulumi.<stack>.yaml`, validated by the stack config model.

The tfvars variables are the stack settings under the same names, so conversion is parsing HCL,
validating with the very model `pulumi up` uses (same messages as the Terraform root), and
writing only what differs from the defaults or was given explicitly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import hcl2
import yaml
from hcl2 import SerializationOptions

from infra.config import PROJECT, StackConfig, parse_stack_config, to_stack_settings
from tau import atomicfile
from tau.errors import UsageError, ValidationError

# Variables older Terraform revisions declared and later removed, with what replaced them.
RETIRED_VARIABLES = {
    "enable_portal": "Portal is always installed; the variable was removed upstream",
}
HEADER = (
    "# Converted from {source} by terraform-compat; variables keep their Terraform names.\n"
    "# Review before the first `pulumi preview --stack {stack}`.\n"
)


def read_tfvars(text: str, source: str = "terraform.tfvars") -> dict[str, Any]:
    """Parse tfvars HCL into plain values (strings unquoted, no comments)."""
    options = SerializationOptions(
        with_comments=False,
        strip_string_quotes=True,
        preserve_heredocs=False,
        explicit_blocks=False,
    )
    try:
        parsed = hcl2.loads(text, serialization_options=options)
    except Exception as exc:  # the HCL parser raises lark errors of many kinds
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValidationError(f"{source}: not valid HCL: {first_line}", owner="platform") from None
    variables = {key: value for key, value in parsed.items() if not key.startswith("__")}
    expressions = sorted(key for key, value in variables.items() if _has_expression(value))
    if expressions:
        raise ValidationError(
            f"{source}: {', '.join(expressions)}: tfvars values must be literals, not expressions",
            owner="platform",
        )
    return variables


def _has_expression(value: Any) -> bool:
    if isinstance(value, str):
        return "${" in value
    if isinstance(value, dict):
        return any(_has_expression(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_expression(item) for item in value)
    return False


def convert(variables: dict[str, Any]) -> tuple[StackConfig, list[str]]:
    """Validate tfvars variables as stack settings; return the config and notes for the user."""
    notes = []
    settings = dict(variables)
    for name, reason in RETIRED_VARIABLES.items():
        if name in settings:
            settings.pop(name)
            notes.append(f"dropped {name}: {reason}")
    return parse_stack_config(settings), notes


def stack_document(config: StackConfig) -> dict[str, Any]:
    return {
        "config": {f"{PROJECT}:{key}": value for key, value in to_stack_settings(config).items()}
    }


def write_stack_file(
    config: StackConfig, stack: str, stacks_dir: Path, source: str, *, force: bool = False
) -> Path:
    target = stacks_dir / f"Pulumi.{stack}.yaml"
    if target.exists() and not force:
        raise UsageError(f"{target} exists", hint="pass --force to overwrite it", owner="platform")
    text = HEADER.format(source=source, stack=stack) + yaml.safe_dump(
        stack_document(config), sort_keys=False, default_flow_style=False
    )
    stacks_dir.mkdir(parents=True, exist_ok=True)
    atomicfile.write_text(target, text)
    return target
