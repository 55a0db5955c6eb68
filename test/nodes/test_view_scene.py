"""The view draws what the move_group node adds: run-time objects, attached objects and each plan's path.

The description node (bb_arm), the move_group node and the view run as processes over real DDS; a
client written here adds a crate and attaches a tool as MoveIt's clients do, and asks for plans; an
independent Foxglove client (test/helpers/foxglove_client.py) decodes the scenes the view serves
from their advertised schema alone and checks them against the library's forward kinematics.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from helpers.collision_robots import BUNDLED_ARM as BB_ARM
from helpers.nodes import TIMEOUT, NodeProcess, Probe

pytest.importorskip("foxglove", reason="foxglove-sdk is not installed")
pytest.importorskip("websockets", reason="websockets is not installed")
moveit_msgs = pytest.importorskip("moveit_msgs", reason="moveit_msgs is not built: run scripts/setup")

from geometry_msgs.msg import Pose  # noqa: E402
from helpers.foxglove_client import FoxgloveTestClient, newest_entities, scene_updates  # noqa: E402
from helpers.view_rig import view_url  # noqa: E402
from moveit_msgs.msg import AttachedCollisionObject, CollisionObject, Constraints, JointConstraint  # noqa: E402
from moveit_msgs.srv import GetMotionPlan  # noqa: E402
from rclpy.qos import QoSProfile  # noqa: E402
from shape_msgs.msg import SolidPrimitive  # noqa: E402

from bb_robot.loading import load_file  # noqa: E402
from bb_robot.model.kinematics import ForwardKinematics  # noqa: E402

pytestmark = pytest.mark.timeout(300)
CONFIG = str(BB_ARM.parent.parent / "config" / "bb_arm.yaml")
QOS = QoSProfile(depth=10)
JOINTS = [
    "shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
    "wrist_3_joint", "left_finger_joint",
]  # fmt: skip
START = [0.0, -0.244, 1.953, 1.433, 1.571, 0.0, 0.0]


class Rig:
    def __init__(self, probe: Probe, ns: str, nodes: dict[str, NodeProcess]) -> None:
        self.probe, self.ns, self.nodes = probe, ns, nodes
        self.objects = probe.node.create_publisher(CollisionObject, f"{ns}/collision_object", QOS)
        self.attached = probe.node.create_publisher(AttachedCollisionObject, f"{ns}/attached_collision_object", QOS)
        self.plan = probe.node.create_client(GetMotionPlan, f"{ns}/plan_kinematic_path")
        self.url = view_url(nodes["view"].wait_for_log("Foxglove: open"))

    def publish(self, publisher: Any, message: Any) -> None:
        assert self.probe.spin_until(lambda: publisher.get_subscription_count() > 0), f"no one on {publisher.topic}"
        publisher.publish(message)

    def planned(self, goal: dict[str, float]) -> list[float]:
        """Plan from START to ``goal`` (plan only); the trajectory's last point, every joint of it."""
        request = GetMotionPlan.Request()
        motion = request.motion_plan_request
        motion.group_name, motion.allowed_planning_time = "arm", 10.0
        motion.start_state.joint_state.name, motion.start_state.joint_state.position = JOINTS, START
        constraints = [JointConstraint(joint_name=n, position=v, weight=1.0) for n, v in goal.items()]
        motion.goal_constraints.append(Constraints(joint_constraints=constraints))
        assert self.probe.spin_until(self.plan.service_is_ready), "no plan_kinematic_path"
        answer = self.probe.answer(lambda: self.plan.call_async(request), self.plan.srv_name).motion_plan_response
        assert answer.error_code.val == 1, answer.error_code
        trajectory = answer.trajectory.joint_trajectory
        values = dict(zip(JOINTS, START, strict=True)) | dict(
            zip(trajectory.joint_names, trajectory.points[-1].positions, strict=True)
        )
        return [values[j] for j in JOINTS]


@pytest.fixture(scope="module")
def rig(ros_context: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    directory = tmp_path_factory.mktemp("view_scene")
    ns = "/view_scene"
    nodes = {
        "description": NodeProcess(ns, {}, directory, ("--params-file", CONFIG)),
        "move_group": NodeProcess(
            ns, {"planning.joint_limits_file": CONFIG, "planning.tip": "tcp"}, directory,
            module="bb_robot.nodes.move_group", node="move_group",
        ),
        "view": NodeProcess(
            ns, {"port": 0, "planning.tip": "tcp", "frame_prefix": "left/"}, directory,
            module="bb_robot.nodes.view", node="view",
        ),
    }  # fmt: skip
    probe = Probe(ros_context)
    try:
        nodes["move_group"].wait_for_log("ready in", TIMEOUT * 2)
        yield Rig(probe, ns, nodes)
    finally:
        probe.destroy()
        for node in nodes.values():
            node.stop()


def box(name: str, frame: str, size: float, x: float, y: float, z: float) -> CollisionObject:
    message = CollisionObject(id=name, operation=CollisionObject.ADD)
    message.header.frame_id = frame
    message.pose.position.x, message.pose.position.y, message.pose.position.z = x, y, z
    message.pose.orientation.w = 1.0
    message.primitives = [SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[size, size, size])]
    identity = Pose()
    identity.orientation.w = 1.0
    message.primitive_poses = [identity]
    return message


def test_objects_and_attached_objects_are_drawn_in_their_frames(rig: Rig) -> None:
    topic = f"{rig.ns}/scene_objects"
    rig.publish(rig.objects, box("crate", "base_link", 0.08, 0.4, 0.1, 0.2))
    tool = AttachedCollisionObject(link_name="tcp", object=box("probe", "tcp", 0.02, 0.0, 0.0, 0.03))
    rig.publish(rig.attached, tool)
    client = FoxgloveTestClient(rig.url)
    try:
        client.wait_for_topics(topic)
        client.subscribe(topic)
        assert client.wait_for(lambda: sorted(newest_entities(client, topic)) == ["attached/probe", "object/crate"]), (
            rig.nodes["view"].log()[-3000:]
        )
        entities = newest_entities(client, topic)
        crate, probe = entities["object/crate"], entities["attached/probe"]
        assert (crate.frame_id, crate.frame_locked) == ("left/base_link", True)
        position = crate.cubes[0].pose.position
        assert (position.x, position.y, position.z, crate.cubes[0].size.x) == pytest.approx((0.4, 0.1, 0.2, 0.08))
        # locked to the link's frame: Foxglove moves it with the arm's /tf
        assert (probe.frame_id, probe.frame_locked) == ("left/tcp", True)
        assert (probe.cubes[0].pose.position.z, probe.cubes[0].size.x) == pytest.approx((0.03, 0.02))
        # each update replaces the last whole
        assert [d.type for d in scene_updates(client, topic)[-1].deletions] == [1]

        # removed through the move_group node: the next update has only the attached probe
        rig.publish(rig.objects, CollisionObject(id="crate", operation=CollisionObject.REMOVE))
        assert client.wait_for(lambda: sorted(newest_entities(client, topic)) == ["attached/probe"])
    finally:
        client.close()
    late = FoxgloveTestClient(rig.url)  # a client that comes later gets the scene as it is
    try:
        late.wait_for_topics(topic)
        late.subscribe(topic)
        assert late.wait_for(lambda: sorted(newest_entities(late, topic)) == ["attached/probe"])
    finally:
        late.close()


def test_each_plan_is_drawn_as_the_tool_path_and_replaces_the_last(rig: Rig) -> None:
    topic = f"{rig.ns}/planned_path"
    fk = ForwardKinematics(load_file(str(BB_ARM)).robot)

    def tool(values: list[float]) -> np.ndarray:
        return np.asarray(fk.poses(dict(zip(JOINTS, values, strict=True)))["tcp"])[:3, 3]

    def line(client: FoxgloveTestClient) -> np.ndarray | None:
        path = newest_entities(client, topic).get("planned_path")
        if path is None:
            return None
        assert (path.frame_id, path.frame_locked) == ("left/base_link", True)
        return np.array([[p.x, p.y, p.z] for p in path.lines[0].points])

    client = FoxgloveTestClient(rig.url)
    try:
        first = rig.planned({"shoulder_pan_joint": 0.6})
        client.wait_for_topics(topic)
        client.subscribe(topic)

        def drawn(end: list[float]) -> bool:
            points = line(client)
            return points is not None and np.allclose(points[-1], tool(end), atol=1e-6)

        assert client.wait_for(lambda: drawn(first)), rig.nodes["view"].log()[-3000:]
        points = line(client)
        assert points is not None and len(points) > 2
        assert points[0] == pytest.approx(tool(START), abs=1e-6)

        second = rig.planned({"shoulder_pan_joint": -0.6})
        assert client.wait_for(lambda: drawn(second))
        points = line(client)
        assert points is not None and points[0] == pytest.approx(tool(START), abs=1e-6)
        assert list(newest_entities(client, topic)) == ["planned_path"]
        assert [d.type for d in scene_updates(client, topic)[-1].deletions] == [1]  # the first plan's path goes
        assert all(node.alive() for node in rig.nodes.values())
    finally:
        client.close()
