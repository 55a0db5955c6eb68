"""``bb-robot check``: is a description valid?  Its tree, its warnings, and every error with its line.

Like ``check_urdf``: a valid file prints its kinematic tree; an invalid one prints each
error with the file and line (exit code 1).  Errors the loaders raise carry their line;
the kinematic tree's problems (loops, several roots, undefined links, broken mimics), which
the model finds after parsing, are located here: each is given the line of the element a
user has to change (see :func:`locate`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bb_robot.cli import common
from bb_robot.cli.show import format_tree, summary
from bb_robot.collision.errors import CollisionError
from bb_robot.collision.matrix import default_pose_contacts
from bb_robot.collision.sources import collision_model, find_matrix
from bb_robot.collision.verify import review
from bb_robot.errors import BbRobotError
from bb_robot.loading import (
    Format,
    LoadedModel,
    ModelFileError,
    detect_format,
    format_from,
    load_sdf,
    loaded_sdf,
    read_urdf,
)
from bb_robot.model.errors import InvalidRobot, TreeProblem

JSON_SHAPE = (
    '{"ok": bool, "format": "urdf|sdf", "robot": name, "warnings": [...], "errors": [{"message", "line", "element"}]}'
)


@dataclass(frozen=True)
class Problem:
    """One error of the report: a full sentence, the 1-based line (``None``: unknown) and XML tag."""

    message: str
    line: int | None = None
    element: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"message": self.message, "line": self.line, "element": self.element}


@dataclass
class Report:
    ok: bool
    format: common.Format
    robot: str | None
    warnings: list[str] = field(default_factory=list)
    errors: list[Problem] = field(default_factory=list)
    loaded: LoadedModel | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "format": self.format,
            "robot": self.robot,
            "warnings": list(self.warnings),
            "errors": [e.as_json() for e in self.errors],
        }


# ---------------------------------------------------------------------- locating problems
@dataclass(frozen=True)
class Element:
    """Where a link, joint or transmission is written: ``tag`` and ``line``; for a joint its
    ``parent`` and ``child`` links and the line of its ``<mimic>``."""

    tag: str
    line: int | None
    parent: str | None = None
    child: str | None = None
    mimic_line: int | None = None


@dataclass
class ElementIndex:
    """The elements of a document by name, each name with every definition in file order."""

    root_tag: str
    root_line: int | None
    links: dict[str, list[Element]] = field(default_factory=dict)
    joints: dict[str, list[Element]] = field(default_factory=dict)
    #: ``(joint, actuator, line)`` of each transmission, in file order.
    transmissions: list[tuple[str, str | None, int | None]] = field(default_factory=list)


def _last(elements: Sequence[Element]) -> Element | None:
    with_line = [e for e in elements if e.line is not None]
    return max(with_line, key=lambda e: e.line or 0) if with_line else None


def locate(problem: TreeProblem, index: ElementIndex) -> tuple[int | None, str | None]:
    """Return the line and tag of the element to change for one tree problem.

    - no root, no links: the root element;
    - several roots: the second root link in the file (the first is taken as the robot's root);
    - a loop of joints: the last joint of the loop in the file (the one that closes it);
    - a link with several parents: the later parent joint;
    - an undefined link: the joint naming it; a duplicate: the second definition;
    - a broken mimic or a loop of mimics: the (last) follower's ``<mimic>``;
    - an actuator problem: the transmission.
    """
    names = problem.names
    kind = problem.kind
    found: Element | None = None
    if kind == "multiple_roots":
        roots = [e for name in names for e in index.links.get(name, [])[:1]]
        ordered = sorted((e for e in roots if e.line is not None), key=lambda e: e.line or 0)
        found = ordered[1] if len(ordered) > 1 else (ordered[0] if ordered else None)
    elif kind == "cycle":
        loop = set(names)
        found = _last([e for joints in index.joints.values() for e in joints if e.parent in loop and e.child in loop])
    elif kind == "multiple_parents":
        found = _last([e for name in names[1:] for e in index.joints.get(name, [])])
    elif kind == "undefined_link" and names:
        found = _last(index.joints.get(names[0], []))
    elif kind in ("duplicate_link", "duplicate_joint") and names:
        elements = (index.links if kind == "duplicate_link" else index.joints).get(names[0], [])
        found = elements[1] if len(elements) > 1 else _last(elements)
    elif kind in ("unknown_mimic_source", "invalid_mimic", "mimic_cycle"):
        followers = names[:1] if kind != "mimic_cycle" else names
        joint = _last([e for name in followers for e in index.joints.get(name, [])])
        if joint is not None:
            return (joint.mimic_line or joint.line), "mimic" if joint.mimic_line else joint.tag
    elif kind in ("unknown_actuator_joint", "duplicate_actuator") and names:
        lines = [
            line
            for joint, actuator, line in index.transmissions
            if line is not None and (joint == names[-1] if kind == "unknown_actuator_joint" else actuator == names[0])
        ]
        if lines:
            return (lines[-1] if kind == "unknown_actuator_joint" else lines[min(1, len(lines) - 1)]), "transmission"
    if found is not None:
        return found.line, found.tag
    return index.root_line, index.root_tag


def _urdf_index(text: str | bytes, source: str) -> ElementIndex:
    from bb_robot.urdf.xml_safe import parse_xml

    root = parse_xml(text, source)
    assert root is not None
    index = ElementIndex(root.tag, root.line)
    for node in root.children:
        name = node.attrib.get("name", "")
        if node.tag == "link":
            index.links.setdefault(name, []).append(Element("link", node.line))
        elif node.tag == "joint":
            refs = {c.tag: c for c in node.children}
            parent = refs["parent"].attrib.get("link") if "parent" in refs else None
            child = refs["child"].attrib.get("link") if "child" in refs else None
            mimic = refs["mimic"].line if "mimic" in refs else None
            index.joints.setdefault(name, []).append(Element("joint", node.line, parent, child, mimic))
        elif node.tag == "transmission":
            joint = next((c.attrib.get("name", "") for c in node.children if c.tag == "joint"), "")
            actuator = next((c.attrib.get("name") for c in node.children if c.tag == "actuator"), None)
            index.transmissions.append((joint, actuator, node.line))
    return index


def _sdf_index(path: str, scope: str | None, resource_paths: Sequence[str]) -> tuple[ElementIndex, str]:
    """The selected model's links and joints by their names relative to it, and its file."""
    from bb_robot.sdf.convert import select_model
    from bb_robot.sdf.document import read_document

    document = read_document(path, resource_paths=list(resource_paths))
    model, _ = select_model(document, scope or "")
    index = ElementIndex("model", model.where.line)
    for nested in model.walk():
        relative = nested.scoped_name[len(model.scoped_name) :].lstrip(":")
        prefix = f"{relative}::" if relative else ""
        for link in nested.links:
            index.links.setdefault(prefix + link.name, []).append(Element("link", link.where.line))
        for frame in nested.frames:
            index.links.setdefault(prefix + frame.name, []).append(Element("frame", frame.where.line))
        for joint in nested.joints:
            element = Element("joint", joint.where.line, prefix + joint.parent, prefix + joint.child)
            index.joints.setdefault(prefix + joint.name, []).append(element)
    return index, model.where.source or path


def _tree_problems(error: InvalidRobot, index: ElementIndex, source: str) -> list[Problem]:
    problems = []
    for problem in error.problems:
        line, element = locate(problem, index)
        where = f"{source}:{line}" if line is not None else source
        problems.append(Problem(f"{where}: {problem.message}", line, element))
    return problems


def _problem(error: BbRobotError) -> list[Problem]:
    """The report entries of a loader error (every problem of an SDF frame error)."""
    from bb_robot.sdf.errors import FrameError
    from bb_robot.urdf.errors import DuplicateNameError

    if isinstance(error, FrameError) and error.problems:
        return [Problem(common.explain(p), p.line, p.element) for p in error.problems]
    element = getattr(error, "element", None)
    if isinstance(error, DuplicateNameError):
        element = error.kind
    line = getattr(error, "line", None)
    message = common.explain(error)
    return [Problem(message, line if isinstance(line, int) else None, element if isinstance(element, str) else None)]


# ------------------------------------------------------------------------------ checking
def check_urdf(path: str, format: Format, xacro_args: Mapping[str, str]) -> Report:
    from bb_robot.urdf.builder import build_robot

    report = Report(ok=False, format="urdf", robot=None)
    try:
        urdf = read_urdf(path, format, xacro_args if format == "xacro" else None)
        text, source, document = urdf.text, urdf.label, urdf.document
        if xacro_args and format != "xacro":
            document.warnings.append(f"{path}: --xacro-arg ignored: the file is not a .xacro file")
    except BbRobotError as error:
        report.errors = _problem(error)
        return report
    report.robot = document.name
    report.warnings = list(document.warnings)
    try:
        robot = build_robot(document)
    except InvalidRobot as error:
        report.errors = _tree_problems(error, _urdf_index(text, source), source)
        return report
    except BbRobotError as error:
        report.errors = _problem(error)
        return report
    report.warnings = list(robot.warnings)
    report.loaded = LoadedModel(robot, text, format, path, warnings=tuple(robot.warnings))
    report.ok = True
    return report


def check_sdf(path: str, scope: str | None, resource_paths: Sequence[str]) -> Report:
    report = Report(ok=False, format="sdf", robot=None)
    try:
        result = load_sdf(path, scope or "", resource_paths)
    except InvalidRobot as error:
        report.robot = error.robot
        try:
            index, source = _sdf_index(path, scope, resource_paths)
        except BbRobotError:
            index, source = ElementIndex("sdf", None), path
        report.errors = _tree_problems(error, index, source)
        return report
    except BbRobotError as error:
        report.errors = _problem(error)
        return report
    report.robot = result.robot.name
    report.warnings = list(result.warnings)
    report.loaded = loaded_sdf(path, result)
    report.ok = True
    return report


def check(
    path: str,
    *,
    scope: str | None = None,
    resource_paths: Sequence[str] = (),
    xacro_args: Mapping[str, str] | None = None,
) -> Report:
    """Check the description at ``path``; raises :class:`common.UsageError` for options that do not apply."""
    try:
        fmt = detect_format(path)
    except ModelFileError as error:
        guess: common.Format = "sdf" if format_from(path, b"") == "sdf" else "urdf"
        return Report(ok=False, format=guess, robot=None, errors=[Problem(str(error))])
    if fmt != "sdf":
        if scope:
            raise common.UsageError(f"--scope selects a model of an SDF file; {path} is URDF")
        return check_urdf(path, fmt, xacro_args or {})
    report = check_sdf(path, scope, resource_paths)
    if xacro_args:
        report.warnings.append(f"{path}: --xacro-arg ignored: the file is SDF, not xacro")
    return report


def run(args: argparse.Namespace) -> int:
    report = check(
        args.file,
        scope=args.scope,
        resource_paths=args.resource_path,
        xacro_args=common.parse_xacro_args(args.xacro_arg),
    )
    if report.ok and report.loaded is not None:
        report.warnings.extend(
            collision_warnings(report.loaded, args.resource_path, quiet=args.json, srdf=args.srdf or None)
        )
    if args.json:
        common.print_json(report.as_json())
    else:
        _print_report(report, args.file)
    return common.EXIT_OK if report.ok else common.EXIT_INPUT


def collision_warnings(
    loaded: LoadedModel, search_dirs: Sequence[str], *, quiet: bool = False, srdf: str | None = None
) -> list[str]:
    """Warnings about the collision geometry and its SRDF, as the driver would see them.

    - each pair the SRDF (``srdf``, else ``<model>.srdf`` beside the model, else the cache) disables
      that can touch, with the file and a witness (:mod:`bb_robot.collision.verify`; cached per pair
      of files);
    - link pairs in contact at the default pose that are neither adjacent nor disabled: MoveIt's rule.

    Where the geometry cannot be checked (no coal, a mesh not found) a note says so on stderr (unless
    ``quiet``) and there is no warning: ``check`` is about the description.

    Raises:
        SrdfError: an SRDF given with ``srdf`` cannot be read or names a link the robot does not have.
    """
    if not any(link.collisions for link in loaded.robot.links.values()):
        return []
    try:
        model = collision_model(loaded, search_dirs)
    except CollisionError as error:
        if not quiet:
            print(f"note: collision geometry not checked: {error}", file=sys.stderr)
        return []
    found = find_matrix(loaded, model, srdf) if srdf else None
    try:
        found = found or find_matrix(loaded, model)
        matrix, srdf_warnings = review(model, loaded.description, found.matrix, found.read_from, False)
        if found.origin != "partial":  # a partial matrix disables the very pairs warned about here
            model = model.with_allowed(matrix.disabled)
        pairs = default_pose_contacts(model)
    except CollisionError as error:
        if not quiet:
            print(f"note: collision geometry not checked: {error}", file=sys.stderr)
        return []
    return srdf_warnings + [
        f"links '{a}' and '{b}' are in contact at the default pose (each joint at 0, or mid-range where 0 is outside "
        "its limits); disable the pair in an SRDF if that is intended"
        for a, b in pairs
    ]


def _print_report(report: Report, path: str) -> None:
    for warning in report.warnings:
        common.warn(warning)
    for error in report.errors:
        # An error in an included file names that file: say which file was checked too.
        message = error.message if path in error.message else f"{path}: {error.message}"
        print(f"error: {message}", file=sys.stderr)
    name = f"robot '{report.robot}'" if report.robot is not None else "the description"
    if not report.ok or report.loaded is None:
        count = len(report.errors)
        print(f"{name} ({report.format.upper()}, {path}): invalid, {count} error{'s' if count != 1 else ''}")
        return
    loaded = report.loaded
    robot = loaded.robot
    scope = f", model '{common.source_scope(loaded)}'" if common.source_scope(loaded) else ""
    print(f"{name} ({report.format.upper()}, {path}{scope}): {summary(robot)}")
    children = len(robot.child_joints(robot.root_link))
    print(f"root link '{robot.root_link}' has {children} child{'ren' if children != 1 else ''}")
    print()
    print(format_tree(robot))
    print()
    count = len(report.warnings)
    print(f"OK: no errors, {count} warning{'s' if count != 1 else ''}")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "check",
        help="check a description: its tree, warnings, and errors with line numbers",
        description="Check a robot description like check_urdf: print its kinematic tree, its warnings, "
        "and every error with its file and line. Exits 1 when there is an error.",
    )
    common.add_input_options(parser)
    parser.add_argument(
        "--srdf",
        metavar="SRDF",
        help="the SRDF to verify (default: <model>.srdf beside the model, else the cache): a warning names each pair "
        "it disables that can touch",
    )
    common.add_json_option(parser, JSON_SHAPE)
    parser.set_defaults(handler=run)
