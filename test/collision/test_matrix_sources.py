"""Where the driver's matrix comes from: an SRDF given, beside the model, the cache, computed, or partial."""

from __future__ import annotations

from pathlib import Path

import pytest

from bb_robot.collision.errors import MeshUnreadable
from bb_robot.collision.matrix import ADJACENT, DEFAULT
from bb_robot.collision.sources import collision_model, find_matrix
from bb_robot.loading import load_file, load_text

MODELS = Path(__file__).resolve().parents[2] / "models"


def test_the_bundled_srdf_is_found_beside_the_file_and_by_the_text() -> None:
    from_file = load_file(str(MODELS / "bb_arm.urdf"))
    found = find_matrix(from_file, collision_model(from_file))
    assert found.origin == "beside the model" and found.path == str(MODELS / "bb_arm.srdf")
    # robot_description text, as the driver gets it with model "": found by the same text in model_dirs.
    from_text = load_text((MODELS / "bb_arm.urdf").read_text(encoding="utf-8"))
    by_text = find_matrix(from_text, collision_model(from_text), search_dirs=[str(MODELS)])
    assert by_text.origin == "beside the model" and by_text.matrix.disabled == found.matrix.disabled
    # A different text is not that model's.
    edited = load_text((MODELS / "bb_arm.urdf").read_text(encoding="utf-8").replace("bb_arm", "bb_arm2", 1))
    assert find_matrix(edited, collision_model(edited), search_dirs=[str(MODELS)]).origin == "partial"


def test_partial_then_computed_then_cached(tmp_path: Path, empty_cache: Path) -> None:
    copy = tmp_path / "arm.urdf"
    copy.write_text((MODELS / "bb_arm.urdf").read_text(encoding="utf-8"), encoding="utf-8")
    loaded = load_file(str(copy))
    model = collision_model(loaded)
    partial = find_matrix(loaded, model)
    assert partial.origin == "partial" and "bb-robot collisions" in partial.describe()
    assert set(partial.matrix.disabled.values()) <= {ADJACENT, DEFAULT}
    computed = find_matrix(loaded, model, compute=True, samples=500)
    assert computed.origin == "computed" and computed.path is not None
    assert Path(computed.path).parent == empty_cache
    cached = find_matrix(loaded, model)
    assert cached.origin == "cache" and cached.matrix.disabled == computed.matrix.disabled
    # An SRDF given wins over everything.
    given = find_matrix(loaded, model, srdf=str(MODELS / "bb_arm.srdf"))
    assert given.origin == "srdf"


def test_a_text_description_resolves_package_meshes_or_names_the_link() -> None:
    text = '<robot name="m"><link name="a"><collision><geometry><mesh filename="package://nowhere/m.stl"/>'
    text += "</geometry></collision></link></robot>"
    with pytest.raises(MeshUnreadable, match="link 'a': collision mesh 'package://nowhere/m.stl'"):
        collision_model(load_text(text))
