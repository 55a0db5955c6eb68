"""Robots for the collision tests: the Panda of example-robot-data (meshes and SRDF) and small analytic ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.robot_files import example_robot_data_urdfs


def panda_files() -> tuple[Path, Path, Path]:
    """``(urdf, srdf, share)``: the Panda of example-robot-data, its SRDF and the share directory its
    ``package://example-robot-data/...`` mesh URIs resolve in; skips where it is not installed."""
    for path in example_robot_data_urdfs():
        if path.as_posix().endswith("panda_description/urdf/panda.urdf"):
            share = path.parents[4]  # <share>/example-robot-data/robots/panda_description/urdf/panda.urdf
            return path, path.parents[1] / "srdf" / "panda.srdf", share
    pytest.skip("example-robot-data (scripts/setup installs it) is not installed")
    raise AssertionError  # unreachable


def two_bodies(base: str, mover: str, axis: str = "1 0 0") -> str:
    """URDF text: a fixed ``base`` geometry and a ``mover`` geometry on a prismatic joint along ``axis``.

    Args:
        base: the ``<geometry>`` body of the base link.
        mover: the ``<geometry>`` body of the moving link.
        axis: the prismatic joint's axis.
    """
    return f"""<robot name="two">
  <link name="base"><collision><geometry>{base}</geometry></collision></link>
  <link name="slider"/>
  <link name="mover"><collision><geometry>{mover}</geometry></collision></link>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="slider"/>
    <axis xyz="{axis}"/><limit lower="-5" upper="5" effort="1" velocity="1"/></joint>
  <joint name="turn" type="revolute"><parent link="slider"/><child link="mover"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""
