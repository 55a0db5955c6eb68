"""Where the description node may load a model from (model_dirs), and what it publishes for it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bb_robot.description.sources import (
    PARAMETER_SOURCE,
    ModelPathError,
    ModelSourceError,
    load_description_text,
    load_model,
    resolve_model_path,
)
from bb_robot.errors import BbRobotError
from bb_robot.loading import format_from as model_kind
from bb_robot.loading import root_element as root_tag

REPO_ROOT = Path(__file__).resolve().parents[2]
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"
TWO_LINKS = (
    '<robot name="two"><link name="a"/><link name="b"/>'
    '<joint name="j" type="continuous"><parent link="a"/><child link="b"/></joint></robot>'
)


@pytest.fixture
def models(tmp_path: Path) -> Path:
    directory = tmp_path / "models"
    directory.mkdir()
    (directory / "two.urdf").write_text(TWO_LINKS)
    (directory / "sub").mkdir()
    (directory / "sub" / "arm.urdf").write_text(BB_ARM.read_text())
    return directory


def test_relative_paths_are_looked_up_in_model_dirs_in_order(models: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "two.urdf").write_text(TWO_LINKS)
    assert resolve_model_path("two.urdf", [str(other), str(models)]) == other / "two.urdf"
    assert resolve_model_path("sub/arm.urdf", [str(other), str(models)]) == models / "sub" / "arm.urdf"


def test_a_path_outside_model_dirs_is_refused_naming_the_path_and_the_dirs(models: Path) -> None:
    with pytest.raises(ModelPathError) as caught:
        resolve_model_path(str(BB_ARM), [str(models)])
    message = str(caught.value)
    assert str(BB_ARM) in message and str(models) in message and "outside" in message
    assert caught.value.path == BB_ARM.resolve()


def test_dot_dot_and_symbolic_links_cannot_escape(models: Path) -> None:
    with pytest.raises(ModelPathError, match="outside"):
        resolve_model_path(os.path.relpath(BB_ARM, models), [str(models)])
    os.symlink(BB_ARM, models / "escape.urdf")
    with pytest.raises(ModelPathError, match="outside"):
        resolve_model_path("escape.urdf", [str(models)])
    with pytest.raises(ModelPathError, match="outside"):
        resolve_model_path(f"file://{BB_ARM}", [str(models)])


def test_a_symbolic_link_inside_model_dirs_is_fine(models: Path) -> None:
    os.symlink(models / "two.urdf", models / "alias.urdf")
    assert resolve_model_path("alias.urdf", [str(models)]) == models / "two.urdf"


def test_missing_files_and_no_dirs(models: Path) -> None:
    with pytest.raises(ModelPathError, match="not found in model_dirs"):
        resolve_model_path("nope.urdf", [str(models)])
    with pytest.raises(ModelPathError, match="no such file"):
        resolve_model_path(str(models / "nope.urdf"), [str(models)])
    with pytest.raises(ModelPathError, match="no model directory"):
        resolve_model_path("two.urdf", [])


def test_package_uris(models: Path) -> None:
    shares = {"pkg": str(models.parent)}

    def share(name: str) -> str:
        if name not in shares:
            raise LookupError(f"ROS package '{name}' was not found")
        return shares[name]

    assert (
        resolve_model_path("package://pkg/models/two.urdf", [str(models)], package_share=share) == models / "two.urdf"
    )
    with pytest.raises(ModelPathError, match="ROS package 'other' was not found"):
        resolve_model_path("package://other/x.urdf", [str(models)], package_share=share)
    with pytest.raises(ModelPathError, match="package://<package>/<path>"):
        resolve_model_path("package://pkg", [str(models)], package_share=share)


def test_package_uri_of_bb_robot_with_the_default_dirs() -> None:
    from bb_robot.description.parameters import default_model_dirs

    path = resolve_model_path("package://bb_robot/models/bb_arm.urdf", default_model_dirs())
    assert path == Path(default_model_dirs()[0]) / "bb_arm.urdf"


def test_model_uris_name_a_directory_in_model_dirs(models: Path) -> None:
    robot = models / "ur"
    robot.mkdir()
    (robot / "arm.sdf").write_text("<sdf/>")
    (robot / "model.config").write_text("<model><name>ur</name><sdf version='1.9'>arm.sdf</sdf></model>")
    assert resolve_model_path("model://ur", [str(models)]) == robot / "arm.sdf"
    assert resolve_model_path("model://sub/arm.urdf", [str(models)]) == models / "sub" / "arm.urdf"
    with pytest.raises(ModelPathError, match="no directory 'gone'"):
        resolve_model_path("model://gone", [str(models)])
    (models / "empty").mkdir()
    with pytest.raises(ModelPathError, match="without model.config or model.sdf"):
        resolve_model_path("model://empty", [str(models)])


def test_urdf_is_published_as_its_own_text(models: Path) -> None:
    loaded = load_model("sub/arm.urdf", [str(models)])
    assert loaded.description == BB_ARM.read_text()
    assert loaded.kind == "urdf" and loaded.source == str(models / "sub" / "arm.urdf")
    assert loaded.robot.name == "bb_arm" and loaded.placement is None


def test_xacro_is_published_expanded(models: Path) -> None:
    (models / "arm.urdf.xacro").write_text(
        '<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:property name="n" value="base"/>'
        '<link name="${n}"/></robot>'
    )
    loaded = load_model("arm.urdf.xacro", [str(models)])
    assert loaded.kind == "xacro" and '<link name="base"/>' in loaded.description and "${" not in loaded.description
    assert loaded.robot.root_link == "base"


def test_model_scope_is_for_sdf_only(models: Path) -> None:
    with pytest.raises(ModelSourceError, match="model_scope 'a::b' applies to SDF files only"):
        load_model("two.urdf", [str(models)], model_scope="a::b")


def test_broken_files_raise_typed_errors(models: Path) -> None:
    (models / "broken.urdf").write_text("<robot name='b'><link name='a'>")
    with pytest.raises(BbRobotError, match="broken.urdf"):
        load_model("broken.urdf", [str(models)])
    (models / "latin1.urdf").write_bytes("<robot name='é'><link name='a'/></robot>".encode("latin-1"))
    with pytest.raises(BbRobotError):
        load_model("latin1.urdf", [str(models)])


def test_robot_description_text_is_plain_urdf() -> None:
    loaded = load_description_text(TWO_LINKS)
    assert loaded.description == TWO_LINKS and loaded.kind == "string" and loaded.source == PARAMETER_SOURCE
    with pytest.raises(ModelSourceError, match="SDF text is not accepted"):
        load_description_text("<?xml version='1.0'?><!-- x --><sdf version='1.9'><model name='m'/></sdf>")
    with pytest.raises(BbRobotError):
        load_description_text("<robot name='x'>")


def test_kind_by_suffix_then_root_element() -> None:
    assert model_kind(Path("a.urdf.xacro"), b"<robot/>") == "xacro"
    assert model_kind(Path("a.world"), b"") == "sdf"
    assert model_kind(Path("a.xml"), b"<?xml version='1.0'?>\n<!-- <robot> -->\n<sdf version='1.9'/>") == "sdf"
    assert model_kind(Path("a.xml"), b"<robot name='x'/>") == "urdf"
    assert root_tag(b"no xml") is None


def test_sdf_world_model_is_placed_in_the_world(corpus_dir: Path) -> None:
    directory = corpus_dir / "sas_robot_driver_gazebo" / "sdf"
    loaded = load_model("ur3e_world.sdf", [str(directory)], model_scope="ur3e::ur3e_position_controller::ur3e")
    assert loaded.kind == "sdf" and loaded.scope == "ur3e::ur3e_position_controller::ur3e"
    assert loaded.placement is not None and loaded.placement.parent == "world"
    assert loaded.description.startswith("<?xml") and "<robot" in loaded.description
    assert loaded.robot.root_link == "base_link"


def test_sdf_includes_outside_model_dirs_and_the_environment_are_not_found(corpus_dir: Path, tmp_path: Path) -> None:
    world = tmp_path / "w.sdf"
    world.write_text(
        "<sdf version='1.9'><world name='w'><include><uri>model://reference_frame.sdf</uri></include></world></sdf>"
    )
    with pytest.raises(BbRobotError, match="reference_frame"):
        load_model(str(world), [str(tmp_path)])


def test_a_model_joined_to_the_world_is_not_placed_twice(corpus_dir: Path) -> None:
    from bb_robot.description.core import prepare, static_transforms

    loaded = load_model("joint_position_controller.sdf", [str(corpus_dir / "gz_sim" / "examples" / "worlds")])
    assert loaded.robot.root_link == "world" and loaded.placement is None
    assert all(parent != child for parent, child, _, _ in static_transforms(prepare(loaded)))
