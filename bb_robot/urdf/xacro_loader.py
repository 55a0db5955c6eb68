"""Expand xacro files with the PyPI ``xacro`` package.

:func:`expand_xacro` returns the expanded XML text (the text a loader publishes as
``robot_description``).  Before xacro sees a file, the file and every file it includes
pass the same safety check as URDF documents (no DOCTYPE, no entities, size cap; see
:mod:`bb_robot.urdf.xml_safe`).  Note that xacro evaluates the ``${...}`` expressions of
the files it expands (in its restricted evaluator): expand only files you trust as code.

xacro keeps module-level state, so expansions are serialised by a lock.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import IO
from xml.dom.minidom import Document

from .errors import UrdfError, XacroError
from .xml_safe import parse_xml, read_document

__all__ = ["expand_xacro", "is_xacro_path"]

_LOCK = threading.Lock()


def is_xacro_path(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a xacro file (``*.xacro``, e.g. ``robot.urdf.xacro``)."""
    return os.fspath(path).lower().endswith(".xacro")


def _hint_for(detail: str) -> str:
    if "ament_index_python" in detail or "$(find" in detail:
        return (
            "$(find pkg) needs a ROS 2 environment (ament_index_python) where the package is "
            "installed; source your workspace, or replace $(find pkg) with a path."
        )
    if "Undefined substitution argument" in detail:
        return "Pass the missing argument in xacro_args, e.g. {'name': 'value'}, or give it a default."
    return "Fix the xacro file, or run `xacro FILE` to see xacro's own report."


_XacroInput = str | IO[str] | Document | None
"""What ``xacro.parse`` takes: XML text, an open file, a parsed document, or ``None`` (read ``filename``)."""


def expand_xacro(path: str | os.PathLike[str], args: Mapping[str, str] | None = None) -> str:
    """Expand a xacro file.

    Args:
        path: The ``.xacro`` file.
        args: xacro's ``name:=value`` arguments.

    Returns:
        The resulting XML text.

    Raises:
        UrdfFileError: ``path`` is missing or unreadable.
        UnsafeXmlError: ``path`` or an included file has a DOCTYPE or entity.
        XmlSyntaxError: ``path`` is not well-formed XML.
        XacroError: xacro is not installed, or failed (the message names the file).
    """
    name = os.fspath(path)
    parse_xml(read_document(name), name, build=False)
    try:
        import xacro
    except ImportError:
        raise XacroError(
            name,
            "the Python package 'xacro' is not installed",
            hint="Install it (pip install xacro), or expand the file yourself and load the URDF.",
        ) from None

    mappings = {str(key): str(value) for key, value in (args or {}).items()}
    with _LOCK:
        original_parse: Callable[[_XacroInput, str | None], Document] = xacro.parse

        def checked_parse(inp: _XacroInput, filename: str | None = None) -> Document:
            # xacro opens included files through parse(None, filename): check them first.
            if inp is None and filename is not None:
                included = os.path.join(xacro.root_dir, filename)
                try:
                    data = read_document(included)
                except UrdfError:
                    data = None  # let xacro report it (it knows about optional includes)
                if data is not None:
                    parse_xml(data, included, build=False)
            return original_parse(inp, filename)

        xacro.parse = checked_parse
        try:
            document = xacro.process_file(name, mappings=mappings)
            return str(document.toxml())
        except UrdfError:
            raise
        except xacro.XacroException as exc:
            detail = " ".join(str(exc).split())
            stack = getattr(xacro, "filestack", None) or []
            current = stack[-1] if stack and stack[-1] else None
            raise XacroError(name, detail, current_file=current, hint=_hint_for(detail)) from exc
        except Exception as exc:  # xacro lets many kinds through (ExpatError, OSError, ...)
            detail = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
            stack = getattr(xacro, "filestack", None) or []
            current = stack[-1] if stack and stack[-1] else None
            raise XacroError(name, detail, current_file=current, hint=_hint_for(detail)) from exc
        finally:
            xacro.parse = original_parse
            includes = getattr(xacro, "all_includes", None)
            if isinstance(includes, list):
                includes.clear()  # xacro appends every include here and never forgets
