"""The Stellar HTML page: one self-contained file (uPlot inlined) or a server-backed page."""

from __future__ import annotations

import html
import json
import re
from functools import cache
from importlib import resources
from typing import Any

ASSETS = ("uPlot.iife.min.js", "uPlot.min.css")
_PLACEHOLDER = re.compile(r"__(?:TITLE|SCRIPT_SRC|UPLOT_CSS|UPLOT_JS|BOOT)__")


@cache
def asset(name: str) -> str:
    if name not in ASSETS:
        raise KeyError(name)
    return resources.files("tau.portal").joinpath("static", "uplot", name).read_text("utf-8")


@cache
def _template() -> str:
    return resources.files("tau.portal").joinpath("templates", "stellar.html").read_text("utf-8")


def _script_json(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _fill(page: str, replacements: dict[str, str]) -> str:
    """One pass, so inserted content (uPlot, data) is never scanned for placeholders."""
    return _PLACEHOLDER.sub(lambda m: replacements[m.group(0)], page)


def render_file(snapshot: dict[str, Any]) -> str:
    """A single HTML file that needs no network: data, uPlot and styles are all inline."""
    page = _template()
    replacements = {
        "__TITLE__": html.escape(str(snapshot["target"])),
        "__SCRIPT_SRC__": "",
        "__UPLOT_CSS__": f"<style>{asset('uPlot.min.css')}</style>",
        "__UPLOT_JS__": f"<script>{asset('uPlot.iife.min.js')}</script>",
        "__BOOT__": f"renderSnapshot({_script_json(snapshot)});",
    }
    return _fill(page, replacements)


def render_served(target: str, metrics: list[str], api_base: str = "/api/v2/stellar") -> str:
    """The server's page: same renderer, assets from /stellar/assets, data from the API."""
    page = _template()
    params = {"target": target, "metric": metrics}
    boot = (
        f"const P={_script_json(params)};"
        "const q=new URLSearchParams();q.set('target',P.target);"
        "P.metric.forEach(m=>q.append('metric',m));"
        f"fetch('{api_base}/snapshot?'+q).then(r=>r.ok?r.json():r.json().then(e=>Promise.reject(e)))"
        ".then(renderSnapshot).catch(e=>{document.getElementById('meta').textContent="
        "'error: '+(e.detail||e.reason||e);});"
    )
    replacements = {
        "__TITLE__": html.escape(target or "Stellar"),
        "__SCRIPT_SRC__": "'self'",
        "__UPLOT_CSS__": '<link rel="stylesheet" href="/stellar/assets/uPlot.min.css">',
        "__UPLOT_JS__": '<script src="/stellar/assets/uPlot.iife.min.js"></script>',
        "__BOOT__": boot,
    }
    return _fill(page, replacements)
