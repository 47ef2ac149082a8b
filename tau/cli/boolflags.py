"""`--wait=false` as well as `--no-wait`: the docs write boolean flags both ways.

Click refuses a value on a flag ("does not take a value"). Before a command parses, each
`--flag=true|false` (any case, also 1/0, yes/no) naming one of its boolean flags is rewritten to
the flag's own spelling: `--wait=false` becomes `--no-wait`, `--dry-run=true` becomes
`--dry-run`, and `--dry-run=false` simply drops the flag (its default is off). Anything else is
left for click to judge.
"""

from __future__ import annotations

import types

import click

TRUE = frozenset({"true", "1", "yes", "on"})
FALSE = frozenset({"false", "0", "no", "off"})


def accept_bool_values(command: click.Command) -> click.Command:
    """Teach `command` and every subcommand below it the `--flag=false` spelling."""
    parse = command.parse_args

    def parse_args(self: click.Command, ctx: click.Context, args: list[str]) -> list[str]:
        return parse(ctx, rewrite(self, args))

    command.parse_args = types.MethodType(parse_args, command)  # type: ignore[method-assign]
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            accept_bool_values(sub)
    return command


def rewrite(command: click.Command, args: list[str]) -> list[str]:
    flags = _bool_flags(command)
    out: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            return out + args[index:]
        name, sep, value = arg.partition("=")
        spelling = flags.get(name) if sep else None
        if spelling is None or value.lower() not in TRUE | FALSE:
            out.append(arg)
            continue
        on, off = spelling
        wanted = on if value.lower() in TRUE else off
        if wanted:
            out.append(wanted)
    return out


def _bool_flags(command: click.Command) -> dict[str, tuple[str, str]]:
    """Long flag name -> (its `on` spelling, its `off` spelling or "" to drop it)."""
    flags: dict[str, tuple[str, str]] = {}
    for param in command.params:
        if not isinstance(param, click.Option) or not param.is_flag or param.count:
            continue
        if not param.is_bool_flag:
            continue
        on = next((opt for opt in param.opts if opt.startswith("--")), "")
        off = next((opt for opt in param.secondary_opts if opt.startswith("--")), "")
        if not off and param.default is True:
            continue  # on by default with no off spelling: "=false" cannot be honoured
        for opt in param.opts:
            if opt.startswith("--"):
                flags[opt] = (on, off)
        for opt in param.secondary_opts:
            if opt.startswith("--"):
                flags[opt] = (off, on)
    return flags
