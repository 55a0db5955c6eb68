"""Every SDF file of the shared corpus through bb_robot's SDF loader: the selected scope and the
joint names of those that load, the typed error (and what its message names) of those that do not.

A file added to the corpus without an entry here fails ``test_every_corpus_sdf_is_listed``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from helpers.sdf_corpus import LOADS, REJECTS

from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.sdf import errors
from bb_robot.sdf.loader import load_from_file


def _corpus_files(corpus_dir: Path) -> list[str]:
    return sorted(str(p.relative_to(corpus_dir)) for p in corpus_dir.rglob("*.sdf"))


def test_every_corpus_sdf_is_listed(corpus_dir: Path) -> None:
    files = set(_corpus_files(corpus_dir))
    listed = set(LOADS) | set(REJECTS)
    assert not LOADS.keys() & REJECTS.keys()
    assert files - listed == set(), "corpus SDF files without an expectation here"
    assert listed - files == set(), "expectations for files the corpus no longer has"


@pytest.mark.parametrize("name", sorted(LOADS))
def test_corpus_sdf_loads(name: str, corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    scope, joints = LOADS[name]
    result = load_from_file(corpus_dir / name, resource_paths=corpus_resource_paths, build_serial=False)
    assert result.source_scope == scope
    assert result.joint_names == joints
    # the robot's FK at zero puts every SDF link where frame semantics put it
    view = result.frames.model(scope)
    root = np.linalg.inv(view.pose_of(result.robot.root_link)) if result.robot.root_link != "world" else None
    poses = ForwardKinematics(result.robot).poses()
    for link in result.link_names:
        expected = view.pose_of(link)
        if root is not None:
            expected = root @ expected
        else:
            expected = result.model_pose @ expected
        np.testing.assert_allclose(poses[link], expected, atol=1e-12, err_msg=link)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name", sorted(REJECTS))
def test_corpus_sdf_rejects(name: str, corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    error_class, parts = REJECTS[name]
    with pytest.raises(errors.SdfError) as caught:
        load_from_file(corpus_dir / name, resource_paths=corpus_resource_paths, build_serial=False)
    error = caught.value
    assert type(error) is error_class, (type(error), str(error))
    message = str(error)
    assert error.source is not None and message.startswith(error.source)
    assert re.match(r"^/.*\.sdf", message), message
    for part in parts:
        assert part in message, (part, message)
