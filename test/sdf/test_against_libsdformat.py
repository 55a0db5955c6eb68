"""bb_robot's SDF frame semantics against libsdformat 12, on every corpus SDF file both accept.

For each file libsdformat 12 loads (through the C++ helper; files declaring SDF 1.10+ through a
copy relabelled 1.9, and those using something newer than 1.9 skipped: their expected values are
written from the specification in ``test_sdf_frames.py``), bb_robot reads the original file and
must give, to 1e-9, the same:

- set of models, links, joints and frames (by scoped name);
- pose of each in its model's frame (a model's in its parent's), and in the world;
- body each frame is attached to, parent and child link of each joint, canonical link of each model;
- joint axes in the joint frame (``expressed_in`` resolved).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.libsdformat_reference import (
    CORPUS_DIR,
    LIBSDFORMAT_REJECTS,
    corpus_sdfs,
    entities,
    pose_matrix,
)

from bb_robot.sdf import FrameGraph, read_document, resolve
from bb_robot.sdf.frames import join

LoadAs19 = Callable[..., dict[str, Any]]
TOLERANCE = 1e-9

# Corpus files libsdformat 12 accepts and bb_robot does not, with the reason.
NOTHING_TO_COMPARE = {
    # A top-level <actor> / <light>: no model and no world; libsdformat's output has no frame.
    "sdformat/test/integration/model/test_actor/model.sdf": "a top-level <actor>, no model or world",
    "sdformat/test/integration/model/test_light/model.sdf": "a top-level <light>, no model or world",
}


def accepted_corpus_sdfs() -> list[object]:
    paths = [path for path in corpus_sdfs() if str(path.relative_to(CORPUS_DIR)) not in LIBSDFORMAT_REJECTS]
    if not paths:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no shared corpus at {CORPUS_DIR}"), id="absent")]
    return [pytest.param(path, id=str(path.relative_to(CORPUS_DIR))) for path in paths]


def scoped(scope: str, name: str) -> str:
    """A name libsdformat gives relative to a model (``nested::link``) as a full scoped name."""
    return name if name == "world" else join(scope, name)


def compare(reference: dict[str, Any], graph: FrameGraph) -> None:
    """Assert that bb_robot's resolved frames equal libsdformat's (see the module docstring)."""
    ours = {(frame.kind, frame.scoped_name): frame for frame in graph.frames()}
    theirs: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}  # -> (model scope, helper object)
    for (kind, name), item in entities(reference).items():
        if kind == "world_frame":
            theirs["frame", name] = ("", item)
        else:
            theirs[kind, name] = (name.rsplit("::", 1)[0] if "::" in name else "", item)
    assert sorted(ours) == sorted(theirs)

    worst = 0.0
    for key, (scope, item) in theirs.items():
        frame = ours[key]
        for field, mine in (("pose", frame.pose_in_model), ("world_pose", frame.pose_in_world)):
            error = float(np.max(np.abs(pose_matrix(item[field]) - mine)))
            assert error <= TOLERANCE, f"{key} {field}: bb_robot\n{mine}\nlibsdformat\n{pose_matrix(item[field])}"
            worst = max(worst, error)
        kind, name = key
        if kind == "frame":
            assert frame.body == scoped(scope, item["attached_to_body"]), key
        elif kind == "joint":
            assert graph.parent_link(name) == scoped(scope, item["parent_link"]), key
            assert graph.child_link(name) == scoped(scope, item["child_link"]), key
            for axis in item["axes"]:
                mine_xyz = graph.axis_in_joint(name, axis["element"])
                assert np.max(np.abs(np.subtract(mine_xyz, axis["xyz"]))) <= TOLERANCE, (key, axis["element"])
        elif kind == "model":
            assert (graph.model(name).canonical_link or "") == item["canonical_link"], key


@pytest.mark.parametrize("path", accepted_corpus_sdfs())
def test_corpus_poses_equal_libsdformat(
    path: Path, libsdformat_19: LoadAs19, corpus_resource_paths: tuple[Path, ...]
) -> None:
    name = str(path.relative_to(CORPUS_DIR))
    if name in NOTHING_TO_COMPARE:
        reference = libsdformat_19(path, corpus_resource_paths)
        assert not entities(reference)
        pytest.skip(f"nothing to compare: {NOTHING_TO_COMPARE[name]}")
    reference = libsdformat_19(path, corpus_resource_paths)
    graph = resolve(read_document(path, resource_paths=corpus_resource_paths, environ={}))
    compare(reference, graph)


# Hand-written files for what the corpus has little of: every pose default, nested scopes, axis
# frames, a static model, placement frames, and includes (merged, renamed, placed) of GRIPPER.
GRIPPER = """<sdf version="1.9"><model name="gripper">
  <link name="finger"><pose>0.1 0 0 0 0 0.3</pose></link>
  <frame name="grip_tip" attached_to="finger"><pose>0 0 0.05 0.2 0 0</pose></frame>
  <link name="palm"/>
  <joint name="slide" type="prismatic"><parent>palm</parent><child>finger</child>
    <axis><xyz expressed_in="grip_tip">0 1 0</xyz></axis></joint>
</model></sdf>"""
HAND_FILES = {
    "defaults_and_references": """<sdf version="1.9"><model name="m">
      <pose degrees="true">0.1 -0.2 0.3 10 -20 30</pose>
      <link name="a"><pose>0 0 0.5 0.1 0.2 0.3</pose></link>
      <frame name="f" attached_to="a"><pose>1 0 0 0 1.2 0</pose></frame>
      <frame name="g"><pose relative_to="f">0 1 0 0.3 0 0</pose></frame>
      <link name="b"><pose relative_to="g">0 0 1 0 0 -0.4</pose></link>
      <joint name="j" type="revolute">
        <pose relative_to="f">0.2 0 0 0 0 0.5</pose>
        <parent>a</parent><child>b</child>
        <axis><xyz expressed_in="g">0 1 1</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis>
      </joint>
      <joint name="u" type="universal">
        <parent>b</parent><child>c</child>
        <axis><xyz>1 0 0</xyz></axis><axis2><xyz expressed_in="__model__">0 0 1</xyz></axis2>
      </joint>
      <link name="c"><pose relative_to="j">0 0 0.3 0.2 0 0</pose></link>
      <model name="inner">
        <pose relative_to="b">0 0 0.2 0 0.7 0</pose>
        <link name="x"><pose>0.1 0 0 0 0 0</pose></link>
        <frame name="tip" attached_to="x"><pose relative_to="__model__">0 0 0.4 0 0 1</pose></frame>
        <model name="deeper"><pose relative_to="tip">0 0.1 0 0 0 0</pose><link name="y"/></model>
      </model>
      <joint name="to_inner" type="fixed"><parent>c</parent><child>inner::x</child></joint>
      <frame name="on_inner" attached_to="inner::deeper"><pose relative_to="inner::tip">1 2 3 0 0 0</pose></frame>
    </model></sdf>""",
    "world_static_and_placement": """<sdf version="1.9"><world name="w">
      <frame name="table"><pose>1 2 0.7 0 0 1</pose></frame>
      <model name="fixed">
        <static>true</static><pose relative_to="table">0 0 0.1 0 0 0</pose>
        <link name="l"><pose>0 0 0.5 0 0 0</pose></link>
      </model>
      <model name="placed" placement_frame="p">
        <pose relative_to="table">0 0 0 0 0 0</pose>
        <link name="l"><pose>0.3 0 0 0 0 0.2</pose></link>
        <frame name="p" attached_to="l"><pose>0 0 -0.1 0 0.1 0</pose></frame>
      </model>
      <frame name="above" attached_to="placed"><pose relative_to="placed::l">0 0 1 0 0 0</pose></frame>
    </world></sdf>""",
    "includes": """<sdf version="1.9"><model name="arm">
      <link name="base"/>
      <include merge="true"><uri>model://gripper</uri><pose relative_to="base">0 0 1 0 0 0.5</pose></include>
      <joint name="mount" type="fixed"><parent>base</parent><child>palm</child></joint>
      <include>
        <uri>model://gripper</uri><name>g2</name><placement_frame>grip_tip</placement_frame>
        <pose relative_to="finger">0 0 2 0 0.4 0</pose>
      </include>
      <joint name="mount2" type="fixed"><parent>finger</parent><child>g2::palm</child></joint>
    </model></sdf>""",
}


@pytest.mark.parametrize("name", sorted(HAND_FILES))
def test_hand_written_poses_equal_libsdformat(name: str, libsdformat_19: LoadAs19, tmp_path: Path) -> None:
    models_dir = tmp_path / "models"
    (models_dir / "gripper").mkdir(parents=True)
    (models_dir / "gripper" / "model.sdf").write_text(GRIPPER, encoding="utf-8")
    (models_dir / "gripper" / "model.config").write_text(
        '<model><name>gripper</name><sdf version="1.9">model.sdf</sdf></model>', encoding="utf-8"
    )
    path = tmp_path / f"{name}.sdf"
    path.write_text(HAND_FILES[name], encoding="utf-8")
    reference = libsdformat_19(path, [models_dir])
    compare(reference, resolve(read_document(path, resource_paths=[models_dir], environ={})))


def test_the_comparison_sees_a_small_error(libsdformat_19: LoadAs19, tmp_path: Path) -> None:
    path = tmp_path / "m.sdf"
    path.write_text(HAND_FILES["defaults_and_references"], encoding="utf-8")
    reference = libsdformat_19(path)
    graph = resolve(read_document(path, environ={}))
    compare(reference, graph)
    link = reference["model"]["links"][1]
    link["pose"] = [link["pose"][0] + 1e-8, *link["pose"][1:]]
    with pytest.raises(AssertionError, match="m::b"):
        compare(reference, graph)
