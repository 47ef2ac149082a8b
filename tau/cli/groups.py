"""A command group that also takes one optional positional, like `tau run [TARGET]`.

Click groups normally treat the first positional as a subcommand name, and a group argument
would swallow it. `TargetGroup` dispatches to a subcommand only when the first token names
one; otherwise every token (TARGET and flags, in any order) belongs to the group itself, and a
second positional is a usage error rather than silently ignored.
"""

from __future__ import annotations

import click
from typer.core import TyperGroup

from tau.errors import UsageError


class TargetGroup(TyperGroup):
    def verbs(self) -> tuple[str, ...]:
        """Names that dispatch to a subcommand (a subclass may know some before loading them)."""
        return tuple(self.commands)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] in self.verbs():
            click.Command.parse_args(self, ctx, [])
            ctx._protected_args = args[:1]
            ctx.args = args[1:]
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
