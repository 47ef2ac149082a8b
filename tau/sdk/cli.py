"""`python -m tau.sdk.cli SUBCOMMAND`: what `tau python SUBCOMMAND` runs.

inspect MODULE            the workflows a module declares, and their manifests
build MODULE --out DIR    write the build directory (see tau.sdk.build)
submit MODULE             build into a temporary directory and submit it
submit-build DIR          submit a build directory
bootstrap DIR             write a starter workflow module
doctor [MODULE]           check this interpreter, the tau CLI and a module
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from tau.errors import TauError, UsageError
from tau.sdk.build import Overrides, build, load_module, ordered
from tau.sdk.submit import submit_build, submit_module

STARTER = '''"""A TauGrid workflow: train, then evaluate the trained checkpoint."""

import tau


@tau.train(name="demo-train", gpus=0, workers=2, image="rayproject/ray:2.54.0-py312",
           pip=[], model="demo", primary_metric="loss")
def train(ctx: tau.Ctx) -> None:
    loss = 1.0
    for step in range(10):
        loss *= 0.8
        print(f"step={step} loss={loss:.4f}")
    ctx.checkpoint_dir.mkdir(parents=True, exist_ok=True)
    ctx.checkpoint_path.write_text(f"loss={loss}\\n")
    ctx.report(loss=loss)


@tau.eval(name="demo-eval", after="demo-train", gpus=1, cpu_workers=1, pip=[])
def evaluate(ctx: tau.Ctx) -> None:
    print("evaluating", ctx.upstream_checkpoint)
'''


def _overrides(args: argparse.Namespace) -> Overrides:
    return Overrides(
        namespace=args.namespace or None,
        data_pvc=args.data_pvc or None,
        queue=args.queue or None,
        gpu_class=args.gpu_class or None,
        upstream_checkpoint=args.upstream_checkpoint or None,
    )


def _override_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--namespace", "-n", default="")
    parser.add_argument("--data-pvc", default="")
    parser.add_argument("--queue", default="")
    parser.add_argument("--gpu-class", default="")
    parser.add_argument("--upstream-checkpoint", default="")


def inspect(args: argparse.Namespace) -> int:
    found = load_module(Path(args.module))
    rows = [
        {
            "attribute": attribute,
            "kind": handle.kind,
            "name": handle.name,
            "after": handle.options.after,
            "manifest": handle.manifest(),
        }
        for attribute, handle in ordered(found)
    ]
    serves = [
        {"attribute": a, "name": s.name, "command": ["tau", *s.command()]} for a, s in found.serves
    ]
    if args.output == "json":
        print(json.dumps({"workflows": rows, "serve": serves}, indent=2))
    elif args.output == "yaml":
        sys.stdout.write(yaml.safe_dump({"workflows": rows, "serve": serves}, sort_keys=False))
    else:
        for row in rows:
            after = f" (after {row['after']})" if row["after"] else ""
            print(f"{row['kind']:<6} {row['name']:<24} {row['attribute']}{after}")
        for serve in serves:
            print(f"{'serve':<6} {serve['name']:<24} {serve['attribute']}")
    return 0


def do_build(args: argparse.Namespace) -> int:
    artifact = build(Path(args.module), Path(args.out), _overrides(args))
    for workload in artifact["workloads"]:
        print(f"{workload['kind']:<6} {workload['name']:<24} {Path(args.out) / workload['config']}")
    print(f"build: {Path(args.out) / 'build.json'}")
    return 0


def bootstrap(args: argparse.Namespace) -> int:
    target = Path(args.directory) / "workflow.py"
    if target.exists():
        raise UsageError(f"{target} exists; bootstrap never overwrites")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(STARTER)
    print(f"wrote {target}")
    print(f"next: tau python inspect {target}")
    return 0


def doctor(args: argparse.Namespace) -> int:
    from tau.sdk.delegate import capture_tau, tau_command

    checks: list[tuple[str, bool, str]] = []
    checks.append(("python >= 3.11", sys.version_info >= (3, 11), sys.version.split()[0]))
    command = " ".join(tau_command())
    version = capture_tau(["version", "--short"])
    checks.append(("tau CLI", version.returncode == 0, f"{command} {version.stdout.strip()}"))
    if args.module:
        try:
            found = load_module(Path(args.module))
            checks.append(("module", True, f"{len(found.workflows)} workflow(s)"))
        except TauError as error:
            checks.append(("module", False, error.one_line()))
    for name, ok, detail in checks:
        print(f"{'ok' if ok else 'FAIL':<5} {name:<16} {detail}")
    return 0 if all(ok for _, ok, _ in checks) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tau python", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("inspect", help="List a module's workflows and their manifests.")
    p.add_argument("module")
    p.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table")
    p.set_defaults(run=inspect)
    p = sub.add_parser("build", help="Write a build directory for a module's workflows.")
    p.add_argument("module")
    p.add_argument("--out", required=True)
    _override_flags(p)
    p.set_defaults(run=do_build)
    p = sub.add_parser("submit", help="Build a module and submit its workflows in order.")
    p.add_argument("module")
    p.add_argument("--dry-run", default="", choices=("", "client", "server"))
    p.add_argument("--context", default="")
    _override_flags(p)
    p.set_defaults(
        run=lambda a: submit_module(
            Path(a.module), overrides=_overrides(a), dry_run=a.dry_run, context=a.context
        )
    )
    p = sub.add_parser("submit-build", help="Submit a build directory's workflows in order.")
    p.add_argument("directory")
    p.add_argument("--dry-run", default="", choices=("", "client", "server"))
    p.add_argument("--context", default="")
    p.set_defaults(
        run=lambda a: submit_build(Path(a.directory), dry_run=a.dry_run, context=a.context)
    )
    p = sub.add_parser("bootstrap", help="Write a starter workflow module into DIR.")
    p.add_argument("directory", nargs="?", default=".")
    p.set_defaults(run=bootstrap)
    p = sub.add_parser("doctor", help="Check this interpreter, the tau CLI and a module.")
    p.add_argument("module", nargs="?", default="")
    p.set_defaults(run=doctor)
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
        return code
    except TauError as error:
        print(f"error: {error.one_line()}", file=sys.stderr)
        return error.exit_code


if __name__ == "__main__":
    sys.exit(main())
