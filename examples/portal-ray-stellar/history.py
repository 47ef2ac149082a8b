"""Closed JSONL history chunks: one file per step, visible only once complete.

Each chunk is written to a dotfile, flushed and fsynced, then atomically renamed to
`chunk-<step>-<timestamp>.jsonl`, so the offloader (and `tau run get`) never see half a row.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


class ChunkWriter:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def write(self, step: int, metrics: dict[str, float]) -> Path:
        stamp = time.time()
        row = {"_step": step, "_timestamp": stamp, **metrics}
        final = self.directory / f"chunk-{step:06d}-{int(stamp * 1000)}.jsonl"
        temp = self.directory / f".{final.name}.tmp"
        with open(temp, "w") as handle:
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, final)
        return final
