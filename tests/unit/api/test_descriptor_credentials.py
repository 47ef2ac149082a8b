"""The descriptor credential scan covers comments and every decoded scalar, never echoing one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tau.api.connection import credential_findings, decoded_findings
from tau.connection import parse_descriptor_text
from tau.errors import ValidationError
from tests.unit.descriptors import descriptor_text

JWT_HEAD = "eyJhbGciOiJIUzI1NiJ9"
JWT_BODY = "eyJzdWIiOiIxMjM0NTY3ODkwIn0"
SPLIT_JWT = (
    "network:\n"
    "  privateCluster: true\n"
    f'  instructions: "connect through the VPN, then {JWT_HEAD}.eyJzdW\\\n'
    f'    {JWT_BODY[6:]}.c2lnbmF0dXJlLWJ5dGVz"\n'
)


def refusal(text: str) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        parse_descriptor_text(text, "tau/workspace.connection.yaml")
    return caught.value


@pytest.mark.parametrize(
    "comment",
    [
        "# token: ghp_abcdefghijklmnopqrstuvwxyz0123456789\n",
        "#password: hunter2-but-longer\n",
        "workspace2: x  # client-secret: abc123\n",
        "# api_key: opaque-abc123-value\n",
        "# private_key: opaque-abc123-value\n",
    ],
)
def test_a_credential_in_a_comment_is_refused(comment: str) -> None:
    error = refusal(descriptor_text() + comment)
    assert "credential-shaped content" in error.one_line()
    assert error.problems and error.problems[0].startswith("line 12: key ")
    for secret in ("ghp_abc", "hunter2", "abc123"):
        assert secret not in error.one_line() + " ".join(error.problems)


def test_a_jwt_split_by_a_yaml_line_continuation_is_found_in_the_decoded_scalar() -> None:
    text = descriptor_text() + SPLIT_JWT
    assert credential_findings(text) == []  # no raw line shows it whole
    error = refusal(text)
    assert error.problems == ["line 14: looks like a JSON Web Token"]
    shown = error.one_line() + " ".join(error.problems)
    assert JWT_HEAD not in shown and JWT_BODY not in shown


def test_escaped_characters_cannot_hide_a_token_either() -> None:
    hidden = "ghp_" + "".join(f"\\x{ord(c):02x}" for c in "abcdefghijklmnopqrstuvwxyz0123456789")
    error = refusal(descriptor_text() + f'note: "{hidden}"\n')
    assert error.problems == ["line 12: looks like a GitHub token"]


def test_a_credential_key_in_a_flow_mapping_is_found_by_its_decoded_key() -> None:
    findings = decoded_findings([(3, "token", True), (3, "ordinary", False)])
    assert findings == ["line 3: key 'token' belongs to a kubeconfig or credential"]
    error = refusal(descriptor_text() + "extra: {token: abcdef}\n")
    assert error.problems == ["line 12: key 'token' belongs to a kubeconfig or credential"]


def test_offline_connection_never_prints_the_reassembled_token(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "tau").mkdir()
    (repo / "tau" / "workspace.connection.yaml").write_text(descriptor_text() + SPLIT_JWT)
    result = subprocess.run(
        [sys.executable, "-m", "tau", "workspace", "connection", "--offline"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "TAU_CONFIG_DIR": str(tmp_path / "cfg")},
        check=False,
    )
    assert result.returncode == 2
    assert JWT_BODY not in result.stdout + result.stderr
    assert "line 14: looks like a JSON Web Token" in result.stderr


def test_a_token_in_a_quoted_scalar_is_found_even_when_the_file_is_not_yaml() -> None:
    broken = descriptor_text().replace("access:", "access: [unclosed")
    error = refusal(broken + SPLIT_JWT)
    assert "credential-shaped content" in error.one_line()
    assert error.problems == ["line 14: looks like a JSON Web Token"]
