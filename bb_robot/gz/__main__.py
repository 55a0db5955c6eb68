"""``python -m bb_robot.gz``: gz.msgs10 descriptor sets and a look at the gz-transport network.

- ``build-set SOURCE OUTPUT``: write a FileDescriptorSet of gz.msgs10 from a ``gazebo-py-bindings``
  wheel, a ``gz/msgs10`` directory or another set (``scripts/setup`` runs this);
- ``info``: where the message classes come from;
- ``diagnose [--seconds S] [--subscribe TOPIC TYPE]...``: listen to discovery for a while (every
  partition) and print what was seen and the problems found (partition / type-name mismatches).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bb_robot.gz.messages import default_messages, file_protos_from, write_descriptor_set


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bb_robot.gz", description=(__doc__ or "").split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build-set", help="write a FileDescriptorSet of gz.msgs10")
    build.add_argument("source", type=Path, help="a gazebo-py-bindings wheel, a gz/msgs10 directory or a .desc")
    build.add_argument("output", type=Path)
    commands.add_parser("info", help="say where the message classes come from")
    diagnose = commands.add_parser("diagnose", help="listen to gz-transport discovery and report")
    diagnose.add_argument("--seconds", type=float, default=3.0)
    diagnose.add_argument("--partition", help="default: GZ_PARTITION, else <hostname>:<username>")
    diagnose.add_argument(
        "--subscribe", nargs=2, action="append", default=[], metavar=("TOPIC", "TYPE"), help="also subscribe"
    )
    args = parser.parse_args(argv)
    if args.command == "build-set":
        protos = file_protos_from(args.source)
        if not protos:
            parser.error(f"{args.source} holds no gz.msgs descriptors")
        count = write_descriptor_set(protos, args.output)
        print(f"wrote {count} file descriptors to {args.output}")
    elif args.command == "info":
        print(default_messages().source)
    else:
        from bb_robot.gz.builtin import BuiltinTransport

        with BuiltinTransport(partition=args.partition) as transport:
            for topic, type_name in args.subscribe:
                transport.subscribe(topic, type_name, lambda message, info: None, raw=True)
            transport.request_subscribers()
            time.sleep(args.seconds)
            print(transport.diagnostics().format())
    return 0


if __name__ == "__main__":
    sys.exit(main())
