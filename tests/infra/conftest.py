"""The infra program and terraform-compat live outside the `tau` package, at the project root."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "terraform-compat"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
