"""Typed errors of the URDF parser.

Every error derives from :class:`UrdfError` (itself a :class:`~bb_robot.errors.BbRobotError`)
and carries its context as attributes: ``source`` (the file, or ``None`` for a string),
``line`` and ``column`` (1-based, ``None`` when unknown), ``element`` (the XML tag),
``owner`` (the link, joint, ... the element belongs to, e.g. ``"joint 'ab'"``),
``attribute``, ``problem`` (what is wrong) and ``hint`` (what to do).  ``str(error)``
puts them together into one message, e.g.::

    arm.urdf:12: joint 'ab' <origin xyz="1 2">: expected 3 numbers, got 2.
    Write xyz as 3 decimal numbers separated by spaces, e.g. xyz="0 0 0.1".
"""

from __future__ import annotations

from collections.abc import Sequence

from bb_robot.errors import BbRobotError
from bb_robot.xmlsafe import errors as xml_errors
from bb_robot.xmlsafe.errors import STRING_SOURCE as STRING_SOURCE
from bb_robot.xmlsafe.errors import where as where


class UrdfError(BbRobotError):
    """Base class of every error the URDF parser raises."""

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        element: str | None = None,
        owner: str | None = None,
        attribute: str | None = None,
        value: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.column = column
        self.element = element
        self.owner = owner
        self.attribute = attribute
        self.value = value
        self.hint = hint
        super().__init__(self._compose())

    def _subject(self) -> str:
        """``joint 'ab' <origin xyz="1 2">``: the thing the problem is about."""
        parts: list[str] = []
        if self.owner:
            parts.append(self.owner)
        if self.element:
            tag = self.element
            if self.attribute is not None and self.value is not None:
                parts.append(f'<{tag} {self.attribute}="{_clip(self.value)}">')
            elif self.attribute is not None:
                parts.append(f"<{tag}> attribute '{self.attribute}'")
            else:
                parts.append(f"<{tag}>")
        return " ".join(parts)

    def _compose(self) -> str:
        text = where(self.source, self.line, self.column) + ": "
        subject = self._subject()
        if subject:
            text += subject + ": "
        text += self.problem.rstrip(".") + "."
        if self.hint:
            text += " " + self.hint
        return text


def _clip(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[: limit - 3] + "..."


class UrdfFileError(UrdfError):
    """The file cannot be used: missing, a directory, unreadable.  ``path`` is the file."""

    def __init__(self, path: str, problem: str, *, hint: str | None = None) -> None:
        self.path = path
        super().__init__(problem, source=path, hint=hint)


class DocumentTooLargeError(UrdfError):
    """The input is larger than ``limit`` bytes (``size`` is what was found)."""

    def __init__(self, *, source: str | None, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(
            xml_errors.DocumentTooLargeError.describe(size, limit),
            source=source,
            hint="A URDF is normally well under 1 MiB; check that this is the right file.",
        )


class EmptyDocumentError(UrdfError):
    """The input holds no XML element at all (empty, blanks or comments only)."""

    def __init__(self, *, source: str | None) -> None:
        super().__init__(
            xml_errors.EmptyDocumentError.PROBLEM,
            source=source,
            hint='Give a URDF file whose root element is <robot name="...">.',
        )


class XmlSyntaxError(UrdfError):
    """The input is not well-formed XML: ``line`` and ``column`` locate the fault,
    ``reason`` is expat's description."""

    def __init__(self, reason: str, *, source: str | None, line: int, column: int) -> None:
        self.reason = reason
        syntax = xml_errors.XmlSyntaxError
        super().__init__(syntax.describe(reason), source=source, line=line, column=column, hint=syntax.SYNTAX_HINT)


class UnsafeXmlError(UrdfError):
    """The input uses a construct refused for safety (``construct``: DOCTYPE, ENTITY, ...)."""

    def __init__(self, construct: str, *, source: str | None, line: int | None) -> None:
        self.construct = construct
        unsafe = xml_errors.UnsafeXmlError
        super().__init__(unsafe.describe(construct), source=source, line=line, hint=unsafe.UNSAFE_HINT)


class NotUrdfError(UrdfError):
    """The root element is not ``<robot>``; ``root_tag`` is what was found."""

    def __init__(self, root_tag: str, *, source: str | None, line: int | None) -> None:
        self.root_tag = root_tag
        hint = 'A URDF document\'s root element is <robot name="...">.'
        if root_tag == "sdf":
            hint += " This looks like an SDF file: load it with the SDF loader instead."
        super().__init__(
            f"the root element is <{root_tag}>, not <robot>",
            source=source,
            line=line,
            hint=hint,
        )


class MissingAttributeError(UrdfError):
    """A required attribute is absent or empty (``element``, ``attribute``, ``owner``)."""

    def __init__(
        self,
        *,
        element: str,
        attribute: str,
        owner: str | None,
        source: str | None,
        line: int | None,
        hint: str | None = None,
    ) -> None:
        super().__init__(
            f"the required attribute '{attribute}' is missing",
            source=source,
            line=line,
            element=element,
            owner=owner,
            attribute=attribute,
            hint=hint or f'Add {attribute}="..." to the <{element}> element.',
        )

    def _subject(self) -> str:
        head = f"{self.owner} " if self.owner else ""
        return f"{head}<{self.element}>"


class MissingElementError(UrdfError):
    """A required child element is absent: ``child`` under ``element`` (of ``owner``)."""

    def __init__(
        self,
        *,
        element: str,
        child: str,
        owner: str | None,
        source: str | None,
        line: int | None,
        hint: str | None = None,
    ) -> None:
        self.child = child
        super().__init__(
            f"the required child element <{child}> is missing",
            source=source,
            line=line,
            element=None if owner else element,
            owner=owner,
            hint=hint or f"Add a <{child}> element inside <{element}>.",
        )


class InvalidValueError(UrdfError, xml_errors.InvalidValueError):
    """A value cannot be used: not a number, wrong count, NaN/inf, zero-length axis.

    ``element``, ``attribute`` (``None`` for element text) and ``value`` say where,
    ``expected`` what was wanted.  It is also a :class:`bb_robot.xmlsafe.InvalidValueError`,
    the base it shares with the SDF parser's error of that name.
    """

    def __init__(
        self,
        problem: str,
        *,
        element: str,
        attribute: str | None,
        value: str,
        owner: str | None,
        expected: str,
        source: str | None,
        line: int | None,
        hint: str | None = None,
    ) -> None:
        self.expected = expected
        super().__init__(
            problem,
            source=source,
            line=line,
            element=element,
            owner=owner,
            attribute=attribute,
            value=value,
            hint=hint,
        )

    def _subject(self) -> str:
        if self.attribute is None and self.element:
            # a value written as element text: <mechanicalReduction>abc</mechanicalReduction>
            head = f"{self.owner} " if self.owner else ""
            value = _clip(self.value or "")
            return f"{head}<{self.element}>{value}</{self.element}>"
        return super()._subject()


class UnknownJointTypeError(UrdfError):
    """A joint's ``type`` is not one URDF defines; ``joint``, ``joint_type``, ``valid_types``."""

    def __init__(
        self,
        *,
        joint: str,
        joint_type: str,
        valid_types: Sequence[str],
        source: str | None,
        line: int | None,
    ) -> None:
        self.joint = joint
        self.joint_type = joint_type
        self.valid_types = tuple(valid_types)
        super().__init__(
            f"unknown joint type '{joint_type}'",
            source=source,
            line=line,
            element="joint",
            owner=f"joint '{joint}'",
            attribute="type",
            value=joint_type,
            hint="Use one of: " + ", ".join(self.valid_types) + ".",
        )

    def _subject(self) -> str:
        return f"joint '{self.joint}'"


class DuplicateNameError(UrdfError):
    """Two elements of one ``kind`` (link, joint, transmission) share ``name``.

    ``first_line`` is the first definition, ``line`` the second.
    """

    def __init__(
        self,
        *,
        kind: str,
        name: str,
        first_line: int | None,
        line: int | None,
        source: str | None,
    ) -> None:
        self.kind = kind
        self.name = name
        self.first_line = first_line
        first = f"line {first_line}" if first_line is not None else "earlier"
        second = f"line {line}" if line is not None else "later"
        super().__init__(
            f"duplicate {kind} name '{name}': defined at {first} and again at {second}",
            source=source,
            line=line,
            hint=f"Give every {kind} a unique name (rename or remove one of them).",
        )


class XacroError(UrdfError):
    """xacro could not expand ``path``; ``detail`` is xacro's message, ``current_file`` the
    file xacro was in (an included file, or ``path`` itself)."""

    def __init__(
        self,
        path: str,
        detail: str,
        *,
        current_file: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.path = path
        self.detail = detail
        self.current_file = current_file
        problem = f"xacro expansion failed: {detail}"
        if current_file and current_file != path:
            problem += f" (in included file {current_file})"
        super().__init__(problem, source=path, hint=hint)
