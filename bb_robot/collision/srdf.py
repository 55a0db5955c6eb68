"""``<disable_collisions>`` of an SRDF (MoveIt's semantic robot description): read and written.

Only the collision part of SRDF is used: each ``<disable_collisions link1="a" link2="b"
reason="..."/>`` disables one link pair.  Other elements (groups, end effectors, virtual joints)
are read past.  Written files hold the robot name and the disabled pairs, one per line, sorted,
with MoveIt's reason names (``Adjacent``, ``Default``, ``Always``, ``Never``, ``User``); a
``Never`` pair's margin (the smallest distance the closest-approach search found) is a comment
beside it, which MoveIt ignores.

A matrix computed from a description with at least the default samples is written with a
*stamp*: a comment naming the algorithm's version and the SHA-256 of the description's text and
of the document without the stamp's line (:func:`stamp_matches`).  A stamped file is its own
verification: every pair it disables was decided by this code for that description, so
:mod:`bb_robot.collision.verify` need not search its pairs again.  Any edit of the file or the
description breaks the stamp.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import quoteattr

from bb_robot.collision.errors import SrdfError
from bb_robot.collision.matrix import ALGORITHM_VERSION, DEFAULT_SAMPLES, NEVER, USER, CollisionMatrix
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


#: The stamp's line (see the module docstring).
STAMP = re.compile(
    r"^<!-- bb-robot collisions verified: algorithm (?P<version>\d+), "
    r"description sha256 (?P<description>[0-9a-f]{64}), "
    r"document sha256 (?P<document>[0-9a-f]{64}) -->\n",
    re.MULTILINE,
)


def _sha256(text: str | bytes) -> str:
    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).hexdigest()


def srdf_text(matrix: CollisionMatrix, description: str | bytes | None = None) -> str:
    """The SRDF document of a matrix: the robot's name and one ``<disable_collisions>`` per pair.

    Args:
        matrix: the matrix; ``Never`` pairs with a margin get it as a comment beside them.
        description: the description the matrix was computed from; given, and the matrix computed
            with at least the default samples, the document is stamped (module docstring).

    Returns:
        The document.
    """
    lines = ['<?xml version="1.0" encoding="utf-8"?>']
    note = (
        f"samples={matrix.samples} seed={matrix.seed} algorithm={ALGORITHM_VERSION}"
        if matrix.samples
        else "read, not computed"
    )
    lines.append(f"<!-- bb-robot collisions: allowed-collision matrix ({note}) -->")
    lines.append(f"<robot name={quoteattr(matrix.robot)}>")
    for (first, second), reason in sorted(matrix.disabled.items()):
        line = f"  <disable_collisions link1={quoteattr(first)} link2={quoteattr(second)} reason={quoteattr(reason)}/>"
        margin = matrix.margins.get((first, second)) if reason == NEVER else None
        if margin is not None:
            line += f" <!-- margin {margin * 1000:.1f} mm -->"
        lines.append(line)
    lines.append("</robot>")
    text = "\n".join(lines) + "\n"
    if description is None or matrix.samples < DEFAULT_SAMPLES:
        return text
    stamp = (
        f"<!-- bb-robot collisions verified: algorithm {ALGORITHM_VERSION}, description sha256 "
        f"{_sha256(description)}, document sha256 {_sha256(text)} -->\n"
    )
    head, _, rest = text.partition("\n")
    return f"{head}\n{stamp}{rest}"


def stamp_matches(document: str | bytes, description: str | bytes) -> bool:
    """Whether an SRDF document carries a stamp of this algorithm for exactly this description and text.

    Args:
        document: the SRDF's text.
        description: the description's text.

    Returns:
        ``True`` when the stamp names the current algorithm, the description's SHA-256 and the
        SHA-256 of the document without the stamp's line.
    """
    text = document.decode("utf-8", "replace") if isinstance(document, bytes) else document
    found = STAMP.search(text)
    if found is None:
        return False
    rest = text[: found.start()] + text[found.end() :]
    return (
        found["version"] == str(ALGORITHM_VERSION)
        and found["description"] == _sha256(description)
        and found["document"] == _sha256(rest)
    )


def write_srdf(matrix: CollisionMatrix, path: str | os.PathLike[str], description: str | bytes | None = None) -> None:
    """Write :func:`srdf_text` of ``matrix`` (stamped for ``description`` when given) to ``path`` (created or replaced).

    Raises:
        SrdfError: the file cannot be written.
    """
    try:
        Path(path).write_text(srdf_text(matrix, description), encoding="utf-8")
    except OSError as error:
        raise SrdfError(str(path), f"cannot write: {error.strerror or error}") from None
