"""`python terraform-compat ...` from the project root (see tfcompat.cli)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from tfcompat.cli import main  # noqa: E402

sys.exit(main())
