"""Fuzz: `tau workspace connection --offline` on mutated workspace connection descriptors.

A descriptor holding anything credential-shaped (in a value, a key, a comment, or a value
reassembled by a YAML escape) must be refused without echoing it; every other input ends in
exit 0 or 2 with one error line, in bounded time and memory, writing nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.contract import TIMEOUT, budget, check, snapshot, tau
from tests.fuzz.hostile import HOSTILE_STRINGS, TOKENS, mutated_text
from tests.unit.descriptors import descriptor_text

FIELDS = [
    "schema",
    "workspace",
    "cluster.contextName",
    "cluster.systemNamespace",
    "access.method",
    "access.aks.resourceId",
    "access.aks.tenantId",
    "authorization.mode",
    "authorization.requiredRole",
    "requirements.minTauVersion",
    "network.privateCluster",
    "network.instructions",
]


@st.composite
def planted(draw: st.DrawFn) -> tuple[str, str]:
    """A YAML line carrying a credential, and the credential."""
    token = draw(TOKENS)
    way = draw(st.sampled_from(["value", "comment", "key", "escaped", "split"]))
    if way == "value":
        return f"note: {token}", token
    if way == "comment":
        return f"# {draw(st.sampled_from(['token', 'password', 'notes']))}: {token}", token
    if way == "key":
        return f"extra: {{token: {draw(st.text('abc', min_size=1, max_size=5))}}}", "token: "
    if way == "escaped":
        return 'note: "' + "".join(f"\\x{ord(c):02x}" for c in token) + '"', token
    cut = draw(st.integers(1, len(token) - 1))
    return f'note: "{token[:cut]}\\\n  {token[cut:]}"', token


@st.composite
def descriptors(draw: st.DrawFn) -> tuple[bytes, list[str], bool]:
    lines = descriptor_text().splitlines()
    for _ in range(draw(st.integers(0, 3))):
        field = draw(st.sampled_from(FIELDS)).split(".")
        value = draw(HOSTILE_STRINGS)
        text = value.replace("\\", "\\\\").replace('"', '\\"')
        lines.append(
            "".join(f"{part}:\n" + "  " * (i + 1) for i, part in enumerate(field[:-1]))
            + f'{field[-1]}: "{text}"'
        )
    secrets, must_refuse = [], False
    if draw(st.booleans()):
        line, secret = draw(planted())
        lines.insert(draw(st.integers(0, len(lines))), line)
        secrets.append(secret)
        must_refuse = True
    text = "\n".join(lines) + "\n"
    if draw(st.booleans()):
        return text.encode("utf-8", "surrogatepass"), secrets, must_refuse
    mutated, more = draw(mutated_text(text))
    # A mutation may cut the planted credential apart; it must still never be printed.
    return mutated, secrets + more, False


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-descriptor")
    (root / "repo" / "tau").mkdir(parents=True)
    (root / "repo" / ".git").mkdir()
    for name in ("home", "config"):
        (root / name).mkdir()
    return root


@pytest.mark.timeout(TIMEOUT)
@budget(100)
@given(descriptor=descriptors())
def test_hostile_descriptors_keep_the_contract(
    work: Path, descriptor: tuple[bytes, list[str], bool]
) -> None:
    text, secrets, must_refuse = descriptor
    (work / "repo" / "tau" / "workspace.connection.yaml").write_bytes(text)
    before = snapshot(work)
    outcome = tau(
        ["workspace", "connection", "--offline", "-o", "json"],
        work / "repo",
        HOME=str(work / "home"),
        TAU_CONFIG_DIR=str(work / "config"),
    )
    check(
        "descriptor",
        outcome,
        codes=(2,) if must_refuse else (0, 2),
        secrets=tuple(s for s in secrets if s != "token: "),
        outside=work,
        outside_before=before,
        names=("descriptor",),
    )
    if must_refuse:
        assert "credential-shaped content" in outcome.stderr, outcome.stderr
