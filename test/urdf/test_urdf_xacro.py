"""xacro files: expansion with PyPI xacro, arguments, safety checks, wrapped errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bb_robot.urdf import (
    UnsafeXmlError,
    UrdfFileError,
    XacroError,
    XmlSyntaxError,
    expand_xacro,
    ir,
    is_xacro_path,
    parse_file,
    parse_string,
)

xacro = pytest.importorskip("xacro", reason="PyPI xacro is not installed (pip install xacro)")

ARM = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="arm">
  <xacro:arg name="prefix" default=""/>
  <xacro:arg name="segments_effort" default="10"/>
  <xacro:property name="segment_length" value="0.5"/>
  <xacro:macro name="segment" params="index parent">
    <link name="$(arg prefix)link${index}">
      <visual><geometry><cylinder radius="0.05" length="${segment_length}"/></geometry></visual>
    </link>
    <joint name="$(arg prefix)joint${index}" type="revolute">
      <parent link="$(arg prefix)${parent}"/>
      <child link="$(arg prefix)link${index}"/>
      <origin xyz="0 0 ${segment_length * index}" rpy="0 0 0"/>
      <axis xyz="0 0 1"/>
      <limit lower="${-pi/2}" upper="${pi/2}" effort="$(arg segments_effort)" velocity="1"/>
    </joint>
  </xacro:macro>
  <link name="$(arg prefix)base"/>
  <xacro:segment index="1" parent="base"/>
  <xacro:segment index="2" parent="link1"/>
</robot>
"""


@pytest.fixture
def arm_xacro(tmp_path: Path) -> Path:
    path = tmp_path / "arm.urdf.xacro"
    path.write_text(ARM)
    return path


def test_is_xacro_path() -> None:
    assert is_xacro_path("robot.urdf.xacro") and is_xacro_path(Path("r.XACRO"))
    assert not is_xacro_path("robot.urdf") and not is_xacro_path("xacro.urdf")


def test_parse_xacro_with_defaults(arm_xacro: Path) -> None:
    result = parse_file(arm_xacro)
    assert result.name == "arm"
    assert result.source == str(arm_xacro)
    assert [link.name for link in result.links] == ["base", "link1", "link2"]
    assert [(j.name, j.parent, j.child) for j in result.joints] == [
        ("joint1", "base", "link1"),
        ("joint2", "link1", "link2"),
    ]
    assert result.joints[1].origin == ir.Origin((0.0, 0.0, 1.0), (0.0, 0.0, 0.0))
    limit = result.joints[0].limit
    assert limit is not None
    assert limit.lower == pytest.approx(-1.5707963267948966) and limit.effort == 10.0
    visual = result.links[1].visual
    assert visual is not None and visual.geometry == ir.Cylinder(radius=0.05, length=0.5)
    assert result.warnings == []


def test_parse_xacro_with_arguments(arm_xacro: Path) -> None:
    result = parse_file(arm_xacro, xacro_args={"prefix": "left_", "segments_effort": "42.5"})
    assert [link.name for link in result.links] == ["left_base", "left_link1", "left_link2"]
    assert [(j.parent, j.child) for j in result.joints] == [
        ("left_base", "left_link1"),
        ("left_link1", "left_link2"),
    ]
    assert all(j.limit is not None and j.limit.effort == 42.5 for j in result.joints)


def test_expand_xacro_returns_the_text_that_parses_the_same(arm_xacro: Path) -> None:
    text = expand_xacro(arm_xacro, {"prefix": "r_"})
    assert isinstance(text, str)
    assert text.startswith("<?xml") and '<link name="r_base"/>' in text and "xacro:" not in text
    from_text = parse_string(text, source=arm_xacro)
    from_file = parse_file(arm_xacro, xacro_args={"prefix": "r_"})
    assert from_text == from_file


def test_missing_argument_is_a_xacro_error_naming_file_and_argument(tmp_path: Path) -> None:
    path = tmp_path / "needs_arg.xacro"
    path.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="$(arg robot_name)"/>')
    with pytest.raises(XacroError) as caught:
        parse_file(path)
    error = caught.value
    assert error.path == str(path) and error.source == str(path)
    assert "robot_name" in error.detail
    assert str(error).startswith(f"{path}: xacro expansion failed: ")
    assert "xacro_args" in str(error)  # says what to do


def test_bad_expression_is_a_xacro_error(tmp_path: Path) -> None:
    path = tmp_path / "expr.xacro"
    path.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r"><link name="${1/0}"/></robot>')
    with pytest.raises(XacroError, match="division by zero"):
        parse_file(path)


def test_missing_include_names_the_included_file(tmp_path: Path) -> None:
    path = tmp_path / "top.xacro"
    path.write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r"><xacro:include filename="nowhere.xacro"/></robot>'
    )
    with pytest.raises(XacroError) as caught:
        parse_file(path)
    assert "nowhere.xacro" in str(caught.value)


def test_optional_missing_include_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "top.xacro"
    path.write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">'
        '<xacro:include filename="nowhere.xacro" optional="true"/><link name="a"/></robot>'
    )
    assert [link.name for link in parse_file(path).links] == ["a"]


def test_includes_are_expanded(tmp_path: Path) -> None:
    (tmp_path / "part.xacro").write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:macro name="part" params="n"><link name="${n}"/></xacro:macro></robot>'
    )
    path = tmp_path / "top.xacro"
    path.write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">'
        '<xacro:include filename="part.xacro"/><xacro:part n="p1"/></robot>'
    )
    assert [link.name for link in parse_file(path).links] == ["p1"]


def test_doctype_in_the_xacro_is_refused_before_xacro_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "evil.urdf.xacro"
    path.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="&x;"/>'
    )

    def must_not_run(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("xacro must not see an unsafe file")

    monkeypatch.setattr(xacro, "process_file", must_not_run)
    with pytest.raises(UnsafeXmlError) as caught:
        expand_xacro(path)
    assert caught.value.source == str(path) and caught.value.line == 2


def test_doctype_in_an_included_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "evil.xacro").write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="&x;"/></robot>'
    )
    path = tmp_path / "top.xacro"
    path.write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r"><xacro:include filename="evil.xacro"/></robot>'
    )
    original = xacro.parse
    with pytest.raises(UnsafeXmlError) as caught:
        parse_file(path)
    assert caught.value.source == str(tmp_path / "evil.xacro")
    assert "root:" not in str(caught.value)
    assert xacro.parse is original  # the check is removed again


def test_malformed_xacro_is_an_xml_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.xacro"
    path.write_text('<robot name="r">\n<link name="a">\n</robot>')
    with pytest.raises(XmlSyntaxError) as caught:
        parse_file(path)
    assert caught.value.source == str(path) and caught.value.line == 3


def test_missing_xacro_file(tmp_path: Path) -> None:
    with pytest.raises(UrdfFileError, match="no such file"):
        parse_file(tmp_path / "absent.urdf.xacro")


def test_errors_in_the_expanded_urdf_name_the_xacro_output(tmp_path: Path) -> None:
    path = tmp_path / "bad.xacro"
    path.write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">\n'
        '<xacro:property name="z" value="nope"/>\n'
        '<link name="a"/><link name="b"/>\n'
        '<joint name="j" type="fixed"><parent link="a"/><child link="b"/>'
        '<origin xyz="0 0 ${z}"/></joint>\n</robot>'
    )
    with pytest.raises(Exception) as caught:
        parse_file(path)
    assert str(caught.value).startswith(f"{path} (xacro output):")
    assert "joint 'j' <origin xyz=\"0 0 nope\">" in str(caught.value)


def test_xacro_not_installed(arm_xacro: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xacro", None)
    with pytest.raises(XacroError) as caught:
        expand_xacro(arm_xacro)
    assert "'xacro' is not installed" in str(caught.value)
    assert "pip install xacro" in str(caught.value)


def test_repeated_expansions_do_not_accumulate_state(tmp_path: Path) -> None:
    (tmp_path / "part.xacro").write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"/>')
    path = tmp_path / "top.xacro"
    path.write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">'
        '<xacro:include filename="part.xacro"/><link name="a"/></robot>'
    )
    for _ in range(3):
        assert parse_file(path).links[0].name == "a"
    assert xacro.all_includes == []
