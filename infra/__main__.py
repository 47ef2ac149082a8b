"""`pulumi up` entry point (Pulumi.yaml: `main: infra/`).

Pulumi runs this directory as a script, so the project root is put on the import path to make
`infra` importable as the package the tests import.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from infra.program import export_stack

export_stack()
