"""One scene: objects added through the move_group node reach the driver's collision guard, over DDS.

The description node, the driver (sim backend) and the move_group node run as processes with
config/bb_arm_table.yaml (the arm on a table, a post in front of it: the configured world of both).
A client written here adds a crate on the move_group node's ``collision_object``, as MoveIt's
clients do; the driver, following ``monitored_planning_scene``, then refuses a streamed position
command and a ``FollowJointTrajectory`` goal into it while the arm stays where it is.  Removing
the configured post is refused (by the move_group node, and by the driver when a scene says so
directly), and the post still refuses a goal into it; an oversized scene is refused whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from helpers.collision_robots import BUNDLED_ARM as BB_ARM
from helpers.nodes import TIMEOUT, NodeProcess, Probe

moveit_msgs = pytest.importorskip("moveit_msgs", reason="moveit_msgs is not built: run scripts/setup")

from builtin_interfaces.msg import Duration  # noqa: E402
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from geometry_msgs.msg import Point, Pose  # noqa: E402
from moveit_msgs.msg import CollisionObject, PlanningScene  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from shape_msgs.msg import Mesh, MeshTriangle, SolidPrimitive  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from bb_robot.loading import load_file  # noqa: E402
from bb_robot.model.kinematics import ForwardKinematics  # noqa: E402
from bb_robot.move_group.scene_updates import MAX_VERTICES  # noqa: E402

REPO = BB_ARM.parent.parent
TABLE = str(REPO / "config" / "bb_arm_table.yaml")
WORLD = "package://bb_robot/models/bb_arm_table.yaml"
QOS = QoSProfile(depth=10)
JOINTS = [
    "shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
    "wrist_3_joint", "left_finger_joint",
]  # fmt: skip
#: config/bb_arm_table.yaml's start: the tool 25 cm above the table, in front of the base.
START = [0.0, -0.244, 1.953, 1.433, 1.571, 0.0, 0.0]
#: Panned 0.8 rad: clear of everything configured; the crate stands on the way, where the tool is at 0.4 rad.
SWUNG = [0.8, *START[1:]]
CRATE_AT = [0.4, *START[1:]]
#: Leaning forward: the wrist in the post (found with the collision library on the same world).
INTO_POST = [0.0, 0.4345, 1.953, 1.433, 1.571, 0.0, 0.0]


class Rig:
    """The three processes and a probe with the clients the test uses."""

    def __init__(self, probe: Probe, ns: str, nodes: dict[str, NodeProcess]) -> None:
        self.probe, self.ns, self.nodes = probe, ns, nodes
        node = probe.node
        self.objects = node.create_publisher(CollisionObject, f"{ns}/collision_object", QOS)
        # As the move_group node publishes it: transient local (a volatile publisher would not match the driver).
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.hostile = node.create_publisher(PlanningScene, f"{ns}/monitored_planning_scene", latched)
        self.positions = node.create_publisher(Float64MultiArray, f"{ns}/bb_arm/set/target_joint_positions", QOS)
        self.action = ActionClient(node, FollowJointTrajectory, f"{ns}/driver/follow_joint_trajectory")
        self.states: list[JointState] = probe.subscribe(JointState, f"{ns}/joint_states", QOS)

    def log_has(self, name: str, *texts: str) -> None:
        """Wait until one line of ``name``'s log holds every text (the process's own words, not a timing)."""
        node = self.nodes[name]

        def found() -> bool:
            return any(all(t in line for t in texts) for line in node.log().splitlines())

        assert self.probe.spin_until(found, TIMEOUT), f"{texts} not in {name}'s log:\n{node.log()[-4000:]}"

    def publish_until_matched(self, publisher: Any, message: Any) -> None:
        assert self.probe.spin_until(lambda: publisher.get_subscription_count() > 0), f"no one on {publisher.topic}"
        publisher.publish(message)

    def joint_positions(self) -> np.ndarray:
        assert self.probe.spin_until(lambda: bool(self.states)), "no joint_states"
        last = self.states[-1]
        values = dict(zip(last.name, last.position, strict=True))
        return np.array([values[j] for j in JOINTS])

    def goal_result(self, target: list[float], seconds: float = 3.0) -> Any:
        assert self.probe.spin_until(self.action.server_is_ready), "no follow_joint_trajectory server"
        point = JointTrajectoryPoint(positions=target, time_from_start=Duration(sec=int(seconds)))
        goal = FollowJointTrajectory.Goal(trajectory=JointTrajectory(joint_names=JOINTS, points=[point]))
        future = self.action.send_goal_async(goal)
        assert self.probe.spin_until(future.done), "goal not answered"
        handle = future.result()
        if not handle.accepted:
            return None
        result = handle.get_result_async()
        assert self.probe.spin_until(result.done), "no result"
        return result.result().result

    def alive(self) -> bool:
        return all(n.alive() for n in self.nodes.values())


@pytest.fixture(scope="module")
def rig(ros_context: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    directory = tmp_path_factory.mktemp("scene_to_driver")
    ns = "/one_scene"
    nodes = {
        "description": NodeProcess(ns, {}, directory, ("--params-file", TABLE)),
        "driver": NodeProcess(
            ns, {"autostart": True, "auto_arm": True, "stale_timeout": 1.0}, directory, ("--params-file", TABLE),
            module="bb_robot.nodes.driver", node="driver",
        ),
        "move_group": NodeProcess(
            ns, {"planning.joint_limits_file": TABLE, "planning.tip": "tcp", "collision.world": WORLD}, directory,
            module="bb_robot.nodes.move_group", node="move_group",
        ),
    }  # fmt: skip
    probe = Probe(ros_context)
    try:
        nodes["move_group"].wait_for_log("ready in", TIMEOUT * 2)
        nodes["driver"].wait_for_log("active in", TIMEOUT * 2)
        yield Rig(probe, ns, nodes)
    finally:
        probe.destroy()
        for node in nodes.values():
            node.stop()


def crate() -> CollisionObject:
    """An 8 cm box around the tool where it is at :data:`CRATE_AT`, in the root frame, as a client adds it."""
    fk = ForwardKinematics(load_file(str(BB_ARM)).robot)
    x, y, z = np.asarray(fk.compute(np.array(CRATE_AT))[fk.link_names.index("tcp")])[:3, 3]
    message = CollisionObject(id="crate", operation=CollisionObject.ADD)
    message.header.frame_id = "base_link"
    message.pose = Pose(position=Point(x=float(x), y=float(y), z=float(z)))
    message.pose.orientation.w = 1.0
    message.primitives = [SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.08, 0.08, 0.08])]
    identity = Pose()
    identity.orientation.w = 1.0
    message.primitive_poses = [identity]
    return message


def test_an_object_added_through_move_group_stops_the_driver_and_the_post_stays(rig: Rig) -> None:
    # The driver follows the move_group node's latched scene (transient local: a later driver catches up).
    def latched_subscriber() -> bool:
        infos = rig.probe.node.get_subscriptions_info_by_topic(f"{rig.ns}/monitored_planning_scene")
        return any(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in infos)

    assert rig.probe.spin_until(latched_subscriber), "no transient-local subscription of monitored_planning_scene"
    start = rig.joint_positions()
    np.testing.assert_allclose(start, START, atol=1e-3)

    # A crate on the move_group node's collision_object: the driver's guard takes it.
    rig.publish_until_matched(rig.objects, crate())
    rig.log_has("driver", "monitored_planning_scene", "checks 1 run-time object(s) (crate)")
    # A streamed position command through it: refused, not executed.
    rig.publish_until_matched(rig.positions, Float64MultiArray(data=SWUNG))
    rig.log_has("driver", "target_joint_positions", "world/crate", "not executed")
    # A trajectory through it: INVALID_GOAL naming it, before anything moves.
    result = rig.goal_result(SWUNG)
    assert result is not None and result.error_code == FollowJointTrajectory.Result.INVALID_GOAL, result
    assert "world/crate" in result.error_string and "at t = " in result.error_string, result.error_string
    rig.probe.spin_for(0.2)
    np.testing.assert_allclose(rig.joint_positions(), start, atol=1e-6)

    # A hostile scene too big to take, straight on the driver's topic: refused whole, the crate stays.
    big = PlanningScene(is_diff=False)
    mesh = Mesh(vertices=[Point(x=0.001 * (i % 7)) for i in range(MAX_VERTICES + 1)])
    mesh.triangles = [MeshTriangle(vertex_indices=[0, 1, 2])]
    big.world.collision_objects = [CollisionObject(id="boulder", meshes=[mesh], mesh_poses=[Pose()])]
    rig.publish_until_matched(rig.hostile, big)
    rig.log_has("driver", "scene refused, nothing changed", "'boulder'", f"{MAX_VERTICES + 1} mesh vertices")
    result = rig.goal_result(SWUNG)
    assert result is not None and "world/crate" in result.error_string, result

    # The configured post cannot be removed: not through the move_group node ...
    removal = CollisionObject(id="post", operation=CollisionObject.REMOVE)
    rig.publish_until_matched(rig.objects, removal)
    rig.log_has("move_group", "collision_object refused (-19)", "'post'", "configured world")
    # ... nor by a scene sent to the driver directly.
    diff = PlanningScene(is_diff=True)
    diff.world.collision_objects = [removal]
    rig.publish_until_matched(rig.hostile, diff)
    rig.log_has("driver", "monitored_planning_scene: refused (-19)", "'post'", "configured world")

    # Removed through the move_group node, the crate is gone from the driver's scene too; the post stays.
    rig.publish_until_matched(rig.objects, CollisionObject(id="crate", operation=CollisionObject.REMOVE))
    rig.log_has("driver", "checks 0 run-time object(s)")
    result = rig.goal_result(INTO_POST)
    assert result is not None and result.error_code == FollowJointTrajectory.Result.INVALID_GOAL, result
    assert "world/post" in result.error_string, result.error_string
    result = rig.goal_result(SWUNG)
    assert result is not None and result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result
    np.testing.assert_allclose(rig.joint_positions(), SWUNG, atol=1e-3)
    assert rig.alive(), "a node died"
