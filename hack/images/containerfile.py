"""What the daemonless build reads from a Containerfile: its build arguments and image config.

The Containerfiles under docker/ are the one description of each image. Docker and Podman run
them as written; the daemonless build realises their RUN steps with Debian's and PyPI's own
tools (see build.py) and takes from the file itself everything that decides what the image is:
the global ARG defaults (suite, Debian packages, uid, venv, extras) and the final stage's ENV,
USER, WORKDIR, ENTRYPOINT, CMD, EXPOSE and LABEL. Only the exec (JSON) form of ENTRYPOINT and
CMD is accepted: the shell form would wrap the program in `/bin/sh -c` differently per builder.
A final-stage `COPY --from=NAME SRC DEST` whose NAME is no stage is a named build context
(`docker build --build-context NAME=DIR`); the daemonless build adds it as its own layer.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


class ContainerfileError(ValueError):
    """The Containerfile uses a form the daemonless build cannot reproduce faithfully."""


@dataclass(frozen=True)
class ImageConfig:
    """The OCI image config of the final stage, build arguments already substituted."""

    env: tuple[tuple[str, str], ...] = ()
    user: str = ""
    workdir: str = ""
    entrypoint: tuple[str, ...] | None = None
    cmd: tuple[str, ...] | None = None
    exposed_ports: tuple[str, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ContextCopy:
    """`COPY --from=CONTEXT SOURCE DEST` of a named build context into the final stage."""

    context: str
    source: str
    dest: str


@dataclass(frozen=True)
class Containerfile:
    path: Path
    args: dict[str, str] = field(default_factory=dict)
    config: ImageConfig = field(default_factory=ImageConfig)
    copies: tuple[ContextCopy, ...] = ()

    def arg(self, name: str) -> str:
        if name not in self.args:
            raise ContainerfileError(f"{self.path.name}: global ARG {name} has no default")
        return self.args[name]


def instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, rest) per instruction: comments dropped, backslash continuations joined."""
    result: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        if full:
            keyword, _, rest = full.partition(" ")
            result.append((keyword.upper(), rest.strip()))
    if pending.strip():
        keyword, _, rest = pending.strip().partition(" ")
        result.append((keyword.upper(), rest.strip()))
    return result


def substitute(value: str, args: dict[str, str]) -> str:
    def repl(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in args:
            raise ContainerfileError(f"${{{name}}} is not a declared build argument")
        return args[name]

    return _VAR.sub(repl, value)


def _pairs(rest: str, args: dict[str, str], keyword: str) -> list[tuple[str, str]]:
    pairs = []
    for word in shlex.split(rest):
        key, sep, value = word.partition("=")
        if not sep:
            raise ContainerfileError(f"{keyword} {rest!r}: use the KEY=VALUE form")
        pairs.append((key, substitute(value, args)))
    return pairs


def _exec_form(rest: str, keyword: str, args: dict[str, str]) -> tuple[str, ...]:
    try:
        words = json.loads(rest)
    except json.JSONDecodeError:
        words = None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise ContainerfileError(f'{keyword} must use the exec form ["program", "arg", ...]')
    return tuple(substitute(w, args) for w in words)


def parse(path: Path) -> Containerfile:
    steps = instructions(path.read_text())
    args: dict[str, str] = {}
    index = 0
    while index < len(steps) and steps[index][0] != "FROM":
        keyword, rest = steps[index]
        if keyword == "ARG":
            name, _, default = rest.partition("=")
            args[name.strip()] = " ".join(shlex.split(default)) if default else ""
        index += 1
    final = max((i for i, (k, _) in enumerate(steps) if k == "FROM"), default=None)
    if final is None:
        raise ContainerfileError(f"{path.name}: no FROM instruction")
    stages = {rest.split()[-1] for k, rest in steps if k == "FROM" and " AS " in rest.upper()}
    copies: list[ContextCopy] = []
    env: dict[str, str] = {}
    labels: dict[str, str] = {}
    user = workdir = ""
    entrypoint = cmd = None
    ports: list[str] = []
    for keyword, rest in steps[final + 1 :]:
        if keyword == "ENV":
            env.update(_pairs(rest, args | env, keyword))
        elif keyword == "LABEL":
            labels.update(_pairs(rest, args, keyword))
        elif keyword == "USER":
            user = substitute(rest, args)
        elif keyword == "WORKDIR":
            workdir = substitute(rest, args)
        elif keyword == "ENTRYPOINT":
            entrypoint = _exec_form(rest, keyword, args)
        elif keyword == "CMD":
            cmd = _exec_form(rest, keyword, args)
        elif keyword == "EXPOSE":
            ports += [p if "/" in p else f"{p}/tcp" for p in rest.split()]
        elif keyword == "COPY" and rest.startswith("--from="):
            words = shlex.split(substitute(rest, args))
            context = words[0].removeprefix("--from=")
            if context in stages:
                raise ContainerfileError(
                    f"COPY --from={context}: copies from a stage are not built"
                )
            if len(words) != 3:
                raise ContainerfileError(f"COPY {rest!r}: use COPY --from=CONTEXT SOURCE DEST")
            copies.append(ContextCopy(context, words[1], words[2]))
    config = ImageConfig(
        env=tuple(env.items()),
        user=user,
        workdir=workdir,
        entrypoint=entrypoint,
        cmd=cmd,
        exposed_ports=tuple(ports),
        labels=tuple(sorted(labels.items())),
    )
    return Containerfile(path, args, config, tuple(copies))
