"""Property-based fuzzers of the hostile-input contract (hypothesis).

The default budget keeps the whole suite near two minutes on two cores; set
TAU_FUZZ_EXAMPLES=2000 (per target) for a measurement run, TAU_FUZZ_RANDOM=1 to draw new
inputs instead of the fixed derandomized sequence, TAU_FUZZ_SURVEY=FILE to record every
breach in FILE and keep going (the measurement: counts over the whole budget). The terminal
summary reports, per target, inputs tried and each kind of breach.
"""

from __future__ import annotations

from tests.fuzz.contract import TALLY


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not TALLY:
        return
    terminalreporter.section("hostile-input fuzzers")
    for target, counts in sorted(TALLY.items()):
        terminalreporter.write_line(
            f"{target}: " + ", ".join(f"{value} {name}" for name, value in counts.items())
        )
