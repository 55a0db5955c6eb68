"""The libsdformat 12 reference helper itself: right on a model whose poses are worked out by hand,
loads the corpus (rejecting exactly the files libsdformat 12 rejects), times loads, resolves URIs
only through the given resource paths, and relabels 1.10+ files as 1.9 without changing a pose.

bb_robot's SDF loader is compared with this helper elsewhere; here the reference is checked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.libsdformat_reference import (
    CORPUS_DIR,
    CORPUS_RESOURCE_DIRS,
    LIBSDFORMAT_REJECTS,
    SPEC_VERSION,
    HelperUnavailable,
    Libsdformat,
    LibsdformatError,
    build_helper,
    corpus_sdfs,
    declared_version,
    entities,
    included_files,
    is_finite_pose,
    models,
    newer_features,
    pose_error,
    pose_matrix,
    relabel_text,
    relabelled_copy,
)
from helpers.robots import UR3E_JOINTS

LoadAs19 = Callable[..., dict[str, Any]]

S = math.sqrt(0.5)
# A yaw (about z) of 90 and 180 degrees, a pitch (about y) of 90, and both (yaw after pitch).
YAW90 = [S, 0, 0, S]
YAW180 = [0, 0, 0, 1]
PITCH90 = [S, 0, S, 0]
YAW90_PITCH90 = [0.5, -0.5, 0.5, 0.5]
IDENTITY = [1, 0, 0, 0]

HAND_MODEL = """<?xml version="1.0"?>
<sdf version="1.9">
  <model name="m">
    <pose>1 2 3 0 0 1.5707963267948966</pose>
    <link name="base"/>
    <frame name="f1" attached_to="base">
      <pose>0 0 1 0 0 0</pose>
    </frame>
    <link name="l1">
      <pose relative_to="f1">1 0 0 0 0 1.5707963267948966</pose>
    </link>
    <joint name="j1" type="revolute">
      <pose>0 0 0.5 0 0 0</pose>
      <parent>base</parent>
      <child>l1</child>
      <axis>
        <xyz expressed_in="__model__">1 0 0</xyz>
        <limit><lower>-1</lower><upper>2</upper><effort>3</effort><velocity>4</velocity></limit>
      </axis>
    </joint>
    <frame name="f2" attached_to="j1">
      <pose relative_to="__model__">0 1 0 0 1.5707963267948966 0</pose>
    </frame>
    <model name="sub">
      <pose relative_to="l1">0 0 1 0 0 0</pose>
      <link name="a">
        <pose>1 0 0 0 0 0</pose>
      </link>
    </model>
  </model>
</sdf>
"""

# Worked out by hand. The model m sits at (1, 2, 3) turned 90 degrees about z; so its x axis points
# along the world's y and its y axis along the world's -x.
#   f1 = 1 above base; l1 = f1 then 1 along x, turned 90 about z -> (1, 0, 1) yaw 90 in m.
#   j1 defaults to the child frame: l1 then 0.5 up -> (1, 0, 1.5) yaw 90; its axis is m's x, which
#   in a frame turned 90 about z is -y. f2 is attached to j1, so it moves with j1's child l1.
#   sub = l1 then 1 up -> (1, 0, 2) yaw 90; its link a is 1 along sub's x.
# World poses: (1, 2, 3) + Rz(90) p, yaw + 90, e.g. l1: (1, 2, 3) + (0, 1, 1) = (1, 3, 4) yaw 180.
HAND_EXPECTED = {
    # (kind, scoped name): (pose in its model frame (models: in the parent's), world pose)
    ("model", "m"): ([1, 2, 3, *YAW90], [1, 2, 3, *YAW90]),
    ("link", "m::base"): ([0, 0, 0, *IDENTITY], [1, 2, 3, *YAW90]),
    ("frame", "m::f1"): ([0, 0, 1, *IDENTITY], [1, 2, 4, *YAW90]),
    ("link", "m::l1"): ([1, 0, 1, *YAW90], [1, 3, 4, *YAW180]),
    ("joint", "m::j1"): ([1, 0, 1.5, *YAW90], [1, 3, 4.5, *YAW180]),
    ("frame", "m::f2"): ([0, 1, 0, *PITCH90], [0, 2, 3, *YAW90_PITCH90]),
    ("model", "m::sub"): ([1, 0, 2, *YAW90], [1, 3, 5, *YAW180]),
    ("link", "m::sub::a"): ([1, 0, 0, *IDENTITY], [0, 3, 5, *YAW180]),
}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def corpus_params(paths: list[Path]) -> list[object]:
    if not paths:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no shared corpus at {CORPUS_DIR}"), id="absent")]
    return [pytest.param(path, id=str(path.relative_to(CORPUS_DIR))) for path in paths]


def declares_newer(path: Path, resource_paths: tuple[Path, ...]) -> bool:
    return any(
        (version := declared_version(file)) is not None and version > SPEC_VERSION
        for file in included_files(path, resource_paths)
    )


# ------------------------------------------------------------------------------- by hand


def test_hand_worked_model(libsdformat: Libsdformat, tmp_path: Path) -> None:
    result = libsdformat(write(tmp_path / "hand.sdf", HAND_MODEL))
    assert result["libsdformat"].startswith("12.")
    assert result["worlds"] == []
    assert result["original_version"] == "1.9"
    found = entities(result)
    assert set(found) == set(HAND_EXPECTED)
    for key, (pose, world_pose) in HAND_EXPECTED.items():
        assert pose_error(found[key]["pose"], pose) < 1e-12, key
        assert pose_error(found[key]["world_pose"], world_pose) < 1e-12, key

    model = result["model"]
    assert model["canonical_link"] == "base"
    assert model["models"][0]["canonical_link"] == "a"
    assert model["models"][0]["scope"] == "m::sub"

    joint = found["joint", "m::j1"]
    assert joint["type"] == "revolute"
    assert (joint["parent_link"], joint["child_link"]) == ("base", "l1")
    assert pose_error(joint["pose_in_child"], [0, 0, 0.5, *IDENTITY]) < 1e-12
    (axis,) = joint["axes"]
    assert axis["xyz"] == pytest.approx([0, -1, 0], abs=1e-12)
    assert axis["xyz_model"] == pytest.approx([1, 0, 0], abs=1e-12)
    assert (axis["raw_xyz"], axis["expressed_in"]) == ([1, 0, 0], "__model__")
    assert [axis[name] for name in ("lower", "upper", "effort", "velocity")] == [-1, 2, 3, 4]

    assert found["frame", "m::f1"]["attached_to_body"] == "base"
    assert (found["frame", "m::f2"]["attached_to"], found["frame", "m::f2"]["attached_to_body"]) == ("j1", "l1")
    assert found["frame", "m::f2"]["relative_to"] == "__model__"
    assert found["link", "m::l1"]["raw_pose"] == pytest.approx([1, 0, 0, *YAW90], abs=1e-15)


def test_world_frames_defaults_and_infinite_limits(libsdformat: Libsdformat, tmp_path: Path) -> None:
    world = """<sdf version="1.8"><world name="w">
      <frame name="wf"><pose>0 0 2 0 0 0</pose></frame>
      <model name="arm">
        <pose relative_to="wf">1 0 0 0 0 0</pose>
        <link name="a"/><link name="b"><pose>0 0 1 0 0 0</pose></link>
        <joint name="j" type="continuous"><parent>a</parent><child>b</child><axis><xyz>0 0 2</xyz></axis></joint>
      </model>
    </world></sdf>"""
    result = libsdformat(write(tmp_path / "world.sdf", world))
    assert result["model"] is None
    (w,) = result["worlds"]
    assert w["name"] == "w"
    (frame,) = w["frames"]
    assert (frame["name"], frame["attached_to_body"]) == ("wf", "world")
    assert pose_error(frame["pose"], [0, 0, 2, *IDENTITY]) < 1e-15
    found = entities(result)
    assert pose_error(found["model", "arm"]["pose"], [1, 0, 2, *IDENTITY]) < 1e-15
    assert pose_error(found["link", "arm::b"]["world_pose"], [1, 0, 3, *IDENTITY]) < 1e-15
    (axis,) = found["joint", "arm::j"]["axes"]
    assert axis["xyz"] == [0, 0, 1]  # normalised
    # No <limit>: SDF 1.9's defaults, as libsdformat 12 reports them.
    assert [axis[name] for name in ("lower", "upper", "effort", "velocity")] == [-1e16, 1e16, math.inf, math.inf]


def test_pose_matrix() -> None:
    assert (pose_matrix([1, 2, 3, *IDENTITY]) == [[1, 0, 0, 1], [0, 1, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1]]).all()
    yaw = pose_matrix([0, 0, 0, *YAW90])
    assert yaw[:3, :3] == pytest.approx(np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]]), abs=1e-15)
    # q and -q are the same rotation.
    assert pose_error([0, 0, 0, *YAW90], [0, 0, 0, *(-value for value in YAW90)]) < 1e-15


# ------------------------------------------------------------------------ errors and URIs


def test_errors_are_reported_with_libsdformat_messages(libsdformat: Libsdformat, tmp_path: Path) -> None:
    bad = write(
        tmp_path / "dup.sdf", '<sdf version="1.9"><model name="m"><link name="a"/><link name="a"/></model></sdf>'
    )
    with pytest.raises(LibsdformatError) as raised:
        libsdformat(bad)
    assert not raised.value.timed_out
    assert any("link with name[a] already exists" in error["message"] for error in raised.value.errors)
    assert all(isinstance(error["code"], int) for error in raised.value.errors)
    assert "dup.sdf" in str(raised.value) and "already exists" in str(raised.value)


def test_timeout_raises(libsdformat: Libsdformat, tmp_path: Path) -> None:
    # Not an include cycle (those are never loaded): a timeout no load can meet.
    path = write(tmp_path / "hand.sdf", HAND_MODEL)
    with pytest.raises(LibsdformatError, match="no answer in") as raised:
        libsdformat(path, timeout=1e-4)
    assert raised.value.timed_out


def test_uris_resolve_through_resource_paths_only(
    libsdformat: Libsdformat, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models_dir = tmp_path / "models"
    write(models_dir / "box" / "model.config", '<model><name>box</name><sdf version="1.9">box.sdf</sdf></model>')
    write(
        models_dir / "box" / "box.sdf",
        '<sdf version="1.9"><model name="box"><link name="l"><pose>0 0 1 0 0 0</pose></link></model></sdf>',
    )
    write(models_dir / "plain.sdf", '<sdf version="1.9"><model name="plain"><link name="l"/></model></sdf>')
    world_dir = tmp_path / "worlds"
    write(world_dir / "local.sdf", '<sdf version="1.9"><model name="local"><link name="l"/></model></sdf>')
    world = write(
        world_dir / "w.sdf",
        """<sdf version="1.9"><world name="w">
          <include><uri>model://box</uri><name>b1</name><pose>5 0 0 0 0 0</pose></include>
          <include><uri>model://plain.sdf</uri></include>
          <include><uri>local.sdf</uri></include>
        </world></sdf>""",
    )
    # The environment's resource paths do not count: only the ones given.
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(models_dir))
    monkeypatch.setenv("SDF_PATH", str(models_dir))
    with pytest.raises(LibsdformatError, match=r"model://box"):
        libsdformat(world)

    found = entities(libsdformat(world, [models_dir]))
    assert {name for kind, name in found if kind == "model"} == {"b1", "plain", "local"}
    assert pose_error(found["link", "b1::l"]["world_pose"], [5, 0, 1, *IDENTITY]) < 1e-15


def test_a_missing_compiler_is_a_reason_to_skip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXX", "no-such-compiler-here")
    with pytest.raises(HelperUnavailable, match="no C.. compiler .no-such-compiler-here."):
        build_helper(tmp_path)


def test_time_load(libsdformat: Libsdformat, tmp_path: Path) -> None:
    timing = libsdformat.time_load(write(tmp_path / "hand.sdf", HAND_MODEL), runs=3)
    assert timing["runs"] == 3
    assert 0 < timing["min_seconds"] <= timing["mean_seconds"] <= timing["max_seconds"]


# ---------------------------------------------------------------------------- the corpus


@pytest.mark.parametrize("path", corpus_params(corpus_sdfs()))
def test_corpus(libsdformat: Libsdformat, corpus_resource_paths: tuple[Path, ...], path: Path) -> None:
    name = str(path.relative_to(CORPUS_DIR))
    if name in LIBSDFORMAT_REJECTS:
        with pytest.raises(LibsdformatError) as raised:
            libsdformat(path, corpus_resource_paths)
        assert not raised.value.timed_out
        assert any(LIBSDFORMAT_REJECTS[name] in error["message"] for error in raised.value.errors), raised.value
        return
    result = libsdformat(path, corpus_resource_paths)
    # A world, a model, or neither (a file of a top-level <actor> or <light>).
    assert len(result["worlds"]) + (result["model"] is not None) <= 1
    found = entities(result)
    for key, item in found.items():
        assert is_finite_pose(item["pose"]) and is_finite_pose(item["world_pose"]), key
    scopes = [model["scope"] for model in models(result)]
    assert len(scopes) == len(set(scopes))
    for model in models(result):
        for joint in model["joints"]:
            for axis in joint["axes"]:
                assert math.isclose(math.hypot(*axis["xyz"]), 1, abs_tol=1e-12), (model["scope"], joint["name"])


def test_ur3e_world_three_levels_of_includes(libsdformat: Libsdformat, corpus_resource_paths: tuple[Path, ...]) -> None:
    path = CORPUS_DIR / "sas_robot_driver_gazebo" / "sdf" / "ur3e_world.sdf"
    if not path.is_file():
        pytest.skip(f"no shared corpus at {CORPUS_DIR}")
    result = libsdformat(path, corpus_resource_paths)
    scopes = [model["scope"] for model in models(result)]
    assert scopes == [
        "ur3e",
        "ur3e::ur3e_position_controller",
        "ur3e::ur3e_position_controller::ur3e",
        "frame_x",
        "frame_xd",
    ]
    arm = entities(result)["model", "ur3e::ur3e_position_controller::ur3e"]
    assert [joint["name"] for joint in arm["joints"]] == list(UR3E_JOINTS)
    assert arm["canonical_link"] == "base_link"
    assert entities(result)["joint", "ur3e::base_joint"]["parent_link"] == "world"


def test_rejects_match_the_corpus_readme() -> None:
    readme = CORPUS_DIR / "README.md"
    if not readme.is_file():
        pytest.skip(f"no shared corpus at {CORPUS_DIR}")
    listed: dict[str, bool] = {}
    for line in readme.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 6 and cells[0].endswith(".sdf"):
            listed[cells[0]] = "libsdformat12: error" in cells[-1]
    assert listed
    assert {name for name, rejected in listed.items() if rejected} == {
        name for name in LIBSDFORMAT_REJECTS if name in listed
    }


# ----------------------------------------------------------------------- relabelling to 1.9


def test_relabel_text() -> None:
    assert relabel_text("<sdf version='1.11'><model/></sdf>") == "<sdf version='1.9'><model/></sdf>"
    assert relabel_text('<sdf version="1.6"><model/></sdf>') == '<sdf version="1.6"><model/></sdf>'
    text = '<?xml version="1.0"?>\n<!-- <sdf version="1.10"> -->\n<sdf  version = "1.10" >\n<model/></sdf>'
    assert (
        relabel_text(text)
        == '<?xml version="1.0"?>\n<!-- <sdf version="1.10"> -->\n<sdf  version = "1.9" >\n<model/></sdf>'
    )
    config = (
        '<model><sdf version="1.11">a.sdf</sdf><sdf version="1.8">b.sdf</sdf><sdf version="1.10">c.sdf</sdf></model>'
    )
    assert relabel_text(config, every=True) == re.sub(r"1\.1[01]", "1.9", config)
    assert relabel_text(config) == config.replace("1.11", "1.9", 1)


def test_relabelled_copy_of_the_ur3e_world(tmp_path: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    path = CORPUS_DIR / "sas_robot_driver_gazebo" / "sdf" / "ur3e_world.sdf"
    if not path.is_file():
        pytest.skip(f"no shared corpus at {CORPUS_DIR}")
    copy = relabelled_copy(path, corpus_resource_paths, tmp_path)
    assert copy.path.read_text(encoding="utf-8") == path.read_text(encoding="utf-8").replace(
        "<sdf version='1.11'>", "<sdf version='1.9'>", 1
    )
    tree = included_files(copy.path, copy.resource_paths)
    assert [file.name for file in tree] == [
        "ur3e_world.sdf",
        "reference_frame.sdf",
        "ur3e_position_controller.sdf",
        "ur3e.sdf",
    ]
    assert all(file.is_relative_to(tmp_path) and declared_version(file) == (1, 9) for file in tree)
    assert set(tree) <= set(copy.relabelled)
    assert newer_features(path, corpus_resource_paths) == []


def test_newer_features() -> None:
    mimic = CORPUS_DIR / "gz_sim" / "examples" / "worlds" / "mimic_fast_slow_pendulums_world.sdf"
    world_joint = CORPUS_DIR / "sdformat" / "test" / "sdf" / "world_joint_parent_frame.sdf"
    if not mimic.is_file():
        pytest.skip(f"no shared corpus at {CORPUS_DIR}")
    assert newer_features(mimic) == [f"{mimic}: //joint/axis/mimic (SDF 1.11)"]
    assert newer_features(world_joint) == [f"{world_joint}: //world/joint (SDF 1.10)"]


def test_newer_features_only_count_where_the_declared_version_has_them(tmp_path: Path) -> None:
    joint = '<joint name="j" type="revolute"><axis><mimic joint="k"/></axis></joint>'
    old = write(tmp_path / "old.sdf", f'<sdf version="1.9"><model name="m">{joint}</model></sdf>')
    new = write(tmp_path / "new.sdf", f'<sdf version="1.11"><model name="m">{joint}</model></sdf>')
    ten = write(
        tmp_path / "ten.sdf", f'<sdf version="1.10"><model name="m">{joint}<plugin filename="x"/></model></sdf>'
    )
    assert newer_features(old) == []
    assert newer_features(new) == [f"{new.resolve()}: //joint/axis/mimic (SDF 1.11)"]
    assert newer_features(ten) == [f"{ten.resolve()}: //plugin without a name (SDF 1.10)"]


def newer_corpus_sdfs() -> list[Path]:
    resource_paths = tuple(CORPUS_DIR / name for name in CORPUS_RESOURCE_DIRS)
    return [
        path
        for path in corpus_sdfs()
        if str(path.relative_to(CORPUS_DIR)) not in LIBSDFORMAT_REJECTS and declares_newer(path, resource_paths)
    ]


@pytest.mark.parametrize("path", corpus_params(newer_corpus_sdfs()))
def test_relabelled_copy_loads_the_same(
    libsdformat: Libsdformat, libsdformat_19: LoadAs19, corpus_resource_paths: tuple[Path, ...], path: Path
) -> None:
    """libsdformat 12 reads 1.10+ files with the 1.9 spec anyway: the relabelled copy changes no pose."""
    relabelled = libsdformat_19(path, corpus_resource_paths)  # skips files with newer features
    assert relabelled["source_file"] == str(path)
    assert relabelled["relabelled"]
    direct = entities(libsdformat(path, corpus_resource_paths))
    found = entities(relabelled)
    assert set(found) == set(direct)
    for key, item in found.items():
        assert item["pose"] == direct[key]["pose"], key
        assert item["world_pose"] == direct[key]["world_pose"], key


def test_libsdformat_19_skips_newer_features(libsdformat_19: LoadAs19) -> None:
    mimic = CORPUS_DIR / "gz_sim" / "examples" / "worlds" / "mimic_fast_slow_pendulums_world.sdf"
    if not mimic.is_file():
        pytest.skip(f"no shared corpus at {CORPUS_DIR}")
    with pytest.raises(pytest.skip.Exception, match="mimic"):
        libsdformat_19(mimic)


def test_libsdformat_19_loads_old_files_directly(libsdformat_19: LoadAs19, tmp_path: Path) -> None:
    result = libsdformat_19(write(tmp_path / "hand.sdf", HAND_MODEL))
    assert "relabelled" not in result
    assert result["file"] == str((tmp_path / "hand.sdf").resolve())
