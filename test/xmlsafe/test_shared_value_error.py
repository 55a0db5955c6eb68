"""One InvalidValueError concept: the URDF and SDF parsers' errors of that name share a base."""

from __future__ import annotations

import pytest

from bb_robot import xmlsafe
from bb_robot.errors import BbRobotError
from bb_robot.sdf import read_string
from bb_robot.sdf.errors import InvalidValueError as SdfInvalidValueError
from bb_robot.sdf.errors import SdfError
from bb_robot.urdf import parse_string
from bb_robot.urdf.errors import InvalidValueError as UrdfInvalidValueError
from bb_robot.urdf.errors import UrdfError


def test_a_bad_urdf_value_is_caught_by_the_shared_base_and_by_the_urdf_names() -> None:
    text = '<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="fixed">'
    text += '<parent link="a"/><child link="b"/><origin xyz="0 nan 0"/></joint></robot>'
    with pytest.raises(xmlsafe.InvalidValueError) as caught:
        parse_string(text, source="r.urdf")
    error = caught.value
    assert isinstance(error, UrdfInvalidValueError) and isinstance(error, UrdfError)
    assert not isinstance(error, SdfError)
    assert error.value == "0 nan 0"
    assert str(error).startswith("r.urdf:1: joint 'j' <origin xyz=\"0 nan 0\">")


def test_a_bad_sdf_value_is_caught_by_the_shared_base_and_by_the_sdf_names() -> None:
    text = '<sdf version="1.9"><model name="m">\n<link name="a"><pose>0 0 x 0 0 0</pose></link></model></sdf>'
    with pytest.raises(xmlsafe.InvalidValueError) as caught:
        read_string(text, source="m.sdf")
    error = caught.value
    assert isinstance(error, SdfInvalidValueError) and isinstance(error, SdfError)
    assert not isinstance(error, UrdfError)
    assert error.value == "x"
    assert str(error).startswith("m.sdf:2: <link> 'a': <pose> value 'x' is not a number")


def test_the_shared_errors_are_bb_robot_errors() -> None:
    for cls in (xmlsafe.XmlError, xmlsafe.InvalidValueError, xmlsafe.XmlFileError, xmlsafe.UnsafeXmlError):
        assert issubclass(cls, BbRobotError)
