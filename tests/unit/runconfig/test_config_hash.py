"""The config hash identifies the validated intent (reference §3.2)."""

from __future__ import annotations

import re

from tau.runconfig import config_hash

BASE = "name: t\nengine: job\ncompute: {cpu_request: 500m}\nruntime: {env: {A: '1'}}\n"


def test_hash_is_hex_sha256_and_stable(loads) -> None:
    digest = loads(BASE).config_hash
    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert loads(BASE).config_hash == digest
    assert config_hash(loads(BASE).config) == digest


def test_any_field_change_changes_the_hash(loads) -> None:
    base = loads(BASE).config_hash
    assert loads(BASE.replace("500m", "1")).config_hash != base
    assert loads(BASE.replace("A: '1'", "A: '2'")).config_hash != base
    assert loads(BASE + "storage: {data_pvc: d}\n").config_hash != base


def test_formatting_key_order_and_alias_spelling_do_not(loads) -> None:
    base = loads(BASE).config_hash
    reordered = (
        "runtime:\n  env:\n    A: '1'\ncompute:\n  cpu_request: 500m\nengine: JOB\nname: t\n"
    )
    assert loads(reordered).config_hash == base
    assert loads("engine: ray\n").config_hash == loads("engine: rayjob\n").config_hash


def test_script_content_is_not_part_of_the_hash(write) -> None:
    from tau.runconfig import load

    config = write("name: t\nentrypoint: train.py\n")
    script = config.parent / "train.py"
    script.write_text("print(1)\n")
    before = load(config).config_hash
    script.write_text("print(2)\n")
    assert load(config).config_hash == before
