"""Boolean flags take the docs' `--flag=false` spelling as well as `--no-flag`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tau.cli.boolflags import accept_bool_values

seen: dict[str, object] = {}


@click.group()
def root() -> None:
    pass


@root.command()
@click.option("--wait/--no-wait", default=True)
@click.option("--dry-run", is_flag=True)
@click.option("--always", is_flag=True, default=True)
@click.option("--name", default="")
def uninstall(wait: bool, dry_run: bool, always: bool, name: str) -> None:
    seen.update(wait=wait, dry_run=dry_run, always=always, name=name)


accept_bool_values(root)


def invoke(*args: str) -> click.testing.Result:
    seen.clear()
    return CliRunner().invoke(root, ["uninstall", *args])


@pytest.mark.parametrize(
    ("args", "wait", "dry_run"),
    [
        (["--wait=false"], False, False),
        (["--wait=FALSE"], False, False),
        (["--no-wait"], False, False),
        (["--wait=true", "--dry-run=true"], True, True),
        (["--dry-run=false"], True, False),
        (["--no-wait=false"], True, False),
    ],
)
def test_true_and_false_values_become_the_flag_s_own_spelling(args, wait, dry_run) -> None:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert (seen["wait"], seen["dry_run"]) == (wait, dry_run)


def test_other_values_are_still_refused_by_click() -> None:
    result = invoke("--wait=maybe")
    assert result.exit_code == 2
    assert "does not take a value" in result.output


def test_an_on_by_default_flag_without_an_off_spelling_is_not_silently_kept_on() -> None:
    assert invoke("--always=false").exit_code == 2


def test_values_of_string_options_and_words_after_double_dash_are_untouched() -> None:
    assert invoke("--name=false").exit_code == 0 and seen["name"] == "false"
    assert invoke("--", "--wait=false").exit_code == 2


def test_every_tau_root_takes_the_spelling(tmp_path) -> None:
    tau = str(Path(sys.executable).parent / "tau")
    base = [tau, "cluster", "uninstall", "--yes", "--context", "nowhere"]
    env = {**os.environ, "HOME": str(tmp_path), "TAU_CONFIG_DIR": str(tmp_path)}
    refused = subprocess.run(
        [*base, "--drain-queue=maybe"], capture_output=True, text=True, env=env, check=False
    )
    assert "does not take a value" in refused.stderr
    taken = subprocess.run(
        [*base, "--drain-queue=false", "--wait=false"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert "does not take a value" not in taken.stderr
    assert "queue drain" not in taken.stderr  # --drain-queue=false: no drain attempted
    assert taken.stderr.splitlines()[-1].startswith("error: ")
