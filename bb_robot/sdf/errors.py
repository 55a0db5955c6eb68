"""Typed errors of the SDF loader.

Every error derives from :class:`SdfError` (itself a :class:`~bb_robot.errors.BbRobotError`)
and carries its context as attributes: ``source`` (the file, or ``None`` for a string),
``line`` (1-based, ``None`` when unknown), ``element`` (the XML tag), ``name`` (the
model, link, joint, frame or URI involved), ``problem`` (what is wrong) and ``hint``
(what to do).  ``str(error)`` puts them together, e.g.::

    ur3e.sdf:42: <joint> 'elbow_joint': <pose relative_to="nowhere"> names no frame of
    model 'ur3e'. Use one of: 'base_link', 'shoulder_link', ... (or leave relative_to out).

The subclasses add what a caller may branch on (``kind``, ``searched``, ``chain``,
``scopes``, ``cycle``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from bb_robot.errors import BbRobotError
from bb_robot.xmlsafe import errors as xml_errors
from bb_robot.xmlsafe.errors import STRING_SOURCE as STRING_SOURCE
from bb_robot.xmlsafe.errors import where as where


def listing(names: Sequence[str], limit: int = 12) -> str:
    """Quote and join names for a message.

    Args:
        names: The names.
        limit: How many to show before "... (N more)".

    Returns:
        ``'a', 'b', ...``, or ``(none)`` when there are none.
    """
    items = [f"'{n}'" for n in names]
    if len(items) > limit:
        return ", ".join(items[:limit]) + f", ... ({len(items) - limit} more)"
    return ", ".join(items) if items else "(none)"


class SdfError(BbRobotError):
    """Base class of every error the SDF loader raises."""

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        line: int | None = None,
        element: str | None = None,
        name: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.element = element
        self.name = name
        self.hint = hint
        super().__init__(self._compose())

    def _compose(self) -> str:
        text = where(self.source, self.line) + ": "
        subject = []
        if self.element:
            subject.append(f"<{self.element}>")
        if self.name is not None:
            subject.append(f"'{self.name}'")
        if subject:
            text += " ".join(subject) + ": "
        text += self.problem.rstrip(".") + "."
        if self.hint:
            text += " " + self.hint
        return text


class SdfFileError(SdfError):
    """The file cannot be used: missing, a directory, unreadable, too large or empty."""


class SdfSyntaxError(SdfError):
    """The input is not well-formed XML (``line`` locates the fault) or not an SDF document."""


class UnsafeSdfError(SdfSyntaxError):
    """The input uses a construct refused for safety: a DOCTYPE, entity or notation declaration."""


class SdfStructureError(SdfError):
    """A required element or attribute is missing, or an element is where SDFormat allows none."""


class InvalidValueError(SdfError, xml_errors.InvalidValueError):
    """A value that is not what SDFormat allows: not a number, wrong count, NaN/inf, zero axis,
    an unknown joint type or rotation format.  ``value`` is the text as written.  It is also a
    :class:`bb_robot.xmlsafe.InvalidValueError`, the base it shares with the URDF parser's error
    of that name."""

    def __init__(
        self,
        problem: str,
        *,
        value: str | None = None,
        source: str | None = None,
        line: int | None = None,
        element: str | None = None,
        name: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.value = value
        super().__init__(problem, source=source, line=line, element=element, name=name, hint=hint)


IncludeProblem = Literal["missing", "cycle", "network", "depth", "no_model", "bad_config"]


class IncludeError(SdfError):
    """An ``<include>`` that cannot be expanded.

    ``kind`` is ``"missing"`` (``searched`` lists every path looked for, one per directory
    searched: the including file's, ``resource_paths``, ``GZ_SIM_RESOURCE_PATH``, ``SDF_PATH``),
    ``"cycle"`` (``chain`` lists the files from the outermost to the repeated one),
    ``"network"`` (an http(s)/Fuel URI: nothing is fetched), ``"depth"`` (more than
    :data:`~bb_robot.sdf.document.MAX_INCLUDE_DEPTH` levels), ``"no_model"`` (the included
    file holds no ``<model>``) or ``"bad_config"`` (a model directory whose
    ``model.config`` is missing or names no file).  ``uri`` is the URI as written.
    """

    def __init__(
        self,
        problem: str,
        *,
        kind: IncludeProblem,
        uri: str,
        searched: Sequence[str] = (),
        chain: Sequence[str] = (),
        source: str | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.kind = kind
        self.uri = uri
        self.searched = tuple(searched)
        self.chain = tuple(chain)
        super().__init__(problem, source=source, line=line, element="include", name=uri, hint=hint)


ScopeProblem = Literal["unknown", "tie", "none", "not_kinematic"]


class ScopeError(SdfError):
    """The kinematic model cannot be selected.

    ``kind`` is ``"unknown"`` (``requested`` names no model; ``scopes`` lists every
    model's scope), ``"tie"`` (several candidates at the same, deepest, nesting level;
    ``scopes`` lists them), ``"none"`` (no model has both links and a movable joint;
    ``scopes`` lists the models there are) or ``"not_kinematic"`` (``requested``
    names a model without links).
    """

    def __init__(
        self,
        problem: str,
        *,
        kind: ScopeProblem,
        scopes: Sequence[str] = (),
        requested: str | None = None,
        source: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.kind = kind
        self.scopes = tuple(scopes)
        self.requested = requested
        super().__init__(problem, source=source, element="model" if requested else None, name=requested, hint=hint)


FrameProblem = Literal[
    "unknown_reference",
    "cycle",
    "duplicate_name",
    "reserved_name",
    "missing_link",
    "invalid_joint",
    "canonical_link",
    "placement_frame",
    "several",
]


class FrameError(SdfError):
    """A problem of names and frames, as libsdformat reports them (and more).

    ``kind``: ``"unknown_reference"`` (a ``relative_to``, ``attached_to``,
    ``expressed_in``, ``<parent>``, ``<child>`` naming nothing in scope),
    ``"cycle"`` (``cycle`` lists the frames in order, the first repeated at the end),
    ``"duplicate_name"``, ``"reserved_name"``, ``"missing_link"`` (a non-static model
    without any link), ``"invalid_joint"`` (child ``world``, parent equal to child,
    a joint attached to itself), ``"canonical_link"``, ``"placement_frame"``, or
    ``"several"``: then ``problems`` holds each one (the first also gives this error's
    file, line, element and name).
    """

    def __init__(
        self,
        problem: str,
        *,
        kind: FrameProblem,
        cycle: Sequence[str] = (),
        problems: Sequence[FrameError] = (),
        source: str | None = None,
        line: int | None = None,
        element: str | None = None,
        name: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.kind = kind
        self.cycle = tuple(cycle)
        self.problems: tuple[FrameError, ...] = tuple(problems)
        super().__init__(problem, source=source, line=line, element=element, name=name, hint=hint)

    @classmethod
    def combine(cls, problems: Sequence[FrameError]) -> FrameError:
        """Return the only problem, or one error listing all of them (``kind == "several"``)."""
        if len(problems) == 1:
            return problems[0]
        first = problems[0]
        lines = "\n".join(f"  - {p}" for p in problems)
        error = cls(
            f"{len(problems)} frame problems:\n{lines}\n",
            kind="several",
            problems=problems,
            source=first.source,
            line=first.line,
        )
        error.element, error.name = first.element, first.name
        return error


class UnsupportedSdfError(SdfError):
    """Valid SDFormat that this loader does not handle (e.g. SDF older than 1.4, a merge-include
    of a light)."""
