"""Every invalid fixture is rejected with its field path, the reference message and a line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.errors import ValidationError
from tau.runconfig import ConfigError, load

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(FIXTURES.glob("*.yaml"))


def fixture_expectations(path: Path) -> tuple[str, str]:
    """The `# expect-path:` and `# expect-message:` header lines of an invalid fixture."""
    lines = path.read_text().splitlines()
    expected_path = lines[0].removeprefix("# expect-path:").strip()
    message = lines[1].removeprefix("# expect-message:").strip()
    return expected_path, message


def test_there_is_a_fixture_per_rule() -> None:
    assert len(CASES) >= 150


@pytest.mark.parametrize("fixture", CASES, ids=[c.stem for c in CASES])
def test_invalid_fixture_names_its_field_path_and_line(fixture: Path) -> None:
    expected_path, message = fixture_expectations(fixture)
    with pytest.raises(ConfigError) as caught:
        load(fixture)
    error = caught.value
    assert isinstance(error, ValidationError) and error.exit_code == 2
    matching = [i for i in error.issues if i.path == expected_path and message in i.message]
    assert matching, "\n".join(str(i) for i in error.issues)
    issue = matching[0]
    assert issue.file == str(fixture)
    assert issue.line is not None and issue.line >= 3  # below the two header comments
    assert str(issue).startswith(f"{fixture}:{issue.line}:{issue.column}: ")
