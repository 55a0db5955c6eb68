"""``<disable_collisions>`` of an SRDF (MoveIt's semantic robot description): read and written.

Only the collision part of SRDF is used: each ``<disable_collisions link1="a" link2="b"
reason="..."/>`` disables one link pair.  Other elements (groups, end effectors, virtual joints)
are read past.  Written files hold the robot name and the disabled pairs, one per line, sorted,
with MoveIt's reason names (``Adjacent``, ``Default``, ``Always``, ``Never``, ``User``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import quoteattr

from bb_robot.collision.errors import SrdfError
from bb_robot.collision.matrix import USER, CollisionMatrix
from bb_robot.collision.model import LinkPair, link_pair
from bb_robot.xmlsafe import STRING_SOURCE, XmlError, parse_xml, read_document


def parse_srdf(text: str | bytes, source: str = STRING_SOURCE, links: Iterable[str] | None = None) -> CollisionMatrix:
    """Read the disabled pairs of an SRDF document.

    Args:
        text: the document.
        source: its name in messages.
        links: the robot's links; when given, a pair naming another link is an error.

    Returns:
        A matrix with the document's disabled pairs and reasons (``User`` where none is given).

    Raises:
        SrdfError: not XML, not an SRDF (``<robot>`` root), an element without ``link1`` / ``link2``,
            or a link the robot does not have (naming the line).
    """
    try:
        root = parse_xml(text, source)
    except XmlError as error:
        raise SrdfError(source, str(error)) from None
    assert root is not None
    if root.tag != "robot":
        raise SrdfError(source, f"the root element is <{root.tag}>; an SRDF has <robot>")
    known = set(links) if links is not None else None
    disabled: dict[LinkPair, str] = {}
    for node in root.children:
        if node.tag != "disable_collisions":
            continue
        first, second = node.attrib.get("link1"), node.attrib.get("link2")
        if not first or not second:
            raise SrdfError(source, f"line {node.line}: <disable_collisions> needs link1 and link2")
        for name in (first, second):
            if known is not None and name not in known:
                raise SrdfError(
                    source, f"line {node.line}: <disable_collisions> names link '{name}', which the robot does not have"
                )
        disabled[link_pair(first, second)] = node.attrib.get("reason") or USER
    return CollisionMatrix(root.attrib.get("name", ""), dict(sorted(disabled.items())))


def read_srdf(path: str | os.PathLike[str], links: Iterable[str] | None = None) -> CollisionMatrix:
    """Read the disabled pairs of an SRDF file; errors as :func:`parse_srdf` (a missing file too)."""
    try:
        data = read_document(path)
    except XmlError as error:
        raise SrdfError(str(path), str(error)) from None
    return parse_srdf(data, str(path), links)


def srdf_text(matrix: CollisionMatrix) -> str:
    """The SRDF document of a matrix: the robot's name and one ``<disable_collisions>`` per pair."""
    lines = ['<?xml version="1.0" encoding="utf-8"?>']
    note = f"samples={matrix.samples} seed={matrix.seed}" if matrix.samples else "read, not computed"
    lines.append(f"<!-- bb-robot collisions: allowed-collision matrix ({note}) -->")
    lines.append(f"<robot name={quoteattr(matrix.robot)}>")
    for (first, second), reason in sorted(matrix.disabled.items()):
        lines.append(
            f"  <disable_collisions link1={quoteattr(first)} link2={quoteattr(second)} reason={quoteattr(reason)}/>"
        )
    lines.append("</robot>")
    return "\n".join(lines) + "\n"


def write_srdf(matrix: CollisionMatrix, path: str | os.PathLike[str]) -> None:
    """Write :func:`srdf_text` of ``matrix`` to ``path`` (created or replaced).

    Raises:
        SrdfError: the file cannot be written.
    """
    try:
        Path(path).write_text(srdf_text(matrix), encoding="utf-8")
    except OSError as error:
        raise SrdfError(str(path), f"cannot write: {error.strerror or error}") from None
