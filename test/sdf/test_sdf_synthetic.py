"""The synthetic SDF cases of the corpus, as ``synthetic/EXPECTED.md`` states them.

Each case has one test here checking the typed result (error class and fields, or what loads);
``test_sdf_corpus.py`` checks every corpus file's message too, ``test_sdf_serial.py`` the serial
models of the files that load.

- ``sdf_x_axis_arm.sdf``: axes along x and y; strict (the default for SDF) → ``OffAxisJointError``
  naming each joint and its axis; normalising (``strict=False``) → loads.
- ``sdf_z_axis_via_rotation.sdf``: j1 +z in a joint frame turned 90° about y; j2's axis given as
  model-frame x, which is j2's +z only once ``expressed_in`` is resolved: passes strict; the same
  file without ``expressed_in`` does not.
- ``sdf_include_cycle.sdf``: ``model://self_include`` includes itself → ``IncludeError`` (cycle).
- ``sdf_include_missing.sdf``: the include cannot be resolved → ``IncludeError`` (missing).
- ``sdf_world_two_ur3e_includes.sdf``: two instances of the real UR3e model through ``model://``;
  with a scope each loads; without one → ``ScopeError`` (tie) listing both scopes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.robots import UR3E_JOINTS

from bb_robot.model.errors import OffAxisJointError
from bb_robot.sdf import IncludeError, ScopeError
from bb_robot.sdf.loader import load_from_file


@pytest.fixture
def synthetic(corpus_dir: Path) -> Path:
    return corpus_dir / "synthetic"


def test_x_axis_arm_strict_names_each_joint_and_its_axis(synthetic: Path) -> None:
    with pytest.raises(OffAxisJointError) as caught:
        load_from_file(synthetic / "sdf_x_axis_arm.sdf")
    error = caught.value
    assert error.robot == "x_axis_arm"
    assert error.axes == {"j1": (1.0, 0.0, 0.0), "j2": (0.0, 1.0, 0.0)}
    message = str(error)
    assert "joint 'j1' acts about (1, 0, 0)" in message
    assert "joint 'j2' acts about (0, 1, 0)" in message
    assert "strict=False" in message
    # Every error names the file involved.
    assert error.source == str(synthetic / "sdf_x_axis_arm.sdf")
    assert message.startswith(f"{synthetic / 'sdf_x_axis_arm.sdf'}: robot 'x_axis_arm'")


def test_x_axis_arm_loads_when_normalising(synthetic: Path) -> None:
    result = load_from_file(synthetic / "sdf_x_axis_arm.sdf", strict=False)
    serial = result.serial
    assert serial is not None and serial.joint_names == ("j1", "j2") and serial.actuations == ("RZ", "RZ")
    # each joint frame's +z is the SDF axis: j1 along x (its frame), j2 along the model's y
    poses = serial.forward(np.zeros(2))
    np.testing.assert_allclose(poses.joints[0][:3, 2], (1.0, 0.0, 0.0), atol=1e-15)
    np.testing.assert_allclose(poses.joints[1][:3, 2], (0.0, 1.0, 0.0), atol=1e-15)
    np.testing.assert_allclose(poses.end_effector[:3, 3], (0.0, 0.0, 0.5), atol=1e-15)


def test_z_axis_via_rotation_passes_strict_because_expressed_in_is_resolved(synthetic: Path, tmp_path: Path) -> None:
    path = synthetic / "sdf_z_axis_via_rotation.sdf"
    result = load_from_file(path)
    assert result.serial is not None and result.serial.joint_names == ("j1", "j2")
    graph = result.frames
    np.testing.assert_allclose(graph.axis_in_joint("z_axis_rotated::j1"), (0.0, 0.0, 1.0), atol=1e-15)
    np.testing.assert_allclose(graph.axis_in_joint("z_axis_rotated::j2"), (0.0, 0.0, 1.0), atol=1e-15)
    # j1's +z, turned 90° about y, is the model's x, about which both joints act at zero
    for joint in result.serial.forward(np.zeros(2)).joints:
        np.testing.assert_allclose(joint[:3, 2], (1.0, 0.0, 0.0), atol=1e-15)
    # read in j2's own frame (expressed_in ignored, as the original did), x is not +z
    text = path.read_text()
    assert text.count(' expressed_in="__model__"') == 1
    ignored = tmp_path / "ignored.sdf"
    ignored.write_text(text.replace(' expressed_in="__model__"', ""))
    with pytest.raises(OffAxisJointError) as caught:
        load_from_file(ignored)
    assert caught.value.axes == {"j2": (1.0, 0.0, 0.0)}


@pytest.mark.timeout(10)
def test_include_cycle_is_an_include_error(synthetic: Path) -> None:
    with pytest.raises(IncludeError) as caught:
        load_from_file(synthetic / "sdf_include_cycle.sdf", resource_paths=[synthetic / "resources"], environ={})
    error = caught.value
    model = str(synthetic / "resources" / "self_include" / "model.sdf")
    assert (error.kind, error.chain, error.source, error.line) == ("cycle", (model, model), model, 5)
    assert "includes itself" in str(error) and "'model://self_include'" in str(error)


def test_missing_include_is_an_include_error_listing_the_places_searched(synthetic: Path) -> None:
    path = synthetic / "sdf_include_missing.sdf"
    with pytest.raises(IncludeError) as caught:
        load_from_file(path, resource_paths=[synthetic / "resources"], environ={})
    error = caught.value
    assert (error.kind, error.source, error.line) == ("missing", str(path), 4)
    assert error.searched == (str(synthetic / "does_not_exist"), str(synthetic / "resources" / "does_not_exist"))
    assert "'model://does_not_exist'" in str(error)


def test_two_ur3e_world_with_a_scope_loads_each_arm(synthetic: Path) -> None:
    path = synthetic / "sdf_world_two_ur3e_includes.sdf"
    left = load_from_file(path, "left_arm", resource_paths=[synthetic / "resources"], environ={})
    right = load_from_file(path, "right_arm", resource_paths=[synthetic / "resources"], environ={})
    for result, scope in ((left, "left_arm"), (right, "right_arm")):
        assert result.source_scope == scope
        assert result.joint_names == UR3E_JOINTS
        assert result.serial is not None and result.serial.joint_names == UR3E_JOINTS
        assert result.world.name == "two_arms"
        assert result.world.models == ("table", "left_arm", "right_arm")
    np.testing.assert_allclose(left.base_pose[:3, 3], (0.0, 0.5, 0.75))
    np.testing.assert_allclose(right.base_pose[:3, 3], (0.0, -0.5, 0.75))
    np.testing.assert_allclose(right.base_pose[:3, 0], (0.0, 1.0, 0.0), atol=1e-15)  # turned 90° about z


def test_two_ur3e_world_without_a_scope_is_a_tie_listing_both(synthetic: Path) -> None:
    path = synthetic / "sdf_world_two_ur3e_includes.sdf"
    with pytest.raises(ScopeError) as caught:
        load_from_file(path, resource_paths=[synthetic / "resources"], environ={})
    assert (caught.value.kind, caught.value.scopes) == ("tie", ("left_arm", "right_arm"))
    # the resource path is what finds model://ur3e_arm: without it, the include is missing
    with pytest.raises(IncludeError) as missing:
        load_from_file(path, "left_arm", environ={})
    assert missing.value.kind == "missing" and "'model://ur3e_arm'" in str(missing.value)
