"""The shared safe XML reader (:mod:`bb_robot.xmlsafe`) with the URDF parser's errors.

:func:`parse_xml` and :func:`read_document` are those of :mod:`bb_robot.xmlsafe.reader`,
except that a failure is the matching :class:`~bb_robot.urdf.errors.UrdfError` (with a
hint for URDF files), so ``except UrdfError`` catches it.  The limits are the reader's.
"""

from __future__ import annotations

import os

from bb_robot import xmlsafe
from bb_robot.xmlsafe import MAX_DEPTH, MAX_DOCUMENT_BYTES, Node
from bb_robot.xmlsafe.errors import FileProblem

from .errors import (
    DocumentTooLargeError,
    EmptyDocumentError,
    UnsafeXmlError,
    UrdfError,
    UrdfFileError,
    XmlSyntaxError,
)

__all__ = ["MAX_DEPTH", "MAX_DOCUMENT_BYTES", "Node", "as_urdf_error", "parse_xml", "read_document"]

_FILE_HINTS: dict[FileProblem, str | None] = {
    "missing": "Check the path (relative paths start at the current directory).",
    "directory": "Give the path of a .urdf file.",
    "permission": "Make the file readable by this user.",
    "unreadable": None,
}


def as_urdf_error(error: xmlsafe.XmlError) -> UrdfError:
    """Return the URDF parser's error for an error of the XML reader.

    Args:
        error: What :mod:`bb_robot.xmlsafe` raised.

    Returns:
        The :class:`UrdfError` of the same kind, location and problem, with URDF's hint.
    """
    match error:
        case xmlsafe.XmlFileError():
            return UrdfFileError(error.path, error.problem, hint=_FILE_HINTS[error.kind])
        case xmlsafe.DocumentTooLargeError():
            return DocumentTooLargeError(source=error.source, size=error.size, limit=error.limit)
        case xmlsafe.EmptyDocumentError():
            return EmptyDocumentError(source=error.source)
        case xmlsafe.XmlSyntaxError():
            assert error.line is not None and error.column is not None
            return XmlSyntaxError(error.reason, source=error.source, line=error.line, column=error.column)
        case xmlsafe.UnsafeXmlError():
            return UnsafeXmlError(error.construct, source=error.source, line=error.line)
    return UrdfError(error.problem, source=error.source, line=error.line, column=error.column, hint=error.hint)


def parse_xml(data: str | bytes, source: str | None = None, *, build: bool = True) -> Node | None:
    """Parse ``data`` with :func:`bb_robot.xmlsafe.parse_xml`.

    Args:
        data: The document, as text or as a file's bytes.
        source: Names the input in errors (``None``: a string).
        build: With ``False`` only the checks run and ``None`` is returned.

    Returns:
        The root element, or ``None`` when ``build`` is false.

    Raises:
        UrdfError: The reader's error as URDF's (:func:`as_urdf_error`): ``DocumentTooLargeError``,
            ``EmptyDocumentError``, ``UnsafeXmlError``, ``XmlSyntaxError``.
    """
    try:
        return xmlsafe.parse_xml(data, source, build=build)
    except xmlsafe.XmlError as error:
        raise as_urdf_error(error) from None


def read_document(path: str | os.PathLike[str]) -> bytes:
    """Read a file with :func:`bb_robot.xmlsafe.read_document`.

    Args:
        path: The file.

    Returns:
        Its bytes.

    Raises:
        UrdfFileError: The file is missing, a directory or unreadable.
        DocumentTooLargeError: The file is over the size limit.
    """
    try:
        return xmlsafe.read_document(path)
    except xmlsafe.XmlError as error:
        raise as_urdf_error(error) from None
