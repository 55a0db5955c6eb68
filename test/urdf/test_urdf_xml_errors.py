"""The URDF parser's view of the shared XML reader: its errors become URDF's, with URDF's hints."""

from __future__ import annotations

from pathlib import Path

import pytest

from bb_robot import xmlsafe
from bb_robot.urdf import parse_string
from bb_robot.urdf.errors import (
    DocumentTooLargeError,
    EmptyDocumentError,
    UnsafeXmlError,
    UrdfError,
    UrdfFileError,
    XmlSyntaxError,
)
from bb_robot.urdf.xml_safe import parse_xml, read_document


def test_malformed_xml_is_a_urdf_syntax_error_with_line_and_column() -> None:
    with pytest.raises(XmlSyntaxError) as caught:
        parse_string('<robot name="r">\n  <link name="a">\n</robot>\n', source="m.urdf")
    error = caught.value
    assert isinstance(error, UrdfError) and not isinstance(error, xmlsafe.XmlError)
    assert (error.source, error.line, error.column) == ("m.urdf", 3, 3)
    assert error.reason.startswith("mismatched tag")
    assert str(error).startswith("m.urdf:3:3: malformed XML: mismatched tag")


def test_doctype_is_a_urdf_unsafe_error() -> None:
    with pytest.raises(UnsafeXmlError) as caught:
        parse_xml('<?xml version="1.0"?>\n<!DOCTYPE robot>\n<robot name="r"/>', "evil.urdf")
    assert (caught.value.line, caught.value.construct) == (2, "<!DOCTYPE> declaration")
    assert "Remove the <!DOCTYPE" in str(caught.value)


def test_empty_document_names_the_urdf_root() -> None:
    with pytest.raises(EmptyDocumentError) as caught:
        parse_xml("  \n", "e.urdf")
    assert str(caught.value) == (
        'e.urdf: the document is empty (no XML element). Give a URDF file whose root element is <robot name="...">.'
    )


def test_file_errors_keep_urdf_hints(tmp_path: Path) -> None:
    with pytest.raises(UrdfFileError) as caught:
        read_document(tmp_path)
    assert caught.value.path == str(tmp_path)
    assert str(caught.value).endswith("this is a directory, not a file. Give the path of a .urdf file.")
    with pytest.raises(UrdfFileError, match="no such file. Check the path"):
        read_document(tmp_path / "missing.urdf")


def test_too_large_keeps_size_and_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xmlsafe.reader, "MAX_DOCUMENT_BYTES", 1024 * 1024)
    text = "<robot>" + " " * (1024 * 1024) + "</robot>"
    with pytest.raises(DocumentTooLargeError) as caught:
        parse_xml(text, "big.urdf")
    assert (caught.value.size, caught.value.limit) == (len(text), 1024 * 1024)
    assert "A URDF is normally well under 1 MiB" in str(caught.value)
