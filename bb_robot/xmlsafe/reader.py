"""A small, safe XML loader built on :mod:`xml.parsers.expat`.

It builds a tree of :class:`Node` objects that remember the source line of each element,
so that later errors and warnings can say where they come from.

Safety: a document type declaration (``<!DOCTYPE ...>``) is refused as soon as it
starts, so no entity is ever declared, expanded or fetched and no DTD is loaded (this
is what makes "billion laughs" and external-entity (XXE) documents harmless: they are
rejected before their first entity).  Entity, notation and external-entity callbacks
refuse too, as a second line of defence.  Inputs are capped at :data:`MAX_DOCUMENT_BYTES`
and element nesting at :data:`MAX_DEPTH`; the tree is built with an explicit stack,
never by recursion.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import BinaryIO
from xml.parsers import expat

from .errors import (
    DocumentTooLargeError,
    EmptyDocumentError,
    UnsafeXmlError,
    XmlFileError,
    XmlSyntaxError,
)

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""Largest input accepted (64 MiB): generous for any robot, small enough to stay bounded."""

MAX_DEPTH = 10_000
"""Deepest element nesting accepted."""

_NO_ELEMENTS = expat.errors.codes[expat.errors.XML_ERROR_NO_ELEMENTS]
_UNCLOSED = frozenset(
    expat.errors.codes[message]
    for message in (
        expat.errors.XML_ERROR_TAG_MISMATCH,
        expat.errors.XML_ERROR_NO_ELEMENTS,
        expat.errors.XML_ERROR_UNCLOSED_TOKEN,
    )
)


class Node:
    """One XML element: ``tag``, ``attrib``, child ``children``, ``text`` (its own
    character data, concatenated, not stripped) and 1-based source ``line``."""

    __slots__ = ("tag", "attrib", "children", "text", "line")

    def __init__(self, tag: str, attrib: dict[str, str], line: int) -> None:
        self.tag = tag
        self.attrib = attrib
        self.children: list[Node] = []
        self.text = ""
        self.line = line

    def __repr__(self) -> str:
        return f"<Node {self.tag} line {self.line} {self.attrib!r}>"


def _refuse(parser: expat.XMLParserType, construct: str, source: str | None) -> UnsafeXmlError:
    return UnsafeXmlError(construct, source=source, line=parser.CurrentLineNumber)


_DECLARATION = re.compile(r"\s+<\?xml[^>]*\?>")
_DECLARATION_BYTES = re.compile(rb"\s+<\?xml[^>]*\?>")


def _blank_leading_declaration(text: str) -> str:
    """Blank out an XML declaration preceded by whitespace (common in string literals),
    keeping newlines so that line numbers stay right.  expat would reject it otherwise."""
    match = _DECLARATION.match(text)
    if match is None:
        return text
    return re.sub(r"[^\n]", " ", match.group(0)) + text[match.end() :]


def _blank_leading_declaration_bytes(data: bytes) -> bytes:
    """:func:`_blank_leading_declaration` for a file's bytes, if it declares UTF-8 (or nothing)."""
    match = _DECLARATION_BYTES.match(data)
    if match is None:
        return data
    declaration = match.group(0).lower()
    if b"encoding" in declaration and b"utf-8" not in declaration and b"utf8" not in declaration:
        return data
    return re.sub(rb"[^\n]", b" ", match.group(0)) + data[match.end() :]


def parse_xml(data: str | bytes, source: str | None = None, *, build: bool = True) -> Node | None:
    """Parse ``data`` into a :class:`Node` tree and return its root element.

    Args:
        data: The document, as text or as the bytes of a file (its declared encoding is honoured).
        source: Names the input in errors (``None``: a string).
        build: With ``False`` only the checks run (well-formedness, safety, size).

    Returns:
        The root element, or ``None`` when ``build`` is false.

    Raises:
        DocumentTooLargeError: Over :data:`MAX_DOCUMENT_BYTES`.
        EmptyDocumentError: No element at all.
        UnsafeXmlError: A DOCTYPE, entity or notation declaration, or an external entity.
        XmlSyntaxError: Not well-formed XML (with line and column).
    """
    if len(data) > MAX_DOCUMENT_BYTES:
        raise DocumentTooLargeError(source=source, size=len(data), limit=MAX_DOCUMENT_BYTES)
    if isinstance(data, str):
        if not data or data.isspace():
            raise EmptyDocumentError(source=source)
        if data[:1].isspace():
            data = _blank_leading_declaration(data)
    else:
        if not data or data.isspace():
            raise EmptyDocumentError(source=source)
        if data[:1].isspace():
            data = _blank_leading_declaration_bytes(data)

    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def on_doctype(*_args: object) -> None:
        raise _refuse(parser, "<!DOCTYPE> declaration", source)

    def on_entity(*_args: object) -> None:
        raise _refuse(parser, "<!ENTITY> declaration", source)

    def on_notation(*_args: object) -> None:
        raise _refuse(parser, "<!NOTATION> declaration", source)

    def on_external(*_args: object) -> int:
        raise _refuse(parser, "external entity reference", source)

    parser.StartDoctypeDeclHandler = on_doctype
    parser.EntityDeclHandler = on_entity
    parser.UnparsedEntityDeclHandler = on_entity
    parser.NotationDeclHandler = on_notation
    parser.ExternalEntityRefHandler = on_external

    roots: list[Node] = []
    stack: list[Node] = []

    if build:
        push = stack.append
        pop = stack.pop

        def on_start(tag: str, attrib: dict[str, str]) -> None:
            node = Node(tag, attrib, parser.CurrentLineNumber)
            if stack:
                stack[-1].children.append(node)
                if len(stack) >= MAX_DEPTH:
                    raise XmlSyntaxError(
                        f"elements nested deeper than {MAX_DEPTH} levels",
                        source=source,
                        line=parser.CurrentLineNumber,
                        column=parser.CurrentColumnNumber + 1,
                    )
            else:
                roots.append(node)
            push(node)

        def on_end(_tag: str) -> None:
            pop()

        def on_text(text: str) -> None:
            if stack:
                node = stack[-1]
                node.text = node.text + text if node.text else text

        parser.StartElementHandler = on_start
        parser.EndElementHandler = on_end
        parser.CharacterDataHandler = on_text
    else:
        depth = [0]

        def on_start_check(_tag: str, _attrib: dict[str, str]) -> None:
            if not roots:
                roots.append(Node(_tag, {}, parser.CurrentLineNumber))
            depth[0] += 1
            if depth[0] > MAX_DEPTH:
                raise XmlSyntaxError(
                    f"elements nested deeper than {MAX_DEPTH} levels",
                    source=source,
                    line=parser.CurrentLineNumber,
                    column=parser.CurrentColumnNumber + 1,
                )

        def on_end_check(_tag: str) -> None:
            depth[0] -= 1

        parser.StartElementHandler = on_start_check
        parser.EndElementHandler = on_end_check

    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        if not roots and exc.code == _NO_ELEMENTS:
            raise EmptyDocumentError(source=source) from None
        reason = expat.errors.messages.get(exc.code, str(exc)) if exc.code else str(exc)
        if stack and exc.code in _UNCLOSED:
            reason += f" (<{stack[-1].tag}> opened at line {stack[-1].line} is not closed)"
        raise XmlSyntaxError(reason, source=source, line=exc.lineno, column=exc.offset + 1) from None
    finally:
        # the handlers and the parser refer to each other: break the cycle now
        parser.StartElementHandler = parser.EndElementHandler = parser.CharacterDataHandler = None
    if not roots:  # pragma: no cover - expat reports "no element found" first
        raise EmptyDocumentError(source=source)
    return roots[0] if build else None


def _read_capped(handle: BinaryIO) -> bytes:
    """Read at most ``MAX_DOCUMENT_BYTES + 1`` bytes without reserving that much up front
    (a regular file comes in one read of its size; pipes and devices in blocks)."""
    limit = MAX_DOCUMENT_BYTES + 1
    block = max(os.fstat(handle.fileno()).st_size + 1, 1 << 16)
    parts: list[bytes] = []
    total = 0
    while total < limit:
        part = handle.read(min(block, limit - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_document(path: str | os.PathLike[str]) -> bytes:
    """Read a file for parsing, at most :data:`MAX_DOCUMENT_BYTES`.

    Args:
        path: The file.

    Returns:
        Its bytes, for :func:`parse_xml`.

    Raises:
        XmlFileError: The file is missing, a directory or unreadable (``kind`` says which).
        DocumentTooLargeError: The file is over the size limit.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as handle:
            data = _read_capped(handle)
    except FileNotFoundError:
        raise XmlFileError(
            name,
            "no such file",
            kind="missing",
            hint="Check the path (relative paths start at the current directory).",
        ) from None
    except IsADirectoryError:
        raise XmlFileError(
            name, "this is a directory, not a file", kind="directory", hint="Give the path of a file."
        ) from None
    except PermissionError:
        raise XmlFileError(
            name, "permission denied", kind="permission", hint="Make the file readable by this user."
        ) from None
    except OSError as exc:
        raise XmlFileError(name, f"cannot be read: {exc.strerror or exc}", kind="unreadable") from None
    if len(data) > MAX_DOCUMENT_BYTES:
        size = len(data)
        try:
            size = Path(name).stat().st_size
        except OSError:
            pass
        raise DocumentTooLargeError(source=name, size=size, limit=MAX_DOCUMENT_BYTES)
    return data
