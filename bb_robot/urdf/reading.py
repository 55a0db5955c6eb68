"""The base of the URDF parser's element readers: reporting (warnings, duplicate names,
skipped repeats) and values (numbers, vectors, origins), with errors that name the file,
line, element, attribute and owner.
"""

from __future__ import annotations

from collections.abc import Iterator
from math import isfinite

from . import ir
from .errors import DuplicateNameError, InvalidValueError, MissingAttributeError, where
from .xml_safe import Node

ZERO: ir.Vec3 = (0.0, 0.0, 0.0)
X_AXIS: ir.Vec3 = (1.0, 0.0, 0.0)
EXAMPLES = {
    "xyz": "0 0 0.1",
    "rpy": "0 0 1.5708",
    "size": "0.1 0.2 0.3",
    "scale": "1 1 1",
    "rgba": "0.8 0.8 0.8 1",
}


def finite_number(text: str) -> float | None:
    """``text`` as a finite number, or ``None``: not a number, NaN, infinite, or with ``_`` digit separators
    (Python's ``float`` accepts them; a URDF number has none)."""
    if "_" in text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if isfinite(value) else None


def owner_of(kind: str, name: str | None) -> str:
    return f"{kind} '{name}'" if name is not None else kind


class ElementReader:
    """One parse's source name and warnings, and the reading every element family shares."""

    def __init__(self, source: str | None) -> None:
        self.source = source
        self.warnings: list[str] = []

    # -- reporting ---------------------------------------------------------------------

    def claim(self, seen: dict[str, int], kind: str, name: str, line: int) -> None:
        """Record that ``name`` of ``kind`` is defined at ``line``; raise DuplicateNameError if it was before."""
        first = seen.get(name)
        if first is not None:
            raise DuplicateNameError(kind=kind, name=name, first_line=first, line=line, source=self.source)
        seen[name] = line

    def warn(self, line: int, text: str) -> None:
        """Add a warning ``file:line: text``."""
        self.warnings.append(f"{where(self.source, line)}: {text}")

    def tolerate(self, error: InvalidValueError | MissingAttributeError, node: Node, dropped: str) -> None:
        """Turn ``error``, inside an element the kinematics do not need, into a warning.

        Transmissions and materials are not needed to publish TF or to drive the joints, so a bad
        value inside one drops that element, not the robot (docs/urdf.md lists which is which).

        Args:
            error: The error reading the element raised.
            node: The element.
            dropped: What is dropped, for the message (e.g. ``"the transmission is dropped"``).
        """
        text = str(error)
        prefix = f"{where(self.source, error.line)}: "
        self.warn(error.line or node.line, f"{text.removeprefix(prefix).rstrip('.')}; {dropped}")

    def repeated(self, node: Node, owner: str) -> None:
        """Warn that a second ``node`` of its kind is ignored."""
        self.warn(node.line, f"{owner}: a second <{node.tag}> is ignored (only the first one counts)")

    def unknown(self, node: Node, owner: str, parent_tag: str) -> None:
        """Warn that the unknown element ``node`` under ``parent_tag`` is skipped."""
        self.warn(node.line, f"{owner}: unknown element <{node.tag}> in <{parent_tag}> is not supported; skipped")

    def children_once(self, node: Node, owner: str, once: frozenset[str]) -> Iterator[Node]:
        """The children of ``node``, except a second or later child of a tag in ``once``: that one is
        reported with :meth:`repeated` and skipped (URDF lets such an element stand once; the first counts)."""
        seen: set[str] = set()
        for child in node.children:
            tag = child.tag
            if tag in once:
                if tag in seen:
                    self.repeated(child, owner)
                    continue
                seen.add(tag)
            yield child

    def missing(self, node: Node, attribute: str, owner: str | None, hint: str | None = None) -> MissingAttributeError:
        """The error for a required ``attribute`` of ``node`` that is absent or empty."""
        return MissingAttributeError(
            element=node.tag,
            attribute=attribute,
            owner=owner,
            source=self.source,
            line=node.line,
            hint=hint,
        )

    def bad_numbers(
        self, node: Node, attribute: str | None, text: str, owner: str | None, count: int
    ) -> InvalidValueError:
        """The error for ``text`` that is not ``count`` finite numbers."""
        parts = text.split()
        expected = "a number" if count == 1 else f"{count} numbers"
        if count > 1 and len(parts) != count:
            problem = f"expected {count} numbers, got {len(parts)}"
        else:
            problem = f"expected {expected}"
            for part in parts or [text]:
                try:
                    value = float(part)
                except ValueError:
                    problem = f"'{part}' is not a number"
                    break
                if "_" in part:
                    problem = f"'{part}' is not a plain decimal number"
                    break
                if not isfinite(value):
                    problem = f"'{part}' is not a finite number (NaN and infinity are not allowed)"
                    break
        if attribute is None:
            hint = f"Write {expected} (a plain decimal) as the text of <{node.tag}>."
        elif count == 1:
            hint = f'Write {attribute} as a finite decimal number, e.g. {attribute}="0.5".'
        else:
            example = EXAMPLES.get(attribute, " ".join(["0"] * count))
            hint = (
                f"Write {attribute} as {count} finite decimal numbers separated by spaces, "
                f'e.g. {attribute}="{example}".'
            )
        return InvalidValueError(
            problem,
            element=node.tag,
            attribute=attribute,
            value=text,
            owner=owner,
            expected=expected,
            source=self.source,
            line=node.line,
            hint=hint,
        )

    # -- values ------------------------------------------------------------------------

    def vec3(self, node: Node, attribute: str, owner: str | None) -> ir.Vec3 | None:
        """Read ``attribute`` as 3 finite numbers.

        Returns:
            The vector, or ``None`` when the attribute is absent.

        Raises:
            InvalidValueError: Not 3 finite numbers.
        """
        text = node.attrib.get(attribute)
        if text is None:
            return None
        parts = text.split()
        if len(parts) == 3:
            x, y, z = (finite_number(part) for part in parts)
            if x is not None and y is not None and z is not None:
                return (x, y, z)
        raise self.bad_numbers(node, attribute, text, owner, 3)

    def number(self, node: Node, attribute: str, owner: str | None) -> float | None:
        """Read ``attribute`` as a finite number (``None`` when absent).

        Raises:
            InvalidValueError: Not a finite number.
        """
        text = node.attrib.get(attribute)
        if text is None:
            return None
        value = finite_number(text)
        if value is None:
            raise self.bad_numbers(node, attribute, text, owner, 1)
        return value

    def required_number(self, node: Node, attribute: str, owner: str | None) -> float:
        """Read ``attribute`` as a finite number.

        Raises:
            MissingAttributeError: The attribute is absent.
            InvalidValueError: Not a finite number.
        """
        value = self.number(node, attribute, owner)
        if value is None:
            raise self.missing(node, attribute, owner)
        return value

    def text_number(self, node: Node, owner: str | None) -> float:
        """Read the text of ``node`` as a finite number.

        Raises:
            InvalidValueError: Not a finite number.
        """
        text = node.text.strip()
        value = finite_number(text)
        if value is None:
            raise self.bad_numbers(node, None, text, owner, 1)
        return value

    def origin(self, node: Node, owner: str | None) -> ir.Origin:
        """Read an ``<origin>`` (a missing ``xyz`` or ``rpy`` is zeros)."""
        return ir.Origin(self.vec3(node, "xyz", owner) or ZERO, self.vec3(node, "rpy", owner) or ZERO)
