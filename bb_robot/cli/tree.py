"""``bb-robot tree``: a picture of the kinematic tree, drawn by graphviz's ``dot``.

Each link is a node, each joint an edge from its parent link to its child link labelled with
the joint's name, type, axis and mimic.  The DOT text is written here; ``dot`` (Debian
package ``graphviz``, which ``scripts/setup`` installs) renders it as SVG, PNG or PDF.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

from bb_robot.cli import common
from bb_robot.cli.show import AXIS_TYPES
from bb_robot.errors import BbRobotError
from bb_robot.model.robot import Robot

JSON_SHAPE = (
    '{"robot", "root", "output": path or null, "format": "svg|png|pdf|dot", "nodes": [link, ...], '
    '"edges": [{"joint", "type", "parent", "child", "axis": [x, y, z] or null, "mimic": joint or null}]}'
)
#: Output formats by file extension; ``dot`` is the DOT text itself.
FORMATS: Final = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}
#: Seconds ``dot`` may take (a 1000-link chain takes about a second).
DOT_TIMEOUT: Final = 300.0


class GraphvizError(BbRobotError):
    """``dot`` is missing, failed or took too long."""


def quote(text: str) -> str:
    """``text`` as a DOT double-quoted string (backslashes, quotes and line breaks escaped)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return f'"{escaped}"'


def _label(*lines: str) -> str:
    """A multi-line label: each line escaped, joined with DOT's centred line break."""
    return '"' + "\\n".join(quote(line)[1:-1] for line in lines) + '"'


def to_dot(robot: Robot) -> str:
    """Return the DOT text of ``robot``'s tree: one node per link, one edge per joint.

    Node identifiers are ``L0``, ``L1``, ... (link order); names only appear in labels, so any
    name is safe.  Links without geometry or inertia (SDF frames, tool frames) are dashed.
    """
    ids = {name: f"L{i}" for i, name in enumerate(robot.topology.link_order)}
    lines = [
        f"digraph {quote(robot.name)} {{",
        "  rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=10];',
    ]
    for name, node in ids.items():
        link = robot.links[name]
        bare = not link.visuals and not link.collisions and link.inertial is None
        style = ', style="rounded,dashed,filled"' if bare else ""
        root = ", penwidth=2" if name == robot.root_link else ""
        lines.append(f"  {node} [label={quote(name)}{style}{root}];")
    for joint_name in robot.topology.joint_order:
        joint = robot.joints[joint_name]
        label = [joint.name, joint.type]
        if joint.type in AXIS_TYPES:
            label.append("axis " + " ".join(common.number(c) for c in joint.axis))
        if joint.mimic is not None:
            label.append(f"mimics {joint.mimic.joint}")
        style = ", style=dashed" if joint.type == "fixed" else ""
        lines.append(f"  {ids[joint.parent_link]} -> {ids[joint.child_link]} [label={_label(*label)}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(dot_text: str, fmt: str, output: Path) -> None:
    """Write ``dot_text`` rendered as ``fmt`` (svg, png, pdf) to ``output`` with graphviz's ``dot``."""
    executable = shutil.which("dot")
    if executable is None:
        raise GraphvizError(
            "graphviz's `dot` program is not installed; install it (Debian: apt-get install graphviz, "
            "or run scripts/setup), or write the DOT text with -o tree.dot"
        )
    try:
        result = subprocess.run(
            [executable, f"-T{fmt}", "-o", os.fspath(output)],
            input=dot_text.encode("utf-8"),
            capture_output=True,
            timeout=DOT_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GraphvizError(f"`dot` did not finish drawing {output} within {DOT_TIMEOUT:g} s") from None
    if result.returncode != 0:
        detail = " ".join(result.stderr.decode("utf-8", "replace").split()) or f"exit status {result.returncode}"
        raise GraphvizError(f"`dot -T{fmt}` failed writing {output}: {detail}")


def output_format(output: str | None) -> str:
    """The format of ``-o OUT`` from its extension; no ``-o``: DOT on stdout."""
    if output is None:
        return "dot"
    fmt = FORMATS.get(Path(output).suffix.lower())
    if fmt is None:
        raise common.UsageError(f"-o {output}: unknown picture format; use a name ending in .svg, .png, .pdf or .dot")
    return fmt


def run(args: argparse.Namespace) -> int:
    fmt = output_format(args.output)
    common.refuse_to_overwrite(args.output, args.file)
    loaded = common.load_from_args(args)
    robot = loaded.robot
    text = to_dot(robot)
    for warning in loaded.warnings:
        common.warn(warning)
    if args.output is None:
        if not args.json:
            sys.stdout.write(text)
    elif fmt == "dot":
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        render(text, fmt, Path(args.output))
    if args.json:
        common.print_json(
            {
                "robot": robot.name,
                "root": robot.root_link,
                "output": args.output,
                "format": fmt,
                "nodes": list(robot.topology.link_order),
                "edges": [
                    {
                        "joint": j.name,
                        "type": j.type,
                        "parent": j.parent_link,
                        "child": j.child_link,
                        "axis": [c + 0.0 for c in j.axis] if j.type in AXIS_TYPES else None,
                        "mimic": j.mimic.joint if j.mimic is not None else None,
                    }
                    for j in (robot.joints[name] for name in robot.topology.joint_order)
                ],
            }
        )
    elif args.output is not None:
        print(f"wrote {args.output}: {len(robot.links)} links, {len(robot.joints)} joints ({fmt})")
    return common.EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "tree",
        help="draw the kinematic tree (links, joints with type and axis) with graphviz",
        description="Draw the kinematic tree: a node per link, an edge per joint labelled with its name, "
        "type, axis and mimic. The picture is rendered by graphviz's `dot` (SVG, PNG or PDF, from the "
        "extension of -o); without -o the DOT text is printed.",
    )
    common.add_input_options(parser)
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="picture to write: OUT.svg, OUT.png, OUT.pdf (needs graphviz's dot) or OUT.dot / OUT.gv (DOT text)",
    )
    common.add_json_option(parser, JSON_SHAPE + " (with --json and no -o, the DOT text is not printed)")
    parser.set_defaults(handler=run)
