"""The safe XML reader the URDF and SDF parsers share (below both; they import it, not each other).

:func:`parse_xml` builds a tree of :class:`Node` values that remember their source line;
:func:`read_document` reads a file with a size cap.  Every failure is an :class:`XmlError`
(a :class:`~bb_robot.errors.BbRobotError`); the parsers turn it into their own error types.
:class:`InvalidValueError` is the base of both parsers' value errors.
"""

from .errors import (
    STRING_SOURCE,
    DocumentTooLargeError,
    EmptyDocumentError,
    InvalidValueError,
    UnsafeXmlError,
    XmlError,
    XmlFileError,
    XmlSyntaxError,
    where,
)
from .reader import MAX_DEPTH, MAX_DOCUMENT_BYTES, Node, parse_xml, read_document

__all__ = [
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "STRING_SOURCE",
    "DocumentTooLargeError",
    "EmptyDocumentError",
    "InvalidValueError",
    "Node",
    "UnsafeXmlError",
    "XmlError",
    "XmlFileError",
    "XmlSyntaxError",
    "parse_xml",
    "read_document",
    "where",
]
