"""Topic derivation from SDF worlds (``bb_robot.gzsim.topics``) against gz-sim 8's naming rules.

Every expected topic below was worked out by hand from gz-sim 8's sources (branch ``gz-sim8``);
the comment next to it names the rule (the module docstring of ``bb_robot/gzsim/topics.py`` and
``docs/nodes/gazebo.md`` give them in full):

- [owner]  a plugin belongs to the model holding it; one in an ``<include>`` to the included model
           (``SdfEntityCreator::LoadModelPlugins``: every model's plugins, nested ones too);
- [name]   JointPositionController / JointController / ApplyJointForce / JointTrajectoryController
           topics use ``Model::Name``: the model's own name, not its scope;
- [scoped] JointStatePublisher uses ``topicFromScopedName``: ``/world/<w>/model/<a>/model/<b>``;
- [valid]  ``TopicUtils::AsValidTopic`` (spaces → ``_``; ``@ ~ // :=`` dropped) and relative topics
           made absolute (``FullyQualifiedName`` with the empty namespace);
- [jpc]    JointPositionController: ``<topic>`` > ``/model/<name>/<sub_topic>`` > ``/actuators`` (with
           ``<use_actuator_msg>`` and ``<actuator_number>``) > ``/model/<name>/joint/<j>/<index>/cmd_pos``;
           ``<joint_name>`` scoped relative to the model (``entitiesFromScopedName``);
- [jc]     JointController: the same without the index, ``.../cmd_vel``; own joints only (``JointByName``);
- [ajf]    ApplyJointForce: ``/model/<name>/joint/<j>/cmd_force`` only;
- [jtc]    JointTrajectoryController: ``<topic>`` else ``/model/<name>/joint_trajectory``, progress on
           ``<topic>_progress``; listed or all single-axis own joints;
- [jsp]    JointStatePublisher: ``<topic>`` if valid else [scoped] + ``/joint_state``; own joints only.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.robots import UR3E_JOINTS

from bb_robot.gzsim.names import absolute_topic, as_valid_topic, scoped_topic
from bb_robot.gzsim.topics import (
    ACTUATORS,
    DOUBLE,
    JOINT_TRAJECTORY,
    GazeboTopics,
    TopicError,
    derive_topics,
    parse_override,
    with_overrides,
)
from bb_robot.sdf import load_from_file


def _topics(path: Path, scope: str = "", **options: object) -> GazeboTopics:
    resource_paths = options.pop("resource_paths", None)
    result = load_from_file(path, scope, resource_paths=resource_paths, build_serial=False)  # type: ignore[arg-type]
    return derive_topics(result, **options)  # type: ignore[arg-type]


def _routes(topics: GazeboTopics) -> dict[tuple[str, str], tuple[str, str, int | None]]:
    return {(c.joint, c.interface): (c.topic, c.type_name, c.actuator) for c in topics.commands}


# ------------------------------------------------------------------ acceptance: the seed's world
def test_seed_ur3e_world_gives_the_seed_configuration(corpus_dir: Path) -> None:
    world = corpus_dir / "sas_robot_driver_gazebo" / "sdf" / "ur3e_world.sdf"
    topics = _topics(world, resource_paths=[corpus_dir / "sas_robot_driver_gazebo" / "sdf"])
    assert topics.scope == "ur3e::ur3e_position_controller::ur3e"
    assert topics.joints == UR3E_JOINTS
    # [owner] the plugins are written in the <include> of ur3e.sdf inside ur3e_position_controller,
    # so they belong to the model 'ur3e::ur3e_position_controller::ur3e'; [name] its own name is 'ur3e';
    # [jpc] no <topic>/<sub_topic>/<use_actuator_msg>, <joint_index> 0.
    assert _routes(topics) == {
        (joint, "position"): (f"/model/ur3e/joint/{joint}/0/cmd_pos", DOUBLE, None) for joint in UR3E_JOINTS
    }
    # [jsp] + [scoped]: world ur3e_world, then each model from the top.
    assert [s.topic for s in topics.states] == [
        "/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state"
    ]
    # Gazebo's messages carry the bare joint names (components::Name of each joint).
    assert topics.states[0].joints == {joint: joint for joint in UR3E_JOINTS}
    assert topics.clock == "/world/ur3e_world/clock"
    assert topics.warnings == ()


# ------------------------------------------------------------------ gz-sim's example worlds
def test_gz_sim_joint_position_controller_example(corpus_dir: Path) -> None:
    topics = _topics(corpus_dir / "gz_sim" / "examples" / "worlds" / "joint_position_controller.sdf")
    # [jpc] <topic>rotor_cmd</topic>; [valid] relative -> /rotor_cmd (the example's own comment uses it)
    assert _routes(topics) == {("j1", "position"): ("/rotor_cmd", DOUBLE, None)}
    assert topics.states == ()  # no JointStatePublisher in that world


@pytest.mark.parametrize(
    ("scope", "topic"),
    [
        # [jtc] default /model/<own name>/joint_trajectory, the two listed joints
        ("RR_position_control", "/model/RR_position_control/joint_trajectory"),
        # [jtc] no <joint_name>: every single-axis joint of the model (the fixed world joint is not)
        ("RR_velocity_control", "/model/RR_velocity_control/joint_trajectory"),
        # [jtc] + [valid] <topic>custom_topic_effort_control</topic> is relative -> absolute
        ("RR_effort_control", "/custom_topic_effort_control"),
    ],
)
def test_gz_sim_joint_trajectory_controller_example(corpus_dir: Path, scope: str, topic: str) -> None:
    topics = _topics(corpus_dir / "gz_sim" / "examples" / "worlds" / "joint_trajectory_controller.sdf", scope)
    joints = (f"{scope}_joint1", f"{scope}_joint2")
    assert topics.joints == joints
    assert _routes(topics) == {(j, "trajectory"): (topic, JOINT_TRAJECTORY, None) for j in joints}
    assert {c.gz_joint for c in topics.commands} == set(joints)
    assert {c.progress_topic for c in topics.commands} == {topic + "_progress"}


def test_gz_sim_nested_model_joint_positions_example(corpus_dir: Path) -> None:
    world = corpus_dir / "gz_sim" / "examples" / "worlds" / "nested_model_joint_positions.sdf"
    topics = _topics(world, "model3")
    # [jpc] <joint_name>model31::rotor_joint</joint_name> is scoped relative to model3, reaching into
    # its nested model; each plugin has its own absolute <topic>.
    assert _routes(topics) == {
        ("rotor_joint", "position"): ("/model3/cmd_rotor", DOUBLE, None),
        ("model31::rotor_joint", "position"): ("/model31/cmd_rotor", DOUBLE, None),
        ("model32::rotor_joint", "position"): ("/model32/cmd_rotor", DOUBLE, None),
    }
    # model4's plugins live in model4 and control joints of model41/model42 through scoped names.
    topics = _topics(world, "model4")
    assert _routes(topics) == {
        ("model41::rotor_joint", "position"): ("/model41/cmd_rotor", DOUBLE, None),
        ("model42::rotor_joint", "position"): ("/model42/cmd_rotor", DOUBLE, None),
    }


# ------------------------------------------------------------------ nested and included models
MODEL = """<model name="{name}">
    <link name="base"/>
    <link name="l1"/>
    <link name="l2"/>
    <joint name="j1" type="revolute"><parent>base</parent><child>l1</child>
      <axis><xyz>0 0 1</xyz><limit><lower>-2</lower><upper>2</upper></limit></axis></joint>
    <joint name="j2" type="prismatic"><parent>l1</parent><child>l2</child>
      <axis><xyz>1 0 0</xyz><limit><lower>0</lower><upper>0.5</upper></limit></axis></joint>
    {plugins}
  </model>"""
ARM = '<?xml version="1.0"?>\n<sdf version="1.9">' + MODEL + "</sdf>"


def _world_with_arm(directory: Path, plugins: str) -> Path:
    """A world 'w' holding the arm model 'arm' directly, with ``plugins`` in it."""
    text = f'<sdf version="1.9"><world name="w">{MODEL.format(name="arm", plugins=plugins)}</world></sdf>'
    return _write(directory, "world.sdf", text)


def _plugin(system: str, body: str = "") -> str:
    library = {
        "JointPositionController": "joint-position-controller",
        "JointController": "joint-controller",
        "ApplyJointForce": "apply-joint-force",
        "JointTrajectoryController": "joint-trajectory-controller",
        "JointStatePublisher": "joint-state-publisher",
    }[system]
    return f'<plugin filename="gz-sim-{library}-system" name="gz::sim::systems::{system}">{body}</plugin>'


def _write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


def test_plugins_in_an_include_inside_a_nested_model(tmp_path: Path) -> None:
    _write(tmp_path, "arm.sdf", ARM.format(name="arm", plugins=""))
    plugins = "".join(
        [
            _plugin("JointPositionController", "<joint_name>j1</joint_name>"),
            _plugin("JointController", "<joint_name>j1</joint_name>"),
            _plugin("ApplyJointForce", "<joint_name>j2</joint_name>"),
            _plugin("JointStatePublisher"),
        ]
    )
    world = _write(
        tmp_path,
        "world.sdf",
        f"""<?xml version="1.0"?>
<sdf version="1.9"><world name="lab">
  <model name="cell">
    <model name="station">
      <link name="plate"/>
      <include><uri>arm.sdf</uri><name>left arm</name>{plugins}</include>
    </model>
  </model>
</world></sdf>""",
    )
    topics = _topics(world)
    assert topics.scope == "cell::station::left arm"
    # [owner] the include's plugins belong to 'cell::station::left arm'; [name] its own name;
    # [valid] the space becomes '_'.
    assert _routes(topics) == {
        ("j1", "position"): ("/model/left_arm/joint/j1/0/cmd_pos", DOUBLE, None),  # [jpc] default
        ("j1", "velocity"): ("/model/left_arm/joint/j1/cmd_vel", DOUBLE, None),  # [jc] default
        ("j2", "effort"): ("/model/left_arm/joint/j2/cmd_force", DOUBLE, None),  # [ajf]
    }
    # [jsp] + [scoped] + [valid]
    assert [s.topic for s in topics.states] == ["/world/lab/model/cell/model/station/model/left_arm/joint_state"]
    # A position and a velocity controller on one joint fight in Gazebo: said.
    assert any("j1 has position and velocity controllers" in w for w in topics.warnings)


def test_two_included_arms_each_get_their_own_topics(tmp_path: Path) -> None:
    _write(tmp_path, "arm.sdf", ARM.format(name="arm", plugins=_plugin("JointStatePublisher")))
    includes = "".join(
        f"<include><uri>arm.sdf</uri><name>{side}</name><pose>0 {y} 0 0 0 0</pose>"
        + _plugin("JointPositionController", "<joint_name>j1</joint_name><sub_topic>j1_cmd</sub_topic>")
        + "</include>"
        for side, y in (("left", 1), ("right", -1))
    )
    world = _write(tmp_path, "world.sdf", f'<sdf version="1.9"><world name="two">{includes}</world></sdf>')
    for side in ("left", "right"):
        topics = _topics(world, side)
        # [jpc] <sub_topic> -> /model/<own name>/<sub_topic>
        assert _routes(topics) == {("j1", "position"): (f"/model/{side}/j1_cmd", DOUBLE, None)}
        # [owner] the JointStatePublisher written in arm.sdf belongs to each included copy.
        assert [s.topic for s in topics.states] == [f"/world/two/model/{side}/joint_state"]


def test_plugin_in_an_outer_model_reaching_into_the_robot(tmp_path: Path) -> None:
    _write(tmp_path, "arm.sdf", ARM.format(name="arm", plugins=""))
    outer = "".join(
        [
            # [jpc] a scoped <joint_name> relative to the wrapper finds the arm's joint
            _plugin("JointPositionController", "<joint_name>arm::j1</joint_name>"),
            # [jc] JointByName: only the wrapper's own joints; 'arm::j2' is not found in Gazebo
            _plugin("JointController", "<joint_name>arm::j2</joint_name>"),
            # [jsp] only the wrapper's own joints (none of the robot's): no state topic from it
            _plugin("JointStatePublisher"),
        ]
    )
    world = _write(
        tmp_path,
        "world.sdf",
        f"""<sdf version="1.9"><world name="w"><model name="wrapper">
  <include><uri>arm.sdf</uri><name>arm</name></include>{outer}
</model></world></sdf>""",
    )
    topics = _topics(world)
    assert topics.scope == "wrapper::arm"
    # [name] the wrapper's own name; the joint name as written
    assert _routes(topics) == {("j1", "position"): ("/model/wrapper/joint/arm::j1/0/cmd_pos", DOUBLE, None)}
    assert topics.states == ()


def test_merged_include_plugins_belong_to_the_including_model(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "arm.sdf",
        ARM.format(name="arm", plugins=_plugin("JointPositionController", "<joint_name>j1</joint_name>")),
    )
    world = _write(
        tmp_path,
        "world.sdf",
        """<sdf version="1.9"><world name="w"><model name="robot">
  <include merge="true"><uri>arm.sdf</uri></include>
</model></world></sdf>""",
    )
    topics = _topics(world)
    # [owner] a merge-include splices its plugins into the including model: /model/robot/...
    assert _routes(topics) == {("j1", "position"): ("/model/robot/joint/j1/0/cmd_pos", DOUBLE, None)}


def test_controller_settings(tmp_path: Path) -> None:
    plugins = "".join(
        [
            # [jpc] <use_actuator_msg> with <actuator_number>: /actuators, gz.msgs.Actuators position[3]
            _plugin(
                "JointPositionController",
                "<joint_name>j1</joint_name><use_actuator_msg> True </use_actuator_msg>"
                "<actuator_number>3</actuator_number>",
            ),
            # [jc] + <topic> beats <sub_topic>; Actuators velocity[1] on that topic
            _plugin(
                "JointController",
                "<joint_name>j2</joint_name><sub_topic>x</sub_topic><topic>vel cmds</topic>"
                "<use_actuator_msg>1</use_actuator_msg><actuator_number>1</actuator_number>",
            ),
            # [jtc] listed joints only, <topic>
            _plugin("JointTrajectoryController", "<joint_name>j2</joint_name><topic>/traj</topic>"),
            # [jsp] <topic>, listed joints only
            _plugin("JointStatePublisher", "<joint_name>j1</joint_name><topic>/states/arm</topic>"),
            _plugin("JointStatePublisher", "<joint_name>j2</joint_name><topic>bad@topic~</topic>"),
        ]
    )
    topics = _topics(_world_with_arm(tmp_path, plugins))
    assert _routes(topics) == {
        ("j1", "position"): ("/actuators", ACTUATORS, 3),
        ("j2", "velocity"): ("/vel_cmds", ACTUATORS, 1),  # [valid] space -> '_', made absolute
        ("j2", "trajectory"): ("/traj", JOINT_TRAJECTORY, None),
    }
    # [jsp] 'bad@topic~' is made valid ('badtopic', absolute) by AsValidTopic
    assert {s.topic: dict(s.joints) for s in topics.states} == {"/states/arm": {"j1": "j1"}, "/badtopic": {"j2": "j2"}}


def test_joint_index_actuator_without_number_and_invalid_topics(tmp_path: Path) -> None:
    plugins = "".join(
        [
            # [jpc] <joint_index>1 on a single-axis joint: Gazebo refuses it -> not used, said
            _plugin("JointPositionController", "<joint_name>j1</joint_name><joint_index>1</joint_index>"),
            # [jpc] <use_actuator_msg> without <actuator_number>: Double on the default topic
            _plugin("JointPositionController", "<joint_name>j2</joint_name><use_actuator_msg>true</use_actuator_msg>"),
            # [jc] an invalid <topic> ('/' only): Gazebo does not subscribe
            _plugin("JointController", "<joint_name>j1</joint_name><topic>/</topic>"),
            # [jpc] a <sub_topic> with a leading '/' gives '//' which AsValidTopic removes
            _plugin("JointPositionController", "<joint_name>j1</joint_name><sub_topic>/cmd</sub_topic>"),
            # no <joint_name>: not loaded
            _plugin("ApplyJointForce"),
            # several joints in one controller: only the first is driven through it
            _plugin("JointController", "<joint_name>j2</joint_name><joint_name>j1</joint_name>"),
        ]
    )
    topics = _topics(_world_with_arm(tmp_path, plugins))
    assert _routes(topics) == {
        ("j2", "position"): ("/model/arm/joint/j2/0/cmd_pos", DOUBLE, None),
        ("j1", "position"): ("/model/armcmd", DOUBLE, None),
        ("j2", "velocity"): ("/model/arm/joint/j2/cmd_vel", DOUBLE, None),
    }
    text = "\n".join(topics.warnings)
    assert "<joint_index>1</joint_index>" in text
    assert "without <actuator_number>" in text
    assert "no valid topic" in text
    assert "ApplyJointForce has no <joint_name>" in text
    assert "moves j1 together with j2" in text


def test_model_file_needs_a_world_name(corpus_dir: Path) -> None:
    model = corpus_dir / "sas_robot_driver_gazebo" / "sdf" / "iiwa14_position_controller.sdf"
    paths = [corpus_dir / "sas_robot_driver_gazebo" / "sdf"]
    topics = _topics(model, resource_paths=paths)
    assert topics.scope == "r820_position_controller::r820"
    # [owner] + [name]: the include is named r820
    assert _routes(topics)[("joint1", "position")] == ("/model/r820/joint/joint1/0/cmd_pos", DOUBLE, None)
    assert topics.states == () and topics.clock is None
    assert any("names no world" in w for w in topics.warnings)
    # Spawned into world 'lab' under the name 'iiwa': [scoped] from the spawned name down.
    topics = _topics(model, resource_paths=paths, world_name="lab", model_name="iiwa")
    assert [s.topic for s in topics.states] == ["/world/lab/model/iiwa/model/r820/joint_state"]
    assert topics.clock == "/world/lab/clock"


# ------------------------------------------------------------------ names and overrides
def test_as_valid_topic_matches_gz_transport() -> None:
    # TopicUtils::AsValidTopic of gz-transport 13 (and its tests' cases)
    assert as_valid_topic("/model/my robot/cmd") == "/model/my_robot/cmd"
    assert as_valid_topic("a@b~c:=d//e") == "abcde"
    assert as_valid_topic("///a") == "/a"
    assert as_valid_topic("/") == ""
    assert as_valid_topic("@@") == ""
    assert as_valid_topic("/a/@/b") == ""  # removing '@' leaves '//': invalid
    assert absolute_topic("rotor_cmd/") == "/rotor_cmd"
    assert scoped_topic("w", "a::b c") == "/world/w/model/a/model/b_c"


def test_overrides() -> None:
    assert parse_override("j1=/my/cmd") == ("j1", "/my/cmd", None)
    assert parse_override(" j1 = /actuators@4 ") == ("j1", "/actuators", 4)
    for bad in ("j1", "=/x", "j1=/a b", "j1=/x@y"):
        with pytest.raises(TopicError):
            parse_override(bad)
    base = GazeboTopics(world="w", scope="arm", joints=("j1", "j2"), commands=(), states=(), clock="/world/w/clock")
    topics = with_overrides(base, position=["j1=/p1"], velocity=["j2=/v@2"], joint_state=["/js"], clock="/clk")
    assert _routes(topics) == {("j1", "position"): ("/p1", DOUBLE, None), ("j2", "velocity"): ("/v", ACTUATORS, 2)}
    assert [(s.topic, dict(s.joints)) for s in topics.states] == [("/js", {"j1": "j1", "j2": "j2"})]
    assert topics.clock == "/clk"
    with pytest.raises(TopicError, match="not a driven joint"):
        with_overrides(base, effort=["j9=/e"])
