"""jitamp's command line (`jitamp` or `python -m jitamp`)."""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="jitamp",
        description="Eager-exact autocast for TorchScript.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    example = sub.add_parser(
        "example",
        help="script the bundled model, show its rewritten graph, check it against eager",
        description="Scripts jitamp.example.TinyEncoder with jitamp, prints the "
        "rewritten graph and compares outputs with eager autocast. Example: "
        "python -m jitamp example",
    )
    example.add_argument("--no-graph", action="store_true", help="do not print the graph")
    args = parser.parse_args(argv)
    if args.command == "example":
        from .example import run

        return 0 if run(show_graph=not args.no_graph) else 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
