"""A command group that also takes one optional positional, like `tau run [TARGET]`.

Click groups normally treat the first positional as a subcommand name, and a group argument
would swallow it. `TargetGroup` dispatches to a subcommand only when the first token names
one; otherwise every token (TARGET and flags, in any order) belongs to the group itself.
"""

from __future__ import annotations

import click
from typer.core import TyperGroup


class TargetGroup(TyperGroup):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] in self.commands:
            click.Command.parse_args(self, ctx, [])
            ctx._protected_args = args[:1]
            ctx.args = args[1:]
            return ctx.args
        if any(arg in ctx.help_option_names for arg in args):
            return super().parse_args(ctx, args)
        ctx.allow_interspersed_args = True
        click.Command.parse_args(self, ctx, args)
        ctx._protected_args = []
        ctx.args = []
        return []
