"""Serve the exported market policy with Ray Serve (`--import-path serve:app`).

`TAU_MODEL_PATH` (set by `tau serve deploy --checkpoint`) names the export, or a directory
holding `tau-market-policy.json`. The forward pass is plain Python over the exported lists,
so the serving image needs Ray Serve and nothing else.

    POST /  {"observation": [r, signal, vol, inventory, spread, momentum, sin_t, cos_t]}
    ->      {"action": "Long", "probabilities": {...}, "predicted_reward": 0.012}
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from ray import serve
from starlette.requests import Request
from starlette.responses import JSONResponse

EXPORT = "tau-market-policy.json"
FORMAT = "tau-market-policy/v1"


class Policy:
    """The actor-critic of train.py, evaluated without PyTorch."""

    def __init__(self, export: dict[str, Any]) -> None:
        if export.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} export (format {export.get('format')!r})")
        self.actions = list(export["architecture"]["actions"])
        self.inputs = int(export["architecture"]["inputs"])
        self.layers = export["layers"]

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Policy:
        where = Path(path)
        if where.is_dir():
            where = where / EXPORT
        return cls(json.loads(where.read_text()))

    @staticmethod
    def _linear(layer: dict[str, Any], x: list[float]) -> list[float]:
        return [
            sum(w * v for w, v in zip(row, x, strict=True)) + b
            for row, b in zip(layer["weight"], layer["bias"], strict=True)
        ]

    def predict(self, observation: list[float]) -> dict[str, Any]:
        if len(observation) != self.inputs or not all(math.isfinite(v) for v in observation):
            raise ValueError(f"observation must be {self.inputs} finite numbers")
        hidden = [math.tanh(v) for v in self._linear(self.layers["hidden"], observation)]
        logits = self._linear(self.layers["policy"], hidden)
        top = max(logits)
        exp = [math.exp(v - top) for v in logits]
        total = sum(exp)
        probabilities = {a: e / total for a, e in zip(self.actions, exp, strict=True)}
        (reward,) = self._linear(self.layers["value"], hidden)
        return {
            "action": self.actions[logits.index(top)],
            "probabilities": probabilities,
            "predicted_reward": reward,
        }


# Named "default": `tau serve deploy --replicas/--max-replicas` configure this deployment.
@serve.deployment(name="default")
class MarketPolicy:
    def __init__(self) -> None:
        self.policy = Policy.load(os.environ["TAU_MODEL_PATH"])

    async def __call__(self, request: Request) -> JSONResponse:
        try:
            body = await request.json()
            return JSONResponse(self.policy.predict([float(v) for v in body["observation"]]))
        except (ValueError, KeyError, TypeError) as error:
            return JSONResponse({"error": str(error)}, status_code=400)


app = MarketPolicy.bind()
