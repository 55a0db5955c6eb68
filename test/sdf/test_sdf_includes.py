"""``<include>``: URI resolution (never the current directory, never the network), the overrides
(name, pose, static, placement_frame, plugins), merge-includes, and the errors for missing files,
cycles, depth and Fuel URIs."""

from __future__ import annotations

import math
import os
import socket
from pathlib import Path

import numpy as np
import pytest
from helpers.sdf_transforms import T

from bb_robot.sdf import IncludeError, SdfStructureError, read_document, resolve
from bb_robot.sdf.errors import FrameError
from bb_robot.sdf.loader import load_from_file
from bb_robot.sdf.resources import model_file_in_directory, resolve_resource, search_directories

ARM = """<sdf version="{version}">
  <model name="arm">
    <pose>0 0 {z} 0 0 0</pose>
    <link name="base"/>
    <link name="tip"><pose>0 0 0.5 0 0 0</pose></link>
    <frame name="tool" attached_to="tip"><pose>0 0 0.1 0 0 0</pose></frame>
    <joint name="j" type="revolute"><parent>base</parent><child>tip</child></joint>
    <plugin name="own" filename="own-plugin"/>
  </model>
</sdf>
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def model_dir(root: Path, name: str = "arm", versions: dict[str, str] | None = None, z: float = 0.0) -> Path:
    directory = root / name
    entries = versions or {"1.9": "model.sdf"}
    for file in set(entries.values()):
        write(directory / file, ARM.format(version="1.9", z=z))
    sdfs = "".join(f'<sdf version="{v}">{f}</sdf>' for v, f in entries.items())
    write(directory / "model.config", f"<?xml version='1.0'?><model><name>{name}</name>{sdfs}</model>")
    return directory


def world(body: str, version: str = "1.9") -> str:
    return f'<sdf version="{version}"><world name="w">{body}</world></sdf>'


# --------------------------------------------------------------------------- overrides
def test_include_overrides_name_pose_static_and_plugins(tmp_path: Path) -> None:
    models = tmp_path / "models"
    model_dir(models, z=5.0)
    top = write(
        tmp_path / "w.sdf",
        world(
            "<include><uri>model://arm</uri></include>"
            "<include><uri>model://arm</uri><name>second</name><static>true</static>"
            '<pose degrees="true">1 2 3 0 0 90</pose>'
            '<plugin name="extra" filename="extra-plugin"><gain>2</gain><joint_name>j</joint_name></plugin>'
            "</include>"
        ),
    )
    document = read_document(top, resource_paths=[models])
    first, second = document.world.models  # type: ignore[union-attr]
    assert (first.name, second.name) == ("arm", "second")
    assert (first.static, second.static) == (False, True)
    assert first.uri == second.uri == "model://arm"
    graph = resolve(document)
    np.testing.assert_allclose(graph.world_pose("arm", "model"), T((0, 0, 5)))  # the model's own pose
    np.testing.assert_allclose(graph.world_pose("second", "model"), T((1, 2, 3), (0, 0, math.pi / 2)), atol=1e-15)
    np.testing.assert_allclose(graph.world_pose("second::tool"), T((1, 2, 3.6), (0, 0, math.pi / 2)), atol=1e-15)
    assert [(p.name, p.from_include) for p in second.plugins] == [("own", False), ("extra", True)]
    assert second.plugins[1].filename == "extra-plugin"
    assert second.plugins[1].xml == "<gain>2</gain><joint_name>j</joint_name>"
    assert document.files == (str(top), str((models / "arm" / "model.sdf").resolve()))


def test_include_pose_relative_to_and_placement_frame(tmp_path: Path) -> None:
    model_dir(tmp_path)
    top = write(
        tmp_path / "w.sdf",
        world(
            '<frame name="table"><pose>1 0 0.7 0 0 0</pose></frame>'
            "<include><uri>arm</uri><name>placed</name>"
            '<pose relative_to="table">0 0 0 0 0 0</pose><placement_frame>tool</placement_frame></include>'
        ),
    )
    graph = resolve(read_document(top))
    np.testing.assert_allclose(graph.world_pose("placed::tool", "frame"), T((1, 0, 0.7)), atol=1e-15)
    np.testing.assert_allclose(graph.world_pose("placed", "model"), T((1, 0, 0.1)), atol=1e-15)


def test_placement_frame_needs_a_pose(tmp_path: Path) -> None:
    model_dir(tmp_path)
    top = write(tmp_path / "w.sdf", world("<include><uri>arm</uri><placement_frame>tool</placement_frame></include>"))
    with pytest.raises(FrameError) as caught:
        read_document(top)
    assert caught.value.kind == "placement_frame"
    assert str(caught.value).startswith(f"{top}:1: <include> 'arm': <placement_frame> needs a <pose>")


def test_two_instances_of_one_model(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    path = corpus_dir / "synthetic/sdf_world_two_ur3e_includes.sdf"
    for scope, pose in (("left_arm", T((0, 0.5, 0.75))), ("right_arm", T((0, -0.5, 0.75), (0, 0, math.pi / 2)))):
        result = load_from_file(path, scope, resource_paths=corpus_resource_paths, build_serial=False)
        assert result.source_scope == scope
        np.testing.assert_allclose(result.model_pose, pose, atol=1e-15)
        np.testing.assert_allclose(result.base_pose, pose, atol=1e-15)
        assert result.converted.world_joints == ("left_fix" if scope == "left_arm" else "right_fix",)
        assert result.world.name == "two_arms"
        assert result.world.models == ("table", "left_arm", "right_arm")


def test_plugins_written_in_includes_reach_the_model(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    result = load_from_file(
        corpus_dir / "sas_robot_driver_gazebo/sdf/ur3e_world.sdf", resource_paths=corpus_resource_paths
    )
    plugins = result.world.plugins["ur3e::ur3e_position_controller::ur3e"]
    assert len(plugins) == 7 and all(p.from_include for p in plugins)
    joints = [p.xml.split("<joint_name>")[1].split("</joint_name>")[0] for p in plugins[:6]]
    assert tuple(joints) == result.joint_names
    assert plugins[6].name == "gz::sim::systems::JointStatePublisher"
    assert result.world.plugins["ur3e"] == () and result.world.plugins["frame_x"] == ()
    assert [p.filename for p in result.world.world_plugins] == [
        "gz-sim-physics-system",
        "gz-sim-scene-broadcaster-system",
        "gz-sim-user-commands-system",
    ]
    assert result.world.models == (
        "ur3e",
        "ur3e::ur3e_position_controller",
        "ur3e::ur3e_position_controller::ur3e",
        "frame_x",
        "frame_xd",
    )


# --------------------------------------------------------------------------- resolution
def test_relative_uris_start_at_the_including_file_not_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real"
    decoy = tmp_path / "decoy"
    write(real / "sub" / "arm.sdf", ARM.format(version="1.9", z=1.0))
    write(decoy / "sub" / "arm.sdf", ARM.format(version="1.9", z=9.0))
    write(
        real / "sub" / "wrapper.sdf",
        '<sdf version="1.9"><model name="wrap"><include><uri>arm.sdf</uri></include></model></sdf>',
    )
    top = write(real / "w.sdf", world("<include><uri>sub/wrapper.sdf</uri></include>"))
    monkeypatch.chdir(decoy)
    graph = resolve(read_document(top))
    np.testing.assert_allclose(graph.world_pose("wrap::arm", "model"), T((0, 0, 1)))
    monkeypatch.chdir(tmp_path)  # a relative top-level path is read against the current directory
    graph = resolve(read_document(Path("real/w.sdf")))
    np.testing.assert_allclose(graph.world_pose("wrap::arm", "model"), T((0, 0, 1)))


def test_search_order_and_environment(tmp_path: Path) -> None:
    first, second, third = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    model_dir(first, z=1.0)
    model_dir(second, z=2.0)
    model_dir(third, z=3.0)
    top = write(tmp_path / "top" / "w.sdf", world("<include><uri>model://arm</uri></include>"))
    env = {"GZ_SIM_RESOURCE_PATH": os.pathsep.join([str(second), ""]), "SDF_PATH": str(third)}
    z = {}
    for label, paths, environ in (
        ("explicit first", [first], env),
        ("GZ_SIM_RESOURCE_PATH", None, env),
        ("SDF_PATH", None, {"SDF_PATH": str(third)}),
    ):
        graph = resolve(read_document(top, resource_paths=paths, environ=environ))
        z[label] = graph.world_pose("arm", "model")[2, 3]
    assert z == {"explicit first": 1.0, "GZ_SIM_RESOURCE_PATH": 2.0, "SDF_PATH": 3.0}
    assert search_directories([first], env) == (first, second, third)


def test_model_uris_naming_files_directories_and_sub_paths(tmp_path: Path) -> None:
    model_dir(tmp_path / "res")
    write(tmp_path / "res" / "single.sdf", ARM.format(version="1.9", z=4.0).replace('"arm"', '"single"'))
    top = write(
        tmp_path / "w.sdf",
        world(
            "<include><uri>model://single.sdf</uri></include>"
            "<include><uri>model://arm/model.sdf</uri><name>by_path</name></include>"
            f"<include><uri>file://{tmp_path / 'res' / 'arm'}</uri><name>by_file_uri</name></include>"
            f"<include><uri>{tmp_path / 'res' / 'arm' / 'model.sdf'}</uri><name>absolute</name></include>"
        ),
    )
    document = read_document(top, resource_paths=[tmp_path / "res"])
    assert [m.name for m in document.world.models] == ["single", "by_path", "by_file_uri", "absolute"]  # type: ignore[union-attr]
    assert (
        resolve_resource("model://arm/model.config", None, [tmp_path / "res"])
        == (tmp_path / "res/arm/model.config").resolve()
    )
    assert resolve_resource("https://example.com/x.dae", None, [tmp_path]) is None


def test_model_config_picks_the_newest_readable_version(tmp_path: Path) -> None:
    chosen, _ = model_file_in_directory(
        model_dir(tmp_path / "a", versions={"1.6": "old.sdf", "1.9": "new.sdf", "1.8": "mid.sdf"})
    )
    assert chosen.name == "new.sdf"
    chosen, warnings = model_file_in_directory(
        model_dir(tmp_path / "b", versions={"1.9": "ok.sdf", "2.0": "future.sdf"})
    )
    assert chosen.name == "ok.sdf" and "2.0" in warnings[0]
    chosen, _ = model_file_in_directory(model_dir(tmp_path / "c", versions={"3.0": "first.sdf", "4.0": "second.sdf"}))
    assert chosen.name == "first.sdf"


def test_directory_without_model_config(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    top = write(tmp_path / "w.sdf", world("<include><uri>model://empty</uri></include>"))
    with pytest.raises(IncludeError) as caught:
        read_document(top, resource_paths=[tmp_path])
    assert caught.value.kind == "bad_config"
    assert "holds no model.config" in str(caught.value)


def test_included_light_is_skipped_with_a_warning(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    document = read_document(corpus_dir / "sdformat/test/sdf/includes.sdf", resource_paths=corpus_resource_paths)
    assert [m.scoped_name for m in document.models()] == [
        "test_model",
        "override_model_name",
        "test_model_with_file",
        "test_model_with_ns",
    ]
    skipped = [w for w in document.warnings if "skipped" in w]
    assert len(skipped) == 4 and sum("<light>" in w for w in skipped) == 2


# --------------------------------------------------------------------------- errors
def test_missing_include_lists_the_places_searched(tmp_path: Path) -> None:
    top = write(tmp_path / "w.sdf", world("\n<include>\n<uri>model://nothing</uri></include>"))
    env = {"GZ_SIM_RESOURCE_PATH": str(tmp_path / "env")}
    with pytest.raises(IncludeError) as caught:
        read_document(top, resource_paths=[tmp_path / "extra"], environ=env)
    error = caught.value
    assert error.kind == "missing"
    assert error.searched == (str(tmp_path / "nothing"), str(tmp_path / "extra/nothing"), str(tmp_path / "env/nothing"))
    message = str(error)
    assert message.startswith(f"{top}:3: <include> 'model://nothing': cannot be found; looked for: ")
    assert "GZ_SIM_RESOURCE_PATH" in message and "resource_paths" in message


@pytest.mark.timeout(10)
def test_include_cycle_is_an_error_naming_the_chain(tmp_path: Path) -> None:
    write(
        tmp_path / "a.sdf",
        '<sdf version="1.9"><model name="a"><link name="l"/><include><uri>b.sdf</uri></include></model></sdf>',
    )
    write(
        tmp_path / "b.sdf",
        '<sdf version="1.9"><model name="b"><link name="l"/><include><uri>a.sdf</uri></include></model></sdf>',
    )
    top = write(tmp_path / "w.sdf", world("<include><uri>a.sdf</uri></include>"))
    with pytest.raises(IncludeError) as caught:
        read_document(top)
    error = caught.value
    assert error.kind == "cycle"
    assert error.chain == (str(tmp_path / "a.sdf"), str(tmp_path / "b.sdf"), str(tmp_path / "a.sdf"))
    assert error.source == str(tmp_path / "b.sdf")
    assert "a.sdf -> " in str(error) and "b.sdf -> " in str(error)


def test_include_depth_is_capped(tmp_path: Path) -> None:
    for i in range(40):
        write(
            tmp_path / f"m{i}.sdf",
            f'<sdf version="1.9"><model name="m{i}"><link name="l"/>'
            f"<include><uri>m{i + 1}.sdf</uri></include></model></sdf>",
        )
    write(tmp_path / "m40.sdf", '<sdf version="1.9"><model name="m40"><link name="l"/></model></sdf>')
    with pytest.raises(IncludeError) as caught:
        read_document(tmp_path / "m0.sdf")
    assert caught.value.kind == "depth"
    assert "deeper than 32" in str(caught.value)


@pytest.mark.timeout(10)
def test_fuel_uris_are_refused_without_touching_the_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the loader opened a socket")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    top = write(
        tmp_path / "w.sdf",
        world("<include><uri>https://fuel.gazebosim.org/1.0/OpenRobotics/models/Coke</uri></include>"),
    )
    with pytest.raises(IncludeError) as caught:
        read_document(top)
    assert caught.value.kind == "network"
    assert caught.value.uri == "https://fuel.gazebosim.org/1.0/OpenRobotics/models/Coke"
    assert "not fetched" in str(caught.value) and "gz fuel download" in str(caught.value)


def test_include_without_uri(tmp_path: Path) -> None:
    top = write(tmp_path / "w.sdf", world("<include><name>x</name></include>"))
    with pytest.raises(SdfStructureError, match="needs a <uri>"):
        read_document(top)


def test_included_file_without_a_model(tmp_path: Path) -> None:
    write(tmp_path / "nothing.sdf", '<sdf version="1.9"><world name="inner"/></sdf>')
    top = write(tmp_path / "w.sdf", world("<include><uri>nothing.sdf</uri></include>"))
    with pytest.raises(IncludeError) as caught:
        read_document(top)
    assert caught.value.kind == "no_model"


# --------------------------------------------------------------------------- merge
def test_merge_include_splices_the_model_through_a_proxy_frame(tmp_path: Path) -> None:
    model_dir(tmp_path)
    top = write(
        tmp_path / "robot.sdf",
        '<sdf version="1.9"><model name="robot"><link name="cart"/>'
        '<include merge="true"><uri>arm</uri><pose>1 0 0 0 0 0</pose></include>'
        '<joint name="mount" type="fixed"><parent>cart</parent><child>base</child></joint></model></sdf>',
    )
    document = read_document(top)
    robot = document.model
    assert robot is not None
    assert [link.name for link in robot.links] == ["cart", "base", "tip"]
    assert [frame.name for frame in robot.frames] == ["_merged__arm__model__", "tool"]
    assert [joint.name for joint in robot.joints] == ["j", "mount"]
    graph = resolve(document)
    np.testing.assert_allclose(graph.world_pose("robot::tip"), T((1, 0, 0.5)))
    np.testing.assert_allclose(graph.world_pose("robot::tool"), T((1, 0, 0.6)))
    assert graph.body("robot::_merged__arm__model__") == "robot::base"
    result = load_from_file(top, build_serial=False)
    assert result.joint_names == ("j",)
