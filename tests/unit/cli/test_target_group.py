"""`tau run [TARGET]` style groups: a positional on the group that never eats a subcommand."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from tau.cli.groups import TargetGroup
from tau.errors import UsageError

app = typer.Typer(cls=TargetGroup)
seen: dict[str, object] = {}


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    target: str = typer.Argument(None),
    dry_run: str = typer.Option("", "--dry-run"),
) -> None:
    if ctx.invoked_subcommand is None:
        seen["root"] = (target, dry_run)


@app.command()
def validate(name: str = typer.Argument(None)) -> None:
    seen["validate"] = name


@app.command()
def other() -> None:
    seen["other"] = True


runner = CliRunner()


def invoke(*args: str) -> dict[str, object]:
    seen.clear()
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return dict(seen)


def test_first_token_naming_a_subcommand_dispatches_to_it() -> None:
    assert invoke("validate", "train") == {"validate": "train"}


def test_any_other_first_token_is_the_target() -> None:
    assert invoke("train") == {"root": ("train", "")}


def test_flags_may_follow_or_precede_the_target() -> None:
    assert invoke("train", "--dry-run=client") == {"root": ("train", "client")}
    assert invoke("--dry-run", "server", "train") == {"root": ("train", "server")}


def test_no_target_runs_the_root_with_defaults() -> None:
    assert invoke("--dry-run=client") == {"root": (None, "client")}


def test_help_lists_subcommands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "validate" in result.output and "other" in result.output


def test_words_after_the_target_are_a_usage_error_not_dropped() -> None:
    seen.clear()
    result = runner.invoke(app, ["train", "bogus", "extra"])
    assert result.exit_code != 0
    assert isinstance(result.exception, UsageError)
    assert "bogus extra" in result.exception.one_line()
    assert "root" not in seen


def test_a_verb_after_the_target_says_to_put_the_verb_first() -> None:
    result = runner.invoke(app, ["train", "validate"])
    assert isinstance(result.exception, UsageError)
    assert "validate train" in result.exception.one_line()
