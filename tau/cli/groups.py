"""A command group that also takes one optional positional, like `tau run [TARGET]`.

Click groups normally treat the first positional as a subcommand name, and a group argument
would swallow it. `TargetGroup` dispatches to a subcommand only when the first token names
one; otherwise every token (TARGET and flags, in any order) belongs to the group itself, and a
second positional is a usage error rather than silently ignored.
"""

from __future__ import annotations

import click
from click.core import ParameterSource
from typer.core import TyperGroup

from tau.errors import UsageError


class TargetGroup(TyperGroup):
    # The group's own parameters a verb inherits when they are given before it; any other
    # group flag before a verb would be dropped, so it is refused.
    persistent: tuple[str, ...] = ()

    def verbs(self) -> tuple[str, ...]:
        """Names that dispatch to a subcommand (a subclass may know some before loading them)."""
        return tuple(self.commands)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        at = _first_positional(ctx, self, args)
        if at is not None and args[at] in self.verbs():
            click.Command.parse_args(self, ctx, args[:at])
            _refuse_dropped_flags(ctx, self, args[at])
            ctx._protected_args = args[at : at + 1]
            ctx.args = args[at + 1 :]
            return ctx.args
        if any(arg in ctx.help_option_names for arg in args):
            return super().parse_args(ctx, args)
        ctx.allow_interspersed_args = True
        extra = click.Command.parse_args(self, ctx, args)
        if extra:
            raise _extra_words(ctx, self, extra)
        ctx._protected_args = []
        ctx.args = []
        return []


def _first_positional(ctx: click.Context, group: TargetGroup, args: list[str]) -> int | None:
    """Where the first word that is not one of the group's own options (or their values)
    stands: the group's flags are persistent, so `tau run --project P status NAME` reaches
    `status` with `--project` set, as `tau run status NAME` does."""
    valued: set[str] = set()
    for param in group.get_params(ctx):
        if isinstance(param, click.Option) and not param.is_flag and not param.count:
            valued.update(param.opts)
    at = 0
    while at < len(args):
        word = args[at]
        if word == "--":
            return None
        if word == "-" or not word.startswith("-"):
            return at
        at += 2 if word in valued else 1
    return None


def _refuse_dropped_flags(ctx: click.Context, group: TargetGroup, verb: str) -> None:
    given = [
        param.opts[-1]
        for param in group.get_params(ctx)
        if param.name not in group.persistent
        and ctx.get_parameter_source(param.name or "") is ParameterSource.COMMANDLINE
    ]
    if given:
        carried = " and ".join(f"--{name.replace('_', '-')}" for name in group.persistent)
        kept = f"only {carried} carry over to a verb" if carried else "none carries over to a verb"
        raise UsageError(
            f"{', '.join(given)} before `{verb}` would be ignored ({kept}); put "
            f"{'it' if len(given) == 1 else 'them'} after the verb: "
            f"`{ctx.command_path} {verb} {given[0]} ...`"
        )


def _extra_words(ctx: click.Context, group: TargetGroup, extra: list[str]) -> UsageError:
    """A word after TARGET is never dropped: `tau run train validate` must not submit `train`."""
    words = " ".join(extra)
    verb = next((word for word in extra if word in group.verbs()), "")
    target = ctx.params.get("target") or "TARGET"
    hint = (
        f"write `{ctx.command_path} {verb} {target}`: the verb comes before the target"
        if verb
        else f"{ctx.command_path} takes one TARGET; quote values and put flags before them"
    )
    return UsageError(f"unexpected extra arguments after the target: {words}", hint=hint)
