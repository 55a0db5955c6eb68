"""The move_group node as a real process with the driver (sim backend) and the description node, over DDS.

A client written here on moveit_msgs, as MoveIt's Python clients are, calls each interface of the
node against the bundled arm (models/bb_arm.urdf, config/bb_arm.yaml): FK and IK against the
library, a joint goal executed through ``move_action`` (the driver's joint states reach it), an
object added on ``collision_object`` that the next plan goes around, a Cartesian path with its
fraction, hostile requests (each answered with its error code while nothing moves and the node
stays up), and ``stop`` on ``trajectory_execution_event`` during an execution.  One set of
processes serves every check (CI's time on a 2-core host, docs/testing.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from helpers.collision_robots import BUNDLED_ARM as BB_ARM
from helpers.nodes import TIMEOUT, NodeProcess, Probe

moveit_msgs = pytest.importorskip("moveit_msgs", reason="moveit_msgs is not built: run scripts/setup")

from geometry_msgs.msg import Pose  # noqa: E402
from moveit_msgs.action import MoveGroup  # noqa: E402
from moveit_msgs.msg import (  # noqa: E402
    CollisionObject,
    Constraints,
    JointConstraint,
    MoveItErrorCodes,
    OrientationConstraint,
    PositionConstraint,
)
from moveit_msgs.srv import GetCartesianPath, GetMotionPlan, GetPlanningScene, GetPositionFK, GetPositionIK  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.qos import QoSProfile  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from shape_msgs.msg import SolidPrimitive  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from bb_robot.collision.scene import Scene  # noqa: E402
from bb_robot.collision.sources import checked_model  # noqa: E402
from bb_robot.loading import load_file  # noqa: E402
from bb_robot.model.geometry import Box  # noqa: E402
from bb_robot.model.kinematics import ForwardKinematics  # noqa: E402
from bb_robot.model.transforms import matrix_to_quaternion, quaternion_to_matrix  # noqa: E402

REPO = BB_ARM.parent.parent
CONFIG = str(REPO / "config" / "bb_arm.yaml")
QOS = QoSProfile(depth=10)


class Rig:
    """The three processes and a probe with clients of every interface."""

    def __init__(self, probe: Probe, ns: str, nodes: list[NodeProcess]) -> None:
        self.probe, self.ns, self.nodes = probe, ns, nodes
        node = probe.node
        self.fk = node.create_client(GetPositionFK, f"{ns}/compute_fk")
        self.ik = node.create_client(GetPositionIK, f"{ns}/compute_ik")
        self.plan = node.create_client(GetMotionPlan, f"{ns}/plan_kinematic_path")
        self.cartesian = node.create_client(GetCartesianPath, f"{ns}/compute_cartesian_path")
        self.scene = node.create_client(GetPlanningScene, f"{ns}/get_planning_scene")
        self.move = ActionClient(node, MoveGroup, f"{ns}/move_action")
        self.objects = node.create_publisher(CollisionObject, f"{ns}/collision_object", QOS)
        self.events = node.create_publisher(String, f"{ns}/trajectory_execution_event", QOS)
        self.states: list[JointState] = probe.subscribe(JointState, f"{ns}/joint_states", QOS)

    def call(self, client: Any, request: Any) -> Any:
        assert self.probe.spin_until(client.service_is_ready), f"no service {client.srv_name}"
        return self.probe.answer(lambda: client.call_async(request), client.srv_name)

    def positions(self) -> dict[str, float]:
        assert self.probe.spin_until(lambda: bool(self.states)), "no joint_states"
        last = self.states[-1]
        return dict(zip(last.name, last.position, strict=True))

    def send_move(self, request: Any, plan_only: bool = False, feedback: list[str] | None = None) -> Any:
        assert self.probe.spin_until(self.move.server_is_ready), "no move_action server"
        goal = MoveGroup.Goal(request=request)
        goal.planning_options.plan_only = plan_only
        goal.planning_options.planning_scene_diff.is_diff = True
        future = self.move.send_goal_async(
            goal, feedback_callback=(lambda m: feedback.append(m.feedback.state)) if feedback is not None else None
        )
        assert self.probe.spin_until(future.done), "move_action goal not answered"
        handle = future.result()
        assert handle.accepted
        return handle

    def result(self, handle: Any, timeout: float = 60.0) -> Any:
        future = handle.get_result_async()
        assert self.probe.spin_until(future.done, timeout), "move_action gave no result"
        return future.result().result

    def alive(self) -> bool:
        return all(n.alive() for n in self.nodes)


@pytest.fixture(scope="module")
def rig(ros_context: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    directory = tmp_path_factory.mktemp("move_group")
    ns = "/mg"
    description = NodeProcess(ns, {}, directory, ("--params-file", CONFIG))
    driver = NodeProcess(
        ns, {"autostart": True, "auto_arm": True, "stale_timeout": 1.0}, directory, ("--params-file", CONFIG),
        module="bb_robot.nodes.driver", node="driver",
    )  # fmt: skip
    group = NodeProcess(
        ns, {"planning.joint_limits_file": CONFIG, "planning.tip": "tcp"}, directory,
        module="bb_robot.nodes.move_group", node="move_group",
    )  # fmt: skip
    probe = Probe(ros_context)
    nodes = [description, driver, group]
    try:
        group.wait_for_log("ready in", TIMEOUT * 2)
        yield Rig(probe, ns, nodes)
    finally:
        probe.destroy()
        for node in reversed(nodes):
            node.stop()


def pose_message(matrix: np.ndarray) -> Pose:
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in matrix[:3, 3])
    x, y, z, w = matrix_to_quaternion(matrix[:3, :3])
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = (
        float(x),
        float(y),
        float(z),
        float(w),
    )
    return pose


def joint_goal(values: dict[str, float], scale: float = 0.0) -> Any:
    request = MoveGroup.Goal().request
    request.group_name = "arm"
    request.allowed_planning_time = 10.0
    request.max_velocity_scaling_factor = scale
    request.max_acceleration_scaling_factor = scale
    request.start_state.is_diff = True
    request.goal_constraints.append(
        Constraints(
            joint_constraints=[JointConstraint(joint_name=n, position=v, weight=1.0) for n, v in values.items()]
        )
    )
    return request


def pose_goal(matrix: np.ndarray, link: str = "tcp") -> Any:
    request = MoveGroup.Goal().request
    request.allowed_planning_time = 10.0
    position = PositionConstraint(link_name=link, weight=1.0)
    position.header.frame_id = "base_link"
    position.constraint_region.primitives.append(SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[0.001]))
    position.constraint_region.primitive_poses.append(pose_message(matrix))
    orientation = OrientationConstraint(link_name=link, orientation=pose_message(matrix).orientation, weight=1.0)
    orientation.header.frame_id = "base_link"
    orientation.absolute_x_axis_tolerance = orientation.absolute_y_axis_tolerance = 0.001
    orientation.absolute_z_axis_tolerance = 0.001
    request.goal_constraints.append(Constraints(position_constraints=[position], orientation_constraints=[orientation]))
    return request


def library_tcp(values: dict[str, float]) -> np.ndarray:
    fk = ForwardKinematics(load_file(str(BB_ARM)).robot)
    q = np.array([values[n] for n in fk.joint_names])
    return np.asarray(fk.compute(q)[fk.link_names.index("tcp")])


def test_kinematics_plans_execution_scene_and_hostile_requests(rig: Rig) -> None:
    probe = rig.probe
    start = rig.positions()
    # FK and IK against the library
    fk = GetPositionFK.Request(fk_link_names=["tcp"])
    fk.header.frame_id = "base_link"
    fk.robot_state.joint_state = JointState(name=list(start), position=list(start.values()))
    answer = rig.call(rig.fk, fk)
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS
    served = answer.pose_stamped[0].pose
    expected = library_tcp(start)
    assert np.allclose([served.position.x, served.position.y, served.position.z], expected[:3, 3], atol=1e-9)
    target = expected.copy()
    target[:3, :3] = expected[:3, :3] @ quaternion_to_matrix((0.0, math.sin(0.2), 0.0, math.cos(0.2)))
    target[:3, 3] += [0.25, 0.1, -0.4]
    ik = GetPositionIK.Request()
    ik.ik_request.group_name = "arm"
    ik.ik_request.avoid_collisions = True
    ik.ik_request.pose_stamped.header.frame_id = "base_link"
    ik.ik_request.pose_stamped.pose = pose_message(target)
    solution = rig.call(rig.ik, ik)
    assert solution.error_code.val == MoveItErrorCodes.SUCCESS, solution.error_code.message
    solved = dict(zip(solution.solution.joint_state.name, solution.solution.joint_state.position, strict=True))
    assert np.allclose(library_tcp(solved), target, atol=1e-4)

    # a joint goal, planned and executed through the driver
    goal = {"shoulder_pan_joint": 0.5, "shoulder_lift_joint": 0.6, "elbow_joint": 0.9}
    feedback: list[str] = []
    result = rig.result(rig.send_move(joint_goal(goal), feedback=feedback))
    assert result.error_code.val == MoveItErrorCodes.SUCCESS, result.error_code.message
    assert len(result.executed_trajectory.joint_trajectory.points) > 1
    assert probe.spin_until(lambda: all(abs(rig.positions()[n] - v) < 0.01 for n, v in goal.items()))
    assert probe.spin_until(lambda: "IDLE" in feedback) and feedback[:2] == ["PLANNING", "MONITOR"]

    # a pose goal, planned only: the tool's planned last state is at the pose (the library's FK)
    here = rig.positions()
    reach = library_tcp(here)
    reach[:3, 3] += [-0.15, 0.05, 0.05]
    planned = rig.result(rig.send_move(pose_goal(reach), plan_only=True))
    assert planned.error_code.val == MoveItErrorCodes.SUCCESS, planned.error_code.message
    last = planned.planned_trajectory.joint_trajectory
    final = {**here, **dict(zip(last.joint_names, last.points[-1].positions, strict=True))}
    assert np.linalg.norm(library_tcp(final)[:3, 3] - reach[:3, 3]) <= 1e-3

    # an object on collision_object: reported by get_planning_scene, and the next plan goes around it
    crate = CollisionObject(id="crate", operation=CollisionObject.ADD)
    crate.header.frame_id = "base_link"
    middle = library_tcp({**here, "shoulder_pan_joint": -0.3})
    crate.pose = pose_message(np.eye(4))
    crate.pose.position.x, crate.pose.position.y, crate.pose.position.z = (float(v) for v in middle[:3, 3])
    crate.primitives.append(SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.15, 0.15, 0.15]))
    crate.primitive_poses.append(pose_message(np.eye(4)))
    probe.wait_for_subscribers(rig.objects)
    rig.objects.publish(crate)
    assert probe.spin_until(
        lambda: (
            [o.id for o in rig.call(rig.scene, GetPlanningScene.Request()).scene.world.collision_objects] == ["crate"]
        )
    )
    around = rig.call(rig.plan, GetMotionPlan.Request(motion_plan_request=joint_goal({"shoulder_pan_joint": -1.1})))
    response = around.motion_plan_response
    assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
    model, _ = checked_model(load_file(str(BB_ARM)))
    scene = Scene(model)
    scene.add_object(
        "crate", [(Box((0.15, 0.15, 0.15)), np.eye(4))], np.vstack([np.c_[np.eye(3), middle[:3, 3]], [0, 0, 0, 1]])
    )
    names = scene.model.fk.joint_names
    points = response.trajectory.joint_trajectory
    for point in points.points:
        values = {**here, **dict(zip(points.joint_names, point.positions, strict=True))}
        assert not scene.colliding(np.array([values[n] for n in names]))

    # a Cartesian path with its fraction
    cartesian = GetCartesianPath.Request(group_name="arm", link_name="tcp", max_step=0.01, avoid_collisions=True)
    cartesian.header.frame_id = "base_link"
    line = library_tcp(here)
    line[:3, 3] += [0.0, 0.0, -0.08]
    cartesian.waypoints.append(pose_message(line))
    path = rig.call(rig.cartesian, cartesian)
    assert path.error_code.val == MoveItErrorCodes.SUCCESS and path.fraction == pytest.approx(1.0)

    # hostile requests: an error code and a message; nothing moves; the node stays up
    before = rig.positions()
    nan_goal = pose_goal(reach)
    nan_goal.goal_constraints[0].position_constraints[0].constraint_region.primitive_poses[0].position.x = math.nan
    cases = [
        (nan_goal, MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS),
        (pose_goal(reach, link="no_such_link"), MoveItErrorCodes.INVALID_LINK_NAME),
        (joint_goal({"knee": 1.0}), MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS),
        (MoveGroup.Goal().request, MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS),
    ]
    unknown_group = joint_goal({"elbow_joint": 1.0})
    unknown_group.group_name = "legs"
    cases.append((unknown_group, MoveItErrorCodes.INVALID_GROUP_NAME))
    for request, code in cases:
        refused = rig.result(rig.send_move(request))
        assert refused.error_code.val == code and refused.error_code.message
    huge = CollisionObject(id="huge", operation=CollisionObject.ADD)
    huge.primitives.append(SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[1e9, 1.0, 1.0]))
    huge.primitive_poses.append(Pose())
    bad_pose = CollisionObject(id="nan", operation=CollisionObject.ADD, pose=Pose())
    bad_pose.pose.position.x = math.nan
    bad_pose.primitives.append(SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[0.1]))
    bad_pose.primitive_poses.append(Pose())
    # an operation MoveIt does not know (a byte field: bytes, as a C++ client's 7 arrives)
    for message in (huge, bad_pose, CollisionObject(id="crate", operation=b"\x07")):
        rig.objects.publish(message)
    probe.spin_for(0.5)
    assert [o.id for o in rig.call(rig.scene, GetPlanningScene.Request()).scene.world.collision_objects] == ["crate"]
    after = rig.positions()
    assert all(abs(after[n] - before[n]) < 1e-6 for n in before)
    assert rig.alive()

    # stop during execution
    crate.operation = CollisionObject.REMOVE
    rig.objects.publish(crate)
    # The driver's guard follows the scene (monitored_planning_scene): once the crate is gone there too,
    # a trajectory through where it stood is the driver's to take (before, it would refuse it).
    driver = rig.nodes[1]
    assert probe.spin_until(lambda: "checks 0 run-time object(s)" in driver.log()), driver.log()[-3000:]
    feedback = []
    handle = rig.send_move(joint_goal({"shoulder_pan_joint": -1.5}, scale=0.1), feedback=feedback)
    assert probe.spin_until(lambda: "MONITOR" in feedback)
    assert probe.spin_until(lambda: abs(rig.positions()["shoulder_pan_joint"] - here["shoulder_pan_joint"]) > 0.02)
    rig.events.publish(String(data="stop"))
    stopped = rig.result(handle)
    assert stopped.error_code.val == MoveItErrorCodes.PREEMPTED, stopped.error_code.message
    assert rig.positions()["shoulder_pan_joint"] > -1.4
    assert rig.alive()
