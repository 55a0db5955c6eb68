"""The description node over real DDS: the node runs as a child process, this process subscribes.

Covers issue 4's list: late subscribers, TF equal to Pinocchio on corpus robots, frame_prefix,
source_list, reload (valid and invalid), rejected messages, fixed-only and 0-DOF robots, the
1000-link chain, model_dirs, the robot_state_publisher behaviours, the serial manipulator
and tip pose, publish_frequency and ignore_timestamp.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.description_oracle import (
    TOLERANCE,
    PinocchioOracle,
    compose,
    edges,
    stamp_ns,
    transform_matrix,
    worst_difference,
)
from helpers.nodes import TIMEOUT, NodeProcess, Probe, StartNode
from helpers.robots import UR3E_JOINTS, UR3E_LINKS

from bb_robot.urdf.builder import load_urdf

pytest.importorskip("tf2_msgs", reason="tf2_msgs is not built: run scripts/setup")
from geometry_msgs.msg import PoseStamped  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"


def installed_arm() -> Path:
    """The bb_arm.urdf the node finds in its default model_dirs (the installed share directory)."""
    from bb_robot.description.parameters import default_model_dirs

    return Path(default_model_dirs()[0]) / "bb_arm.urdf"


LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
STATIC = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
VOLATILE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


# ------------------------------------------------------------------------------ helpers
def urdf(name: str, body: str) -> str:
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n'


def link(name: str) -> str:
    return f'  <link name="{name}"/>'


def joint(name: str, kind: str, parent: str, child: str, extra: str = "") -> str:
    limit = '<limit lower="-3" upper="3" effort="1" velocity="1"/>' if kind in ("revolute", "prismatic") else ""
    return (
        f'  <joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="0.1 0.2 0.3" rpy="0.1 0.2 0.3"/><axis xyz="0 0 1"/>{limit}{extra}</joint>'
    )


class Session:
    """A running node and this process's subscriptions to everything it publishes."""

    def __init__(self, probe: Probe, node: NodeProcess, joint_topics: Sequence[str] = ("joint_states",)) -> None:
        self.probe, self.node = probe, node
        ns = node.namespace
        self.description = probe.subscribe(String, f"{ns}/robot_description", LATCHED)
        self.static = probe.subscribe(TFMessage, "/tf_static", STATIC)
        self.tf, self.tf_subscription = probe.subscription(TFMessage, "/tf", VOLATILE)
        self.serial = probe.subscribe(String, f"{ns}/description/serial_manipulator", LATCHED)
        self.tip = probe.subscribe(PoseStamped, f"{ns}/description/tip_pose", VOLATILE)
        self.publishers = {
            topic: probe.node.create_publisher(JointState, f"{ns}/{topic}", VOLATILE) for topic in joint_topics
        }
        self.stamp = 1000

    def wait_description(self, count: int = 1) -> str:
        assert self.probe.spin_until(lambda: len(self.description) >= count), (
            f"no robot_description #{count}:\n{self.node.log()}"
        )
        return str(self.description[-1].data)

    def wait_static(self, count: int = 1) -> list[Any]:
        assert self.probe.spin_until(lambda: len(self.static) >= count), f"no /tf_static #{count}:\n{self.node.log()}"
        return list(self.static[-1].transforms)

    def next_stamp(self) -> tuple[int, int]:
        self.stamp += 1
        return self.stamp, 0

    def send(self, names: Sequence[str], positions: Sequence[float], topic: str = "joint_states", **fields: Any) -> int:
        """Publish one JointState (stamp: a fresh whole second); return its stamp in ns."""
        publisher = self.publishers[topic]
        self.probe.wait_for_subscribers(publisher)
        sec, nanosec = fields.pop("stamp", self.next_stamp())
        msg = JointState(name=list(names), position=[float(p) for p in positions], **fields)
        msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
        publisher.publish(msg)
        return sec * 1_000_000_000 + nanosec

    def tf_at(self, stamp: int) -> list[Any]:
        return [t for message in self.tf for t in message.transforms if stamp_ns(t) == stamp]

    def exchange(self, names: Sequence[str], positions: Sequence[float], topic: str = "joint_states") -> list[Any]:
        """Publish a JointState until /tf answers it (the first may go out before /tf matched)."""
        stamp = self.next_stamp()
        self.probe.spin_until(lambda: self.tf_subscription.get_publisher_count() > 0)
        for _ in range(int(TIMEOUT / 0.5)):
            ns = self.send(names, positions, topic, stamp=stamp)
            if self.probe.spin_until(lambda ns=ns: bool(self.tf_at(ns)), 0.5):
                # the first answer (a busy node may answer a resent message twice)
                return next(list(m.transforms) for m in self.tf if m.transforms and stamp_ns(m.transforms[0]) == ns)
        raise AssertionError(f"no /tf for the joint state:\n{self.node.log()}")


def session(probe: Probe, start_node: StartNode, parameters: dict[str, Any], **kwargs: Any) -> Session:
    return Session(probe, start_node(parameters), **kwargs)


def random_values(robot: Any, names: Sequence[str], rng: np.random.Generator) -> list[float]:
    values = []
    for name in names:
        limits = robot.joints[name].limits
        if limits is not None and limits.lower is not None and limits.upper is not None:
            values.append(float(rng.uniform(limits.lower, limits.upper)))
        else:
            values.append(float(rng.uniform(-math.pi, math.pi)))
    return values


# ------------------------------------------------------------------------------ latched topics
def test_late_subscriber_gets_description_and_static_tf(probe: Probe, start_node: StartNode) -> None:
    node = start_node({"model": "bb_arm.urdf", "tip_link": "tcp"})
    node.wait_for_log("published robot_description")
    time.sleep(0.5)  # on purpose: the subscribers below join after the node has published
    s = Session(probe, node)
    assert s.wait_description() == installed_arm().read_text()  # the input text itself
    static = s.wait_static()
    assert len(s.static) == 1  # all fixed joints in one message
    robot = load_urdf(BB_ARM)
    fixed = {(j.parent_link, j.child_link) for j in robot.joints.values() if j.type == "fixed"}
    assert {(t.header.frame_id, t.child_frame_id) for t in static} == fixed
    assert probe.spin_until(lambda: bool(s.serial))
    chain = json.loads(s.serial[-1].data)
    assert chain["base_link"] == "base_link" and chain["tip_link"] == "tcp"
    assert [j["name"] for j in chain["joints"]] == list(UR3E_JOINTS)
    assert all(j["actuation"] == "RZ" for j in chain["joints"])
    assert node.alive()


# ------------------------------------------------------------------------------ TF against Pinocchio
@pytest.mark.parametrize(
    "relative", ["ur_description_ros2/ur5e.urdf", "moveit_resources/panda_description/urdf/panda.urdf"]
)
def test_tf_equals_pinocchio_at_random_joint_states(
    probe: Probe, start_node: StartNode, corpus_dir: Path, relative: str
) -> None:
    pytest.importorskip("pinocchio")
    path = corpus_dir / relative
    robot = load_urdf(path)
    oracle = PinocchioOracle(path)
    names = [j for j in robot.topology.joint_order if robot.joints[j].type != "fixed" and not robot.joints[j].mimic]
    s = session(probe, start_node, {"model": str(path), "model_dirs": [str(corpus_dir)]})
    static = edges(s.wait_static())
    rng = np.random.default_rng(4)
    for _ in range(4):
        values = random_values(robot, names, rng)
        moving = s.exchange(names, values)
        tree = {**static, **edges(moving)}
        ours = compose(tree, robot.root_link)
        reference = oracle.link_poses(dict(zip(names, values, strict=True)), list(robot.links))
        worst, where = worst_difference(ours, reference)
        assert worst <= TOLERANCE, f"{relative}: link '{where}' differs from Pinocchio by {worst:.3g}"
        # every movable joint, mimic ones included, and nothing else, is on /tf
        movable = {(j.parent_link, j.child_link) for j in robot.joints.values() if j.type != "fixed"}
        assert {(t.header.frame_id, t.child_frame_id) for t in moving} == movable


def test_tip_pose_equals_pinocchio(probe: Probe, start_node: StartNode, corpus_dir: Path) -> None:
    pytest.importorskip("pinocchio")
    path = corpus_dir / "ur_description_ros2/ur5e.urdf"
    robot = load_urdf(path)
    oracle = PinocchioOracle(path)
    names = [j for j in robot.topology.joint_order if robot.joints[j].type != "fixed"]
    s = session(
        probe,
        start_node,
        {"model": str(path), "model_dirs": [str(corpus_dir)], "tip_link": "tool0", "frame_prefix": "p/"},
    )
    s.wait_static()
    values = random_values(robot, names, np.random.default_rng(9))
    for _ in range(int(TIMEOUT)):
        s.exchange(names, values)
        if probe.spin_until(lambda: bool(s.tip), 1.0):
            break
    assert s.tip, s.node.log()
    pose = s.tip[-1]
    assert pose.header.frame_id == f"p/{robot.root_link}"  # the chain starts at the root link
    reference = oracle.link_poses(dict(zip(names, values, strict=True)), [robot.root_link, "tool0"])
    expected = np.linalg.inv(reference[robot.root_link]) @ reference["tool0"]
    p, q = pose.pose.position, pose.pose.orientation
    from types import SimpleNamespace

    as_tf = SimpleNamespace(transform=SimpleNamespace(translation=p, rotation=q))
    assert np.max(np.abs(transform_matrix(as_tf) - expected)) <= TOLERANCE


# ------------------------------------------------------------------------------ frames and sources
def test_frame_prefix_prefixes_every_frame(probe: Probe, start_node: StartNode) -> None:
    s = session(probe, start_node, {"model": "bb_arm.urdf", "frame_prefix": "left/", "tip_link": "tcp"})
    static = s.wait_static()
    assert static and all(
        t.header.frame_id.startswith("left/") and t.child_frame_id.startswith("left/") for t in static
    )
    moving = s.exchange(["shoulder_pan_joint"], [0.5])
    assert {(t.header.frame_id, t.child_frame_id) for t in moving} == {("left/base_link", "left/shoulder_link")}
    assert probe.spin_until(lambda: bool(s.serial))
    assert json.loads(s.serial[-1].data)["tip_link"] == "left/tcp"
    # topics follow the namespace, not the prefix
    assert s.wait_description().startswith('<?xml version="1.0"?>')


def test_source_list_merges_topics_and_holds_last_values(probe: Probe, start_node: StartNode) -> None:
    s = session(
        probe,
        start_node,
        {"model": "bb_arm.urdf", "source_list": ["arm_states", "gripper_states"]},
        joint_topics=("arm_states", "gripper_states"),
    )
    s.wait_static()
    arm = list(UR3E_JOINTS)
    first = s.exchange(arm, [0.1] * 6, topic="arm_states")
    # only joints seen so far: the fingers have not been named yet, and none is invented
    assert {t.child_frame_id for t in first} == set(UR3E_LINKS[1:])
    second = s.exchange(["left_finger_joint"], [0.01], topic="gripper_states")
    children = {t.child_frame_id: t for t in second}
    # the arm keeps its last values; the mimic finger follows the left one
    assert set(children) == {t.child_frame_id for t in first} | {"left_finger", "right_finger"}
    for t in first:
        assert transform_matrix(children[t.child_frame_id]) == pytest.approx(transform_matrix(t), abs=0)
    robot = load_urdf(BB_ARM)
    right = robot.joints["right_finger_joint"]
    assert right.mimic is not None and right.mimic.joint == "left_finger_joint"


def test_unknown_names_are_ignored_and_joints_published_once_seen(probe: Probe, start_node: StartNode) -> None:
    s = session(probe, start_node, {"model": "bb_arm.urdf"})
    s.wait_static()
    moving = s.exchange(["some_other_robot_joint", "elbow_joint"], [1.0, 0.3])
    assert {t.child_frame_id for t in moving} == {"forearm_link"}


# ------------------------------------------------------------------------------ bad input
def test_bad_messages_are_rejected_with_a_warning_and_the_node_lives_on(probe: Probe, start_node: StartNode) -> None:
    s = session(probe, start_node, {"model": "bb_arm.urdf"})
    s.wait_static()
    s.exchange(["elbow_joint"], [0.3])  # /tf is matched from here on
    s.send(["elbow_joint", "wrist_1_joint"], [0.1])  # length mismatch
    s.node.wait_for_log("2 names but 1 positions")
    s.send(["elbow_joint"], [float("nan")])
    s.node.wait_for_log("non-finite position")
    s.send(["elbow_joint"], [0.2], velocity=[1.0, 2.0])
    log = s.node.wait_for_log("velocity has 2 entries")
    assert f"{s.node.namespace}/joint_states" in log  # the warning names the topic
    rejected = [s.stamp - 2, s.stamp - 1, s.stamp]
    # empty velocity and effort are fine, and the node still answers
    moving = s.exchange(["elbow_joint"], [0.4])
    assert len(moving) == 1 and s.node.alive()
    # The node answers its messages on /tf in the order it takes them: the answer to the good one, sent
    # after the rejected ones, has come, so an answer to any of them would have come before it.
    assert not any(s.tf_at(sec * 1_000_000_000) for sec in rejected)


def test_floating_and_planar_joints_get_no_tf_and_a_warning(probe: Probe, start_node: StartNode) -> None:
    text = urdf(
        "floater",
        "\n".join(
            [
                link("world"),
                link("body"),
                link("slider"),
                link("arm"),
                joint("float", "floating", "world", "body"),
                joint("plane", "planar", "body", "slider"),
                joint("hinge", "continuous", "slider", "arm"),
            ]
        ),
    )
    s = session(probe, start_node, {"robot_description": text})
    s.wait_description()
    log = s.node.wait_for_log("no TF for the floating/planar joint(s)")
    assert "'float' (floating)" in log and "'plane' (planar)" in log
    moving = s.exchange(["float", "plane", "hinge"], [0.0, 0.0, 0.5])
    assert {t.child_frame_id for t in moving} == {"arm"}


# ------------------------------------------------------------------------------ special robots
def test_fixed_joint_only_robot(probe: Probe, start_node: StartNode) -> None:
    text = urdf(
        "fixed_only",
        "\n".join([link("a"), link("b"), link("c"), joint("ab", "fixed", "a", "b"), joint("bc", "fixed", "b", "c")]),
    )
    s = session(probe, start_node, {"robot_description": text})
    assert s.wait_description() == text
    static = s.wait_static()
    assert {(t.header.frame_id, t.child_frame_id) for t in static} == {("a", "b"), ("b", "c")}
    s.send(["ab"], [1.0])
    # A message the node rejects, sent after it on the same topic: once its warning is out, the node has
    # taken the first one (in order) and whatever it published for it is on its way.
    s.send(["ab", "bc"], [1.0])
    s.node.wait_for_log("2 names but 1 positions")
    probe.spin_for(0.5)
    assert not s.tf and s.node.alive()


def test_zero_dof_robot(probe: Probe, start_node: StartNode) -> None:
    text = urdf("lonely", link("only"))
    s = session(probe, start_node, {"robot_description": text})
    assert s.wait_description() == text
    assert s.wait_static() == []
    assert probe.spin_until(lambda: bool(s.serial))
    assert json.loads(s.serial[-1].data)["robot"] == "lonely"


def test_thousand_link_chain(probe: Probe, start_node: StartNode, corpus_dir: Path) -> None:
    pytest.importorskip("pinocchio")
    path = corpus_dir / "synthetic" / "long_chain_1000.urdf"
    robot = load_urdf(path)
    names = list(robot.topology.joint_order)
    s = session(probe, start_node, {"model": str(path), "model_dirs": [str(corpus_dir / "synthetic")]})
    assert s.wait_static() == []
    values = list(np.random.default_rng(1).uniform(-0.5, 0.5, len(names)))
    moving = s.exchange(names, values)
    assert len(moving) == 1000
    reference = PinocchioOracle(path).joint_transforms(dict(zip(names, values, strict=True)))
    ours = {robot.links[t.child_frame_id].parent_joint: transform_matrix(t) for t in moving}
    worst, where = worst_difference(ours, reference)
    assert worst <= TOLERANCE, f"joint '{where}' differs from Pinocchio by {worst:.3g}"


# ------------------------------------------------------------------------------ model_dirs
def test_model_outside_model_dirs_is_refused_at_start(start_node: StartNode, corpus_dir: Path) -> None:
    outside = corpus_dir / "ur_description_ros2" / "ur5e.urdf"
    node = start_node({"model": str(outside)})
    assert node.wait_for_exit() == 1
    log = node.log()
    assert str(outside) in log and "outside every directory of model_dirs" in log
    assert "share/bb_robot/models" in log or "/models'" in log  # the configured directories are named


def test_package_uri_and_relative_paths_resolve_inside_model_dirs(probe: Probe, start_node: StartNode) -> None:
    s = session(probe, start_node, {"model": "package://bb_robot/models/bb_arm.urdf"})
    assert s.wait_description() == installed_arm().read_text()


# ------------------------------------------------------------------------------ reload
def test_reload_valid_and_invalid(probe: Probe, start_node: StartNode, corpus_dir: Path, tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "arm.urdf").write_text(BB_ARM.read_text())
    ur5e = (corpus_dir / "ur_description_ros2" / "ur5e.urdf").read_text()
    (models / "ur5e.urdf").write_text(ur5e)
    (models / "broken.urdf").write_text("<robot name='x'><link name='a'/><joint name='j' type='fixed'></robot>")
    s = session(probe, start_node, {"model": "arm.urdf", "model_dirs": [str(models)]})
    s.wait_description()
    s.wait_static()

    results = probe.set_parameters(s.node.name, {"model": "ur5e.urdf"})
    assert results[0].successful, results[0].reason
    assert s.wait_description(2) == ur5e
    static = s.wait_static(2)
    assert ("tool0", "flange") in {(t.child_frame_id, t.header.frame_id) for t in static}

    for bad, expected in (
        ("broken.urdf", "broken.urdf"),
        ("missing.urdf", "not found in model_dirs"),
        (str(BB_ARM), "outside every directory of model_dirs"),
    ):
        results = probe.set_parameters(s.node.name, {"model": bad})
        assert not results[0].successful
        assert expected in results[0].reason
    probe.spin_for(0.3)
    assert len(s.description) == 2  # nothing republished
    # the old model stays: a late subscriber gets ur5e, and its joints still move
    late = probe.subscribe(String, f"{s.node.namespace}/robot_description", LATCHED)
    assert probe.spin_until(lambda: bool(late)) and late[-1].data == ur5e
    moving = s.exchange(["shoulder_pan_joint"], [0.2])
    assert {t.child_frame_id for t in moving} == {"shoulder_link"}
    assert len(s.description) == 2 and s.node.alive()  # still nothing republished


def test_robot_description_parameter_change_and_mimic_reload(probe: Probe, start_node: StartNode) -> None:
    """robot_state_publisher's tests: description change, and mimic joints after a reload."""
    plain = urdf("one", "\n".join([link("base"), link("a"), joint("ja", "continuous", "base", "a")]))
    with_mimic = urdf(
        "two",
        "\n".join(
            [
                link("base"),
                link("a"),
                link("b"),
                joint("ja", "continuous", "base", "a"),
                joint("jb", "continuous", "base", "b", '<mimic joint="ja" multiplier="2" offset="0.5"/>'),
            ]
        ),
    )
    s = session(probe, start_node, {"robot_description": plain})
    assert s.wait_description() == plain
    assert {t.child_frame_id for t in s.exchange(["ja"], [0.3])} == {"a"}
    results = probe.set_parameters(s.node.name, {"robot_description": with_mimic})
    assert results[0].successful, results[0].reason
    assert s.wait_description(2) == with_mimic
    moving = {t.child_frame_id: t for t in s.exchange(["ja"], [0.3])}
    assert set(moving) == {"a", "b"}
    rotation = moving["b"].transform.rotation
    _, _, angle = _rpy_about_z(transform_matrix(moving["b"]), transform_matrix(moving["a"]))
    assert angle == pytest.approx(2 * 0.3 + 0.5 - 0.3, abs=1e-12)  # b is at 1.1 rad, a at 0.3 rad
    assert rotation.w != 0.0
    # an invalid description is rejected with the reason and the model stays
    results = probe.set_parameters(s.node.name, {"robot_description": "<robot name='bad'>"})
    assert not results[0].successful and results[0].reason


def _rpy_about_z(b: np.ndarray, a: np.ndarray) -> tuple[float, float, float]:
    """The angle between two frames that share an origin and differ by a rotation about their z."""
    relative = np.linalg.inv(a) @ b
    return 0.0, 0.0, math.atan2(relative[1, 0], relative[0, 0])


def test_fixed_and_moving_joint_and_prefix_change(probe: Probe, start_node: StartNode) -> None:
    """robot_state_publisher's tests: a fixed joint on /tf_static, a moving continuous joint on /tf,
    and a frame_prefix change republishing /tf_static."""
    text = urdf(
        "two_links",
        "\n".join(
            [
                link("link1"),
                link("link2"),
                link("link3"),
                joint("j12", "fixed", "link1", "link2"),
                joint("j23", "continuous", "link2", "link3"),
            ]
        ),
    )
    s = session(probe, start_node, {"robot_description": text})
    static = s.wait_static()
    assert [(t.header.frame_id, t.child_frame_id) for t in static] == [("link1", "link2")]
    moving = s.exchange(["j23"], [math.pi / 2])
    assert [(t.header.frame_id, t.child_frame_id) for t in moving] == [("link2", "link3")]
    results = probe.set_parameters(s.node.name, {"frame_prefix": "robot/"})
    assert results[0].successful
    static = s.wait_static(2)
    assert [(t.header.frame_id, t.child_frame_id) for t in static] == [("robot/link1", "robot/link2")]
    moving = s.exchange(["j23"], [0.1])
    assert [(t.header.frame_id, t.child_frame_id) for t in moving] == [("robot/link2", "robot/link3")]


# ------------------------------------------------------------------------------ timing parameters
def test_publish_frequency_caps_the_rate_without_losing_the_latest_state(probe: Probe, start_node: StartNode) -> None:
    s = session(probe, start_node, {"model": "bb_arm.urdf", "publish_frequency": 5.0})
    s.wait_static()
    s.exchange(["elbow_joint"], [0.0])
    s.tf.clear()
    for i in range(40):
        s.send(["elbow_joint"], [0.01 * i])
        probe.spin_for(0.01)
    # The newest message is never dropped: its /tf comes (the throttle's timer sends it), the last one.
    newest = s.stamp * 1_000_000_000
    assert probe.spin_until(lambda: bool(s.tf) and stamp_ns(s.tf[-1].transforms[0]) == newest), (
        [stamp_ns(m.transforms[0]) for m in s.tf[-3:]],
        newest,
    )
    # Throttled: far fewer messages out than in (the rate law itself, with a controlled clock, is
    # tested in test/description/test_throttle_and_parameters.py; no wall-clock bound here).
    assert 1 <= len(s.tf) < 40


def test_ignore_timestamp_stamps_with_the_node_clock(probe: Probe, start_node: StartNode) -> None:
    s = session(probe, start_node, {"model": "bb_arm.urdf", "ignore_timestamp": True})
    s.wait_static()
    for _ in range(int(TIMEOUT)):
        s.send(["elbow_joint"], [0.1], stamp=(0, 0))
        if probe.spin_until(lambda: bool(s.tf), 1.0):
            break
    assert s.tf, s.node.log()
    stamp = stamp_ns(s.tf[-1].transforms[0]) / 1e9
    assert abs(stamp - time.time()) < 10.0


# ------------------------------------------------------------------------------ parameters
def test_parameters_are_declared_with_descriptions(probe: Probe, start_node: StartNode) -> None:
    from bb_robot.description.parameters import PARAMETERS

    s = session(probe, start_node, {"model": "bb_arm.urdf"})
    s.wait_description()
    names = [spec.name for spec in PARAMETERS]
    described = probe.call_client(s.node.name, "describe_parameters", [*names, "use_sim_time"]).descriptors
    by_name = {d.name: d for d in described}
    for spec in PARAMETERS:
        assert by_name[spec.name].description == spec.description
        assert by_name[spec.name].read_only == spec.read_only
    assert "use_sim_time" in by_name  # rclpy's own
    results = probe.set_parameters(s.node.name, {"model_dirs": ["/"]})
    assert not results[0].successful  # read-only: a peer cannot widen the trusted directories


# ------------------------------------------------------------------------------ SDF
def _sdformat_link_poses(model: dict[str, Any], values: dict[str, float]) -> dict[str, np.ndarray]:
    """World pose of each link of a libsdformat model at joint values, composed here from the frames
    libsdformat resolved at zero: a joint turns its child about its axis through its frame."""
    from helpers.libsdformat_reference import pose_matrix

    zero = {link["name"]: pose_matrix(link["world_pose"]) for link in model["links"]}
    poses: dict[str, np.ndarray] = {}
    joints = {j["child_link"]: j for j in model["joints"]}
    for name in zero:  # libsdformat lists a chain's links root first
        j = joints.get(name)
        if j is None or j["parent_link"] not in zero:
            poses[name] = zero[name]
            continue
        parent0, child0, frame0 = zero[j["parent_link"]], zero[name], pose_matrix(j["world_pose"])
        motion = np.eye(4)
        angle = values.get(j["name"], 0.0)
        axis = np.array(j["axes"][0]["xyz"], dtype=float)
        if j["type"] in ("revolute", "continuous"):
            k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
            motion[:3, :3] = np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)
        elif j["type"] == "prismatic":
            motion[:3, 3] = angle * axis
        poses[name] = (
            poses[j["parent_link"]] @ np.linalg.inv(parent0) @ frame0 @ motion @ np.linalg.inv(frame0) @ child0
        )
    return poses


def test_sdf_world_via_scope_equals_libsdformat_frames(
    probe: Probe, start_node: StartNode, corpus_dir: Path, corpus_resource_paths: tuple[Path, ...], libsdformat: Any
) -> None:
    """The seed's UR3e world (an arm included twice deep), its robot chosen by model_scope."""
    world = corpus_dir / "sas_robot_driver_gazebo" / "sdf" / "ur3e_world.sdf"
    scope = "ur3e::ur3e_position_controller::ur3e"
    reference = next(m for m in _models(libsdformat(world, corpus_resource_paths)) if m["scope"] == scope)
    s = session(
        probe,
        start_node,
        {"model": str(world), "model_scope": scope, "model_dirs": [str(p) for p in corpus_resource_paths]},
    )
    description = s.wait_description()
    assert description.lstrip().startswith("<?xml") and "<robot" in description  # converted to URDF
    static = edges(s.wait_static())
    assert static["base_link"][0] == "world"  # the robot's root placed in the world
    names = [j["name"] for j in reference["joints"] if j["type"] != "fixed"]
    rng = np.random.default_rng(11)
    for _ in range(3):
        values = [float(v) for v in rng.uniform(-math.pi, math.pi, len(names))]
        tree = {**static, **edges(s.exchange(names, values))}
        ours = compose(tree, "world")
        expected = _sdformat_link_poses(reference, dict(zip(names, values, strict=True)))
        worst, where = worst_difference(ours, expected)
        assert worst <= TOLERANCE, f"link '{where}' differs from libsdformat's frames by {worst:.3g}"


def _models(result: dict[str, Any]) -> list[dict[str, Any]]:
    from helpers.libsdformat_reference import models

    return list(models(result))


def test_queued_joint_states_are_taken_in_one_round_each_answered_in_order(probe: Probe) -> None:
    """The node takes the messages queued behind the one the executor hands it (fewer executor
    rounds than messages), and still answers each one, in order.  The node runs in this process
    here, so that the rounds can be counted."""
    from rclpy.parameter import Parameter

    from bb_robot.nodes.description import DescriptionNode

    node = DescriptionNode(
        context=probe.context, namespace="/drain", parameter_overrides=[Parameter("model", value="bb_arm.urdf")]
    )
    rounds = []
    original = node._on_joint_states
    node._on_joint_states = lambda msg, topic: (rounds.append(1), original(msg, topic))  # type: ignore[method-assign]
    probe.executor.add_node(node)
    try:
        tf, subscription = probe.subscription(TFMessage, "/tf", VOLATILE)
        publisher = probe.node.create_publisher(JointState, "/drain/joint_states", VOLATILE)
        probe.wait_for_subscribers(publisher)
        assert probe.spin_until(lambda: subscription.get_publisher_count() > 0)
        msg = JointState(name=["elbow_joint"], position=[0.5])
        for i in range(50):
            msg.header.stamp.sec = 7000 + i
            publisher.publish(msg)
        assert probe.spin_until(lambda: len(tf) >= 50), f"{len(tf)} of 50 answered"
        assert [m.transforms[0].header.stamp.sec for m in tf] == list(range(7000, 7050))
        assert len(rounds) < 50
    finally:
        probe.executor.remove_node(node)
        node.destroy_node()


def test_use_sim_time_stamps_from_clock(probe: Probe, start_node: StartNode) -> None:
    """rclpy's own use_sim_time: with ignore_timestamp the node's clock, hence /clock, stamps /tf."""
    from rosgraph_msgs.msg import Clock

    s = session(probe, start_node, {"model": "bb_arm.urdf", "ignore_timestamp": True, "use_sim_time": True})
    s.wait_static()
    clock = probe.node.create_publisher(Clock, "/clock", VOLATILE)
    tick = Clock()
    tick.clock.sec = 4242
    for _ in range(int(TIMEOUT)):
        clock.publish(tick)
        s.send(["elbow_joint"], [0.1])
        if probe.spin_until(lambda: any(m.transforms[0].header.stamp.sec == 4242 for m in s.tf), 1.0):
            break
    assert any(m.transforms[0].header.stamp.sec == 4242 for m in s.tf), s.node.log()


def test_joint_state_qos_can_be_overridden_for_best_effort_sources(probe: Probe, start_node: StartNode) -> None:
    namespace = "/qos_override"
    node = start_node(
        {"model": "bb_arm.urdf", f"qos_overrides.{namespace}/joint_states.subscription.reliability": "best_effort"},
        namespace=namespace,
    )
    s = Session(probe, node, joint_topics=())
    best_effort = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
    s.publishers["joint_states"] = probe.node.create_publisher(JointState, f"{namespace}/joint_states", best_effort)
    s.wait_static()
    assert {t.child_frame_id for t in s.exchange(["elbow_joint"], [0.2])} == {"forearm_link"}
