"""URDF (and xacro) parsing into the intermediate representation of :mod:`bb_robot.urdf.ir`.

Use :func:`parse_file` or :func:`parse_string`; every failure is a :class:`UrdfError`
(a :class:`bb_robot.errors.BbRobotError`) naming the file, line, element and attribute.
"""

from .errors import (
    DocumentTooLargeError,
    DuplicateNameError,
    EmptyDocumentError,
    InvalidValueError,
    MissingAttributeError,
    MissingElementError,
    NotUrdfError,
    UnknownJointTypeError,
    UnsafeXmlError,
    UrdfError,
    UrdfFileError,
    XacroError,
    XmlSyntaxError,
)
from .parser import parse_file, parse_string
from .xacro_loader import expand_xacro, is_xacro_path
from .xml_safe import MAX_DOCUMENT_BYTES

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "DocumentTooLargeError",
    "DuplicateNameError",
    "EmptyDocumentError",
    "InvalidValueError",
    "MissingAttributeError",
    "MissingElementError",
    "NotUrdfError",
    "UnknownJointTypeError",
    "UnsafeXmlError",
    "UrdfError",
    "UrdfFileError",
    "XacroError",
    "XmlSyntaxError",
    "expand_xacro",
    "is_xacro_path",
    "parse_file",
    "parse_string",
]
