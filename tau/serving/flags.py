"""Parsing the repeatable `tau serve deploy` flag values, each error naming its flag.

`--env KEY=VAL`, `--env-secret KEY=SECRET:KEY`, `--volume NAME=KIND[:SOURCE]`,
`--mount NAME:PATH[:ro|rw]`, `--init/--sidecar NAME=IMAGE`, port lists and quantities all
arrive as strings; a malformed one is refused before anything reads a cluster.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tau import safeyaml
from tau.errors import UsageError
from tau.render.endpoint import FLAGS, Volume
from tau.render.intent import Mount, SecretRef
from tau.render.meta import REDACTED
from tau.render.names import DNS1123_LABEL

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
QUANTITY = re.compile(r"^(?P<number>\d+(\.\d+)?)(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$")
VOLUME_KINDS = ("pvc", "emptyDir", "configMap", "secret")
PORT_MAX = 65535
ECHO_MAX = 60


def echo(value: str) -> str:
    """A flag value fit to repeat in an error: escaped, and cut when long."""
    text = value if len(value) <= ECHO_MAX else value[:ECHO_MAX] + "…"
    return json.dumps(text, ensure_ascii=True)


def usage(message: str, hint: str = "") -> UsageError:
    return UsageError(message, hint=hint, owner=FLAGS)


def env_pairs(values: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """`--env KEY=VAL`; the value is never echoed (it may be a credential)."""
    out: dict[str, str] = {}
    for value in values:
        name, eq, literal = value.partition("=")
        if not eq:
            raise usage(f"--env {echo(name)}=… must be KEY=VALUE")
        _env_name("--env", name)
        if name in out:
            raise usage(f"--env {name} is given twice")
        out[name] = literal
    return tuple(out.items())


def env_secrets(values: Iterable[str]) -> tuple[tuple[str, SecretRef], ...]:
    """`--env-secret KEY=SECRET:KEY` (a Secret's key, never its value)."""
    out: dict[str, SecretRef] = {}
    for value in values:
        name, eq, ref = value.partition("=")
        secret, colon, key = ref.partition(":")
        if not eq or not colon or not secret or not key:
            raise usage(f"--env-secret {echo(name)}={REDACTED} must be KEY=SECRET:KEY")
        _env_name("--env-secret", name)
        if name in out:
            raise usage(f"--env-secret {name} is given twice")
        out[name] = SecretRef(secret=secret, key=key)
    return tuple(out.items())


def _env_name(flag: str, name: str) -> None:
    if not ENV_NAME.match(name):
        raise usage(f"{flag} {echo(name)}: not a valid environment variable name")


def volumes(values: Iterable[str]) -> tuple[Volume, ...]:
    """`--volume NAME=KIND[:SOURCE]`, KIND pvc|emptyDir|configMap|secret."""
    out: dict[str, Volume] = {}
    for value in values:
        name, eq, rest = value.partition("=")
        kind, _, source = rest.partition(":")
        if not eq:
            raise usage(f"--volume {echo(value)} must be NAME=KIND[:SOURCE]")
        check_label("--volume", name)
        if kind not in VOLUME_KINDS:
            raise usage(
                f"--volume {name}: kind {echo(kind)} must be one of: {', '.join(VOLUME_KINDS)}"
            )
        if kind == "emptyDir" and source:
            raise usage(f"--volume {name}=emptyDir takes no source")
        if kind != "emptyDir" and not source:
            raise usage(f"--volume {name}={kind} needs a source: {name}={kind}:NAME")
        if name in out:
            raise usage(f"--volume {name} is given twice")
        out[name] = Volume(name=name, kind=kind, source=source or None)  # type: ignore[arg-type]
    return tuple(out.values())


def mounts(values: Iterable[str], declared: tuple[Volume, ...]) -> tuple[Mount, ...]:
    """`--mount NAME:PATH[:ro|rw]` of a declared `--volume`."""
    names = {volume.name for volume in declared}
    out: dict[str, Mount] = {}
    for value in values:
        parts = value.split(":")
        if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
            raise usage(f"--mount {echo(value)} must be NAME:PATH[:ro|rw]")
        name, path = parts[0], parts[1]
        mode = parts[2] if len(parts) == 3 else "rw"
        if mode not in ("ro", "rw"):
            raise usage(f"--mount {name}:{path}: mode {echo(mode)} must be ro or rw")
        if name not in names:
            raise usage(f"--mount {name}: no --volume {name}=KIND[:SOURCE] declares it")
        if not path.startswith("/") or ".." in path.split("/"):
            raise usage(f"--mount {name}:{echo(path)}: the path must be absolute, without '..'")
        path = posixpath.normpath(path)
        if path in out:
            raise usage(f"--mount path {path} is used twice")
        out[path] = Mount(volume=name, path=path, read_only=mode == "ro")
    return tuple(out.values())


def containers(flag: str, values: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """`--init` / `--sidecar NAME=IMAGE`."""
    out: dict[str, str] = {}
    for value in values:
        name, eq, image = value.partition("=")
        if not eq or not image.strip():
            raise usage(f"{flag} {echo(value)} must be NAME=IMAGE")
        check_label(flag, name)
        if name in out:
            raise usage(f"{flag} {name} is given twice")
        out[name] = image
    return tuple(out.items())


def check_label(flag: str, name: str) -> None:
    if not DNS1123_LABEL.match(name) or len(name) > 63:
        raise usage(f"{flag} name {echo(name)} must be a DNS-1123 label")


def ports(flag: str, values: Iterable[str]) -> tuple[int, ...]:
    """A repeatable, comma-separated port list, in the order given."""
    out: list[int] = []
    for value in values:
        for item in value.split(","):
            item = item.strip()
            if not item.isdigit() or not 1 <= int(item) <= PORT_MAX:
                raise usage(f"{flag} {echo(item)} must be a port between 1 and {PORT_MAX}")
            if int(item) in out:
                raise usage(f"{flag} {item} is given twice")
            out.append(int(item))
    return tuple(out)


def check_port(flag: str, value: int, *, zero_ok: bool = True) -> None:
    low = 0 if zero_ok else 1
    if not low <= value <= PORT_MAX:
        raise usage(f"{flag} {value} must be between {low} and {PORT_MAX}")


def quantity(flag: str, value: str) -> str:
    """A positive Kubernetes quantity such as 16Gi or 500m."""
    match = QUANTITY.match(value.strip())
    if not match or float(match.group("number")) <= 0:
        raise usage(f"{flag} {echo(value)} must be a positive quantity such as 16Gi or 500m")
    return value.strip()


def app_args(path: str) -> dict[str, Any]:
    """`--app-args FILE`: a JSON or YAML mapping passed to the Serve application builder."""
    try:
        data = safeyaml.load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise usage(f"--app-args {path}: cannot read ({error.strerror or 'error'})") from None
    except (UnicodeDecodeError, safeyaml.YamlRefused) as error:
        raise usage(f"--app-args {path}: not valid JSON or YAML ({error})") from None
    if not isinstance(data, dict):
        raise usage(f"--app-args {path}: must hold a JSON or YAML mapping")
    return data


def split_args(value: str) -> tuple[str, ...]:
    """Legacy `--args "a b c"`: whitespace-separated, no shell quoting."""
    return tuple(value.split())
