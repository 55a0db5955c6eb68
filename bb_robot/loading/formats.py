"""The format rule: which loader reads a file.

The root element decides: ``<robot>`` is URDF, or xacro when the file name ends in ``.xacro``
or the document has an element in the xacro namespace (``http://www.ros.org/wiki/xacro``);
``<sdf>`` is SDF (a model or a world).  Only when there is no ``<robot>`` or ``<sdf>`` root (an
empty file, text that is not XML, another root element) does the name decide: ``.sdf`` and
``.world`` are SDF, ``.xacro`` xacro, anything else URDF, so that the loader of that format
says what is wrong.  Comments, the XML declaration and a DOCTYPE before the root are skipped;
the root's name is compared without regard to case.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Final, Literal

from bb_robot.errors import BbRobotError

#: What a file holds: URDF, xacro (URDF to expand first), SDF (a model or a world).
Format = Literal["urdf", "xacro", "sdf"]

#: How much of a file is read to find its root element.
SNIFF_BYTES: Final = 64 * 1024
#: The namespaces xacro answers to (the wiki moved; files use both).
XACRO_NAMESPACES: Final = ("http://www.ros.org/wiki/xacro", "http://ros.org/wiki/xacro")

_SDF_SUFFIXES: Final = (".sdf", ".world")
_SKIPPED = re.compile(rb"<!--.*?-->|<\?.*?\?>", re.DOTALL)
_ROOT = re.compile(rb"<\s*([A-Za-z_][\w.:-]*)([^>]*)>?")
_XMLNS = re.compile(rb"""xmlns:([A-Za-z_][\w.-]*)\s*=\s*["']([^"']*)["']""")


class LoadError(BbRobotError):
    """A file or text that cannot be loaded; ``str(error)`` names it and says why."""


class ModelFileError(LoadError):
    """The file cannot be read at all (missing, a directory, not a regular file, unreadable).

    Args:
        path: the file as it was named.
        problem: what is wrong with it (``"no such file"``, ...).
    """

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


def root_element(data: bytes) -> str | None:
    """The name of the root element of an XML text, lower-cased, or ``None`` when there is none.

    Args:
        data: the start of the document (:data:`SNIFF_BYTES` are enough).
    """
    match = _ROOT.search(_SKIPPED.sub(b"", data[:SNIFF_BYTES]))
    return match.group(1).decode("ascii", "replace").lower() if match else None


def uses_xacro(data: bytes) -> bool:
    """Whether a ``<robot>`` document has an element in the xacro namespace.

    A URDF written out by xacro often still declares the namespace on its root; it is URDF
    unless an element uses the prefix.

    Args:
        data: the whole document.
    """
    match = _ROOT.search(_SKIPPED.sub(b"", data[:SNIFF_BYTES]))
    if match is None:
        return False
    prefixes = [p for p, uri in _XMLNS.findall(match.group(2)) if uri.decode("ascii", "replace") in XACRO_NAMESPACES]
    return any(re.search(rb"<\s*" + re.escape(prefix) + rb":", data) for prefix in prefixes)


def format_from(name: str | os.PathLike[str], head: bytes, data: bytes | None = None) -> Format:
    """The format of a document by the rule of this module.

    Args:
        name: the file's name (its extension is the fallback).
        head: the start of the document (at least :data:`SNIFF_BYTES`, or all of it).
        data: the whole document, to look for xacro elements in a ``<robot>`` that declares the
            xacro namespace; ``None``: ``head`` only.

    Returns:
        ``"urdf"``, ``"xacro"`` or ``"sdf"``.
    """
    lowered = os.fspath(name).lower()
    root = root_element(head)
    if root == "sdf":
        return "sdf"
    if root == "robot":
        return "xacro" if lowered.endswith(".xacro") or uses_xacro(data if data is not None else head) else "urdf"
    if lowered.endswith(_SDF_SUFFIXES):
        return "sdf"
    return "xacro" if lowered.endswith(".xacro") else "urdf"


def read_head(path: str | os.PathLike[str]) -> bytes:
    """The first :data:`SNIFF_BYTES` of a regular file.

    Raises:
        ModelFileError: the path is missing, a directory or not a regular file, or cannot be read.
    """
    name = os.fspath(path)
    try:
        mode = Path(name).stat().st_mode
    except FileNotFoundError:
        raise ModelFileError(name, "no such file") from None
    except OSError as error:
        raise ModelFileError(name, f"cannot be read ({error.strerror or error})") from None
    if stat.S_ISDIR(mode):
        raise ModelFileError(name, "is a directory, not a robot description file")
    if not stat.S_ISREG(mode):
        raise ModelFileError(name, "is not a regular file")
    try:
        with open(name, "rb") as handle:
            return handle.read(SNIFF_BYTES)
    except OSError as error:
        raise ModelFileError(name, f"cannot be read ({error.strerror or error})") from None


def detect_format(path: str | os.PathLike[str]) -> Format:
    """The format of the file at ``path`` (see the module docstring).

    Raises:
        ModelFileError: the file cannot be read.
    """
    head = read_head(path)
    data = head
    if len(head) == SNIFF_BYTES and root_element(head) == "robot":
        data = _read_all(path)
    return format_from(path, head, data)


def _read_all(path: str | os.PathLike[str]) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ModelFileError(os.fspath(path), f"cannot be read ({error.strerror or error})") from None
