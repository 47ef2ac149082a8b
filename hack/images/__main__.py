"""`python -m hack.images build|push`: build this checkout's images (cached), push them."""

from __future__ import annotations

import argparse
import sys

from .build import Builder, BuildError, image_names
from .registry import push


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.images", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="build images (default: all) into the cache")
    build.add_argument("names", nargs="*", metavar="NAME", help=", ".join(image_names()))
    upload = commands.add_parser("push", help="build (cached) and push images to a registry")
    upload.add_argument("--registry", required=True, metavar="HOST:PORT")
    upload.add_argument("names", nargs="*", metavar="NAME", help=", ".join(image_names()))
    args = parser.parse_args(argv)
    builder = Builder()
    try:
        built = builder.build(args.names or None)
        if args.command == "build":
            for image in built:
                print(f"{image.name}\t{image.repository}:{image.version}\t{image.digest}")
            return 0
        for ref in push(builder, built, args.registry):
            print(f"{ref.name}\t{ref.tagged}\t{ref.reference}")
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
