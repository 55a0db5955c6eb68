"""Errors of the safe XML reader, and the base the parsers' value errors share.

Each error carries ``source`` (the file, or ``None`` for a string), ``line`` and ``column``
(1-based, ``None`` when unknown), ``problem`` (what is wrong) and ``hint`` (what to do);
``str(error)`` puts them together, e.g.::

    arm.urdf:4:3: malformed XML: mismatched tag. Fix the XML at that position (...).

The URDF and SDF packages turn these into their own typed errors (with a hint for their
format), so a caller of those packages catches :class:`~bb_robot.urdf.errors.UrdfError`
or :class:`~bb_robot.sdf.errors.SdfError` as before.
"""

from __future__ import annotations

from typing import Literal

from bb_robot.errors import BbRobotError

STRING_SOURCE = "<string>"
"""How an input given as a string (no file) is named in messages."""


def where(source: str | None, line: int | None, column: int | None = None) -> str:
    """Format a location as compilers print it.

    Args:
        source: The file, or ``None`` for a string (printed as :data:`STRING_SOURCE`).
        line: 1-based line, or ``None`` when unknown.
        column: 1-based column, or ``None`` when unknown (ignored without a line).

    Returns:
        ``file:line:column``, ``file:line`` or ``file``.
    """
    text = source if source is not None else STRING_SOURCE
    if line is not None:
        text += f":{line}"
        if column is not None:
            text += f":{column}"
    return text


class XmlError(BbRobotError):
    """Base class of every error the safe XML reader raises."""

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.column = column
        self.hint = hint
        text = f"{where(source, line, column)}: {problem.rstrip('.')}."
        super().__init__(f"{text} {hint}" if hint else text)


FileProblem = Literal["missing", "directory", "permission", "unreadable"]


class XmlFileError(XmlError):
    """The file cannot be read: ``kind`` says why (missing, a directory, permission denied,
    another OS error); ``path`` is the file."""

    def __init__(self, path: str, problem: str, *, kind: FileProblem, hint: str | None = None) -> None:
        self.path = path
        self.kind: FileProblem = kind
        super().__init__(problem, source=path, hint=hint)


class DocumentTooLargeError(XmlError):
    """The input is larger than ``limit`` bytes (``size`` is what was found)."""

    def __init__(self, *, source: str | None, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(
            self.describe(size, limit),
            source=source,
            hint="A robot description is normally well under 1 MiB; check that this is the right file.",
        )

    @staticmethod
    def describe(size: int, limit: int) -> str:
        """The problem, for this error and the parsers' errors of the same kind."""
        return (
            f"the document is larger than the {limit // (1024 * 1024)} MiB limit "
            f"({'more than ' if size > limit else ''}{size} bytes)"
        )


class EmptyDocumentError(XmlError):
    """The input holds no XML element at all (empty, blanks or comments only)."""

    PROBLEM = "the document is empty (no XML element)"

    def __init__(self, *, source: str | None) -> None:
        super().__init__(self.PROBLEM, source=source, hint="Give an XML document.")


class XmlSyntaxError(XmlError):
    """The input is not well-formed XML: ``line`` and ``column`` locate the fault,
    ``reason`` is expat's description."""

    SYNTAX_HINT = "Fix the XML at that position (a tag not closed, a stray '<' or '&', a truncated file)."

    def __init__(self, reason: str, *, source: str | None, line: int, column: int) -> None:
        self.reason = reason
        super().__init__(self.describe(reason), source=source, line=line, column=column, hint=self.SYNTAX_HINT)

    @staticmethod
    def describe(reason: str) -> str:
        """The problem, for this error and the parsers' errors of the same kind."""
        return f"malformed XML: {reason}"


class UnsafeXmlError(XmlError):
    """The input uses a construct refused for safety (``construct``: DOCTYPE, ENTITY, ...)."""

    UNSAFE_HINT = "Remove the <!DOCTYPE ...> block and write the values out in full."

    def __init__(self, construct: str, *, source: str | None, line: int | None) -> None:
        self.construct = construct
        super().__init__(self.describe(construct), source=source, line=line, hint=self.UNSAFE_HINT)

    @staticmethod
    def describe(construct: str) -> str:
        """The problem, for this error and the parsers' errors of the same kind."""
        return (
            f"refused {construct}: document type definitions and entities are not allowed "
            "(they can expand without bound or read other files)"
        )


class InvalidValueError(BbRobotError):
    """Base of the URDF and SDF parsers' ``InvalidValueError``: a value written in a
    document that cannot be used (not a number, wrong count, NaN/inf, zero-length axis, ...).

    :class:`bb_robot.urdf.errors.InvalidValueError` and
    :class:`bb_robot.sdf.errors.InvalidValueError` derive from it (and from their package's
    base error), so ``except bb_robot.xmlsafe.InvalidValueError`` catches both.  Their
    ``value`` attribute is the text as written.  The XML reader itself never raises it.
    """

    value: str | None
