"""The shared safe XML reader: tree, line numbers, refusals, limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from bb_robot.errors import BbRobotError
from bb_robot.xmlsafe import reader as xml_safe
from bb_robot.xmlsafe.errors import (
    DocumentTooLargeError,
    EmptyDocumentError,
    UnsafeXmlError,
    XmlSyntaxError,
)
from bb_robot.xmlsafe.errors import XmlFileError as UrdfFileError
from bb_robot.xmlsafe.reader import Node, parse_xml, read_document

DOC = """<?xml version="1.0"?>
<robot name="r">
  <link name="a">
    <visual>
      <geometry><box size="1 2 3"/></geometry>
    </visual>
  </link>
  <transmission name="t"><type> Simple </type></transmission>
</robot>
"""


def test_tree_tags_attributes_children_and_lines() -> None:
    root = parse_xml(DOC, "doc.urdf")
    assert isinstance(root, Node)
    assert (root.tag, root.attrib, root.line) == ("robot", {"name": "r"}, 2)
    link, transmission = root.children
    assert (link.tag, link.attrib["name"], link.line) == ("link", "a", 3)
    visual = link.children[0]
    assert (visual.tag, visual.line) == ("visual", 4)
    box = visual.children[0].children[0]
    assert (box.tag, box.attrib, box.line, box.children) == ("box", {"size": "1 2 3"}, 5, [])
    assert transmission.line == 8
    assert transmission.children[0].text == " Simple "
    assert "line 2" in repr(root)


def test_entities_of_xml_itself_and_character_references_are_fine() -> None:
    root = parse_xml('<robot name="a&amp;b&#x41;&lt;"/>')
    assert root is not None and root.attrib["name"] == "a&bA<"


def test_bytes_with_a_declared_encoding() -> None:
    data = '<?xml version="1.0" encoding="ISO-8859-1"?><robot name="é"/>'.encode("latin-1")
    root = parse_xml(data)
    assert root is not None and root.attrib["name"] == "é"


def test_whitespace_before_the_declaration_is_tolerated_and_lines_stay_right() -> None:
    text = '\n\n  <?xml version="1.0"?>\n<robot name="r">\n<link name="a"/></robot>'
    root = parse_xml(text)
    assert root is not None and root.line == 4 and root.children[0].line == 5
    root = parse_xml(text.encode())
    assert root is not None and root.children[0].line == 5


def test_build_false_checks_only() -> None:
    assert parse_xml(DOC, build=False) is None
    with pytest.raises(UnsafeXmlError):
        parse_xml('<!DOCTYPE r [<!ENTITY a "b">]><r/>', build=False)
    with pytest.raises(XmlSyntaxError):
        parse_xml("<r><a></r>", build=False)


@pytest.mark.parametrize(
    "text",
    [
        '<?xml version="1.0"?>\n<!DOCTYPE robot>\n<robot name="r"/>',
        '<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY x "y">]>\n<robot name="&x;"/>',
        '<?xml version="1.0"?>\n<!DOCTYPE robot SYSTEM "http://example.invalid/r.dtd">\n<robot/>',
        '<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>\n<r/>',
    ],
    ids=["bare", "internal-entity", "external-dtd", "parameter-entity"],
)
def test_any_doctype_is_refused_with_its_line(text: str) -> None:
    with pytest.raises(UnsafeXmlError) as caught:
        parse_xml(text, "evil.urdf")
    error = caught.value
    assert isinstance(error, BbRobotError)
    assert error.line == 2 and error.source == "evil.urdf"
    assert error.construct == "<!DOCTYPE> declaration"
    assert str(error).startswith("evil.urdf:2: refused <!DOCTYPE> declaration")
    assert "Remove the <!DOCTYPE" in str(error)


@pytest.mark.timeout(30)  # a hang guard: expansion would take minutes and gigabytes
def test_billion_laughs_is_refused_before_expansion() -> None:
    entities = ['<!ENTITY lol "lol">'] + [
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)
    ]
    text = "<!DOCTYPE r [\n" + "\n".join(entities) + "\n]>\n<r>&lol9;</r>"
    with pytest.raises(UnsafeXmlError):
        parse_xml(text)


def test_undeclared_entity_is_a_syntax_error_not_an_expansion() -> None:
    with pytest.raises(XmlSyntaxError) as caught:
        parse_xml('<robot>\n<link name="&xxe;"/></robot>', "x.urdf")
    assert caught.value.line == 2
    assert "undefined entity" in str(caught.value)


@pytest.mark.parametrize("text", ["", "   \n\t ", '<?xml version="1.0"?>\n<!-- nothing -->\n'])
def test_empty_documents(text: str) -> None:
    with pytest.raises(EmptyDocumentError) as caught:
        parse_xml(text, "e.urdf")
    assert str(caught.value).startswith("e.urdf: the document is empty")
    with pytest.raises(EmptyDocumentError):
        parse_xml(text.encode())


def test_malformed_xml_gives_line_column_and_the_open_element() -> None:
    with pytest.raises(XmlSyntaxError) as caught:
        parse_xml('<robot name="r">\n  <link name="a">\n  <link name="b"/>\n</robot>\n', "m.urdf")
    error = caught.value
    assert (error.line, error.column) == (4, 3)
    assert error.reason.startswith("mismatched tag")
    assert "<link> opened at line 2 is not closed" in str(error)
    assert str(error).startswith("m.urdf:4:3: malformed XML")


def test_garbage_after_the_root_element() -> None:
    with pytest.raises(XmlSyntaxError) as caught:
        parse_xml("<robot/>\n<robot/>")
    assert caught.value.line == 2
    assert str(caught.value).startswith("<string>:2:1:")


def test_size_cap_on_strings_and_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(xml_safe, "MAX_DOCUMENT_BYTES", 1024 * 1024)
    big = "<robot>" + " " * (1024 * 1024) + "</robot>"
    with pytest.raises(DocumentTooLargeError) as caught:
        parse_xml(big, "big.urdf")
    assert caught.value.limit == 1024 * 1024 and caught.value.size == len(big)
    assert "1 MiB limit" in str(caught.value)
    path = tmp_path / "big.urdf"
    path.write_text(big)
    with pytest.raises(DocumentTooLargeError) as caught:
        read_document(path)
    assert caught.value.size == len(big) and caught.value.source == str(path)


def test_default_size_cap_is_generous() -> None:
    assert xml_safe.MAX_DOCUMENT_BYTES == 64 * 1024 * 1024


def test_depth_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xml_safe, "MAX_DEPTH", 50)
    deep = "<a>" * 60 + "</a>" * 60
    for build in (True, False):
        with pytest.raises(XmlSyntaxError, match="nested deeper than 50"):
            parse_xml(deep, build=build)


def test_deep_nesting_below_the_cap_needs_no_recursion() -> None:
    depth = 9000
    root = parse_xml("<a>" * depth + "</a>" * depth)
    node, seen = root, 0
    while node is not None:
        seen += 1
        node = node.children[0] if node.children else None
    assert seen == depth


def test_read_document_errors(tmp_path: Path) -> None:
    with pytest.raises(UrdfFileError) as caught:
        read_document(tmp_path / "nope.urdf")
    assert caught.value.path == str(tmp_path / "nope.urdf")
    assert "no such file" in str(caught.value)
    with pytest.raises(UrdfFileError, match="is a directory"):
        read_document(tmp_path)
    path = tmp_path / "ok.urdf"
    path.write_bytes(b"<robot/>")
    assert read_document(str(path)) == b"<robot/>"
