"""The driver's ``~/gripper_cmd`` (control_msgs/GripperCommand) over real DDS, on the sim and mujoco backends.

The driver runs as a child process with ``gripper.joints: [left_finger_joint]``; this process sends
goals and judges from the joint states it receives: a goal with nothing between the fingers ends
reached_goal with the fingers (and their mimic) at the goal; a cancel ends the goal with the
fingers at rest short of it; a goal that makes no sense (NaN, a negative max_effort, a position
outside the stroke) is refused, and nothing moves.  On sim a 4 cm cube of ``collision.world``
between the fingers stops them on its faces: stalled (they stand still short of the goal).  On
mujoco the cube rests on a table between the open fingers (its ``object/cube`` frame on /tf where
statics puts it): closing on it stalls where the fingers meet its faces, judged from the finger
actuator's force (``max_effort``), and they go on squeezing it after the goal, past the watchdog's
``command_timeout``; a close that neither reaches nor stalls ends when canceled,
squeezing the cube.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.nodes import TIMEOUT, Probe, StartNode

control_msgs = pytest.importorskip("control_msgs", reason="control_msgs is not built: run scripts/setup")
from control_msgs.action import GripperCommand  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from bb_robot.model.serial import SerialManipulator  # noqa: E402

BB_ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"
VOLATILE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
FINGER, MIMIC = "left_finger_joint", "right_finger_joint"
OPEN, CLOSED = 0.04, 0.0
SUCCEEDED, CANCELED = 4, 5


def _seconds(stamp: Any) -> float:
    return float(stamp.sec + stamp.nanosec * 1e-9)


class Gripper:
    """A driver with a gripper, and this process's action client and joint states."""

    def __init__(self, probe: Probe, start_node: StartNode, extra: dict[str, Any] | None = None) -> None:
        values: dict[str, Any] = {
            "model": str(BB_ARM),
            "autostart": True,
            "auto_arm": True,
            "command_timeout": 0.5,
            "collision.check": False,
            "gripper.joints": [FINGER],
            **(extra or {}),
        }
        self.probe = probe
        self.node = start_node(values, module="bb_robot.nodes.driver", node="driver")
        self.states = probe.subscribe(JointState, f"{self.node.namespace}/joint_states", VOLATILE)
        self.action = ActionClient(probe.node, GripperCommand, f"{self.node.name}/gripper_cmd")
        self.node.wait_for_log("active: control loop")
        assert probe.spin_until(lambda: bool(self.states)), f"no joint states:\n{self.node.log()}"
        assert probe.spin_until(self.action.server_is_ready), f"no gripper action server:\n{self.node.log()}"

    def position(self, joint: str = FINGER) -> float:
        state = self.states[-1]
        return float(state.position[list(state.name).index(joint)])

    def send(self, position: float, max_effort: float = 0.0) -> tuple[Any, list[Any]]:
        goal = GripperCommand.Goal()
        goal.command.position, goal.command.max_effort = position, max_effort
        feedback: list[Any] = []
        future = self.action.send_goal_async(goal, feedback_callback=feedback.append)
        assert self.probe.spin_until(future.done), f"the goal was not answered:\n{self.node.log()}"
        return future.result(), feedback

    def result(self, handle: Any) -> Any:
        future = handle.get_result_async()
        assert self.probe.spin_until(future.done, TIMEOUT), f"no result:\n{self.node.log()}"
        return future.result()

    def refuse_malformed_goals(self) -> None:
        """Send goals that make no sense (each refused, the log says why), then wait 20 more joint states."""
        for position, effort, why in (
            (math.nan, 10.0, "not a finite number"),
            (CLOSED, -1.0, "max_effort -1"),
            (0.5, 10.0, "outside joint 'left_finger_joint''s range"),
        ):
            handle, _ = self.send(position, effort)
            assert not handle.accepted
            self.node.wait_for_log(why)
        before = len(self.states)
        assert self.probe.spin_until(lambda: len(self.states) > before + 20)

    def stamp(self) -> float:
        """The last joint state's stamp (s)."""
        return _seconds(self.states[-1].header.stamp)

    def effort(self) -> float:
        """The finger's measured effort in the last joint state (its magnitude)."""
        state = self.states[-1]
        assert len(state.effort) == len(state.name), "the joint states carry no effort"
        return abs(float(state.effort[list(state.name).index(FINGER)]))

    def still_since(self, after: float, window: float = 0.3, within: float = 1e-5) -> bool:
        """Whether the finger stood still (within ``within`` m) through the last ``window`` s of joint
        states, all of them stamped after ``after`` (s)."""
        last = self.stamp()
        recent = [s for s in self.states if _seconds(s.header.stamp) >= last - window]
        if len(recent) < 2 or _seconds(recent[0].header.stamp) <= after:
            return False
        if last - _seconds(recent[0].header.stamp) < 0.9 * window:
            return False
        index = list(recent[-1].name).index(FINGER)
        positions = [float(s.position[index]) for s in recent]
        return max(positions) - min(positions) <= within

    def at_rest(self) -> bool:
        state = self.states[-1]
        return not any(state.velocity[list(state.name).index(j)] for j in (FINGER,))


def test_reached_goal_when_empty_cancel_and_malformed_goals(probe: Probe, start_node: StartNode) -> None:
    gripper = Gripper(probe, start_node)
    # nothing between the fingers: reached, the mimic finger with it
    handle, feedback = gripper.send(OPEN, 10.0)
    assert handle.accepted
    result = gripper.result(handle)
    assert result.status == SUCCEEDED and result.result.reached_goal and not result.result.stalled
    assert feedback, "no feedback while the fingers moved"
    assert probe.spin_until(lambda: abs(gripper.position() - OPEN) < 1e-4 and gripper.at_rest())
    assert abs(gripper.position(MIMIC) - OPEN) < 1e-4
    # cancel: the goal ends canceled, the fingers at rest short of the goal
    handle, feedback = gripper.send(CLOSED)
    assert probe.spin_until(lambda: bool(feedback)), f"no feedback:\n{gripper.node.log()}"
    cancel = handle.cancel_goal_async()
    assert probe.spin_until(cancel.done)
    result = gripper.result(handle)
    assert result.status == CANCELED and not result.result.reached_goal
    assert probe.spin_until(gripper.at_rest)
    held = gripper.position()
    assert held > CLOSED + 1e-3, f"the fingers closed anyway ({held})"
    # goals that make no sense: refused, nothing moves
    gripper.refuse_malformed_goals()
    assert abs(gripper.position() - held) < 1e-9, "a refused goal moved the fingers"


def tool_down(x: float, y: float, z: float) -> np.ndarray:
    """The tcp at (x, y, z) pointing down (its z axis along the world's −z)."""
    pose = np.diag([1.0, -1.0, -1.0, 1.0])
    pose[:3, 3] = (x, y, z)
    return pose


def cube_between_the_fingers(tmp_path: Path) -> tuple[dict[str, Any], np.ndarray]:
    """The mujoco driver's parameters with the arm's open fingers around a 4 cm, 0.1 kg cube on a table,
    and where the cube's centre is."""
    grasp = tool_down(0.45, 0.0, 0.15)
    q = SerialManipulator.from_urdf(str(BB_ARM), tip="tcp").inverse(grasp, rng=1, timeout=None, max_restarts=100).q
    centre = (grasp @ np.array([0.0, 0.0, -0.01, 1.0]))[:3]  # 1 cm up the fingers from the tcp
    world = tmp_path / "cube.yaml"
    world.write_text(
        "obstacles:\n"
        f"  - {{name: table, xyz: [0.4, 0.0, {float(centre[2] - SIDE / 2 - 0.02)!r}], box: [1.0, 1.0, 0.04]}}\n"
        f"  - {{name: cube, xyz: {[float(v) for v in centre]}, box: {[SIDE] * 3}, mass: 0.1, friction: 1.0}}\n"
    )
    values = {
        "backend": "mujoco",
        "collision.world": str(world),
        "mujoco.initial_positions": [*(float(v) for v in q), OPEN],
        "mujoco.disarmed": "hold",
        "gripper.stall_time": 60.0,  # stalled only from the actuator's force (max_effort)
    }
    return values, centre


SIDE = 0.04
#: Where the fingers meet a cube of SIDE: each finger's inner face is 5 mm from the middle at 0.
CONTACT = SIDE / 2 - 0.005


def test_on_mujoco_a_close_stalls_on_the_cube_and_a_cancel_holds_it(
    probe: Probe, start_node: StartNode, tmp_path: Path
) -> None:
    values, centre = cube_between_the_fingers(tmp_path)
    tf = probe.subscribe(TFMessage, "/tf", VOLATILE)
    gripper = Gripper(probe, start_node, values)

    def cube() -> Any:
        for message in reversed(tf):
            for transform in message.transforms:
                if transform.child_frame_id == "object/cube":
                    return transform
        return None

    # the cube rests on the table where it was put: its object/cube frame under the root link
    assert probe.spin_until(lambda: cube() is not None), f"no object/cube on /tf:\n{gripper.node.log()}"
    assert cube().header.frame_id == "base_link"
    t = cube().transform.translation
    assert np.allclose([t.x, t.y, t.z], centre, atol=5e-4), ([t.x, t.y, t.z], centre)
    # a close with a force threshold: stalled on the cube's faces, judged from the actuator's force
    handle, _ = gripper.send(CLOSED, 1.0)
    assert handle.accepted
    result = gripper.result(handle)
    assert result.status == SUCCEEDED, gripper.node.log()
    assert result.result.stalled and not result.result.reached_goal
    assert abs(result.result.position - CONTACT) < 1.5e-3, result.result.position
    assert abs(result.result.effort) >= 1.0
    # the grasp outlives the goal: well past command_timeout (0.5 s) the finger still squeezes the cube
    # (the watchdog watches streams; a finished goal's command stays, as gripper controllers keep it)
    ended = gripper.stamp()
    assert probe.spin_until(lambda: gripper.stamp() - ended > 1.5), gripper.node.log()
    assert gripper.effort() >= 1.0, f"the fingers stopped squeezing after the goal: {gripper.effort()} N"
    assert "watchdog" not in gripper.node.log()
    # empty again: open, reached
    handle, _ = gripper.send(OPEN)
    result = gripper.result(handle)
    assert result.status == SUCCEEDED and result.result.reached_goal and not result.result.stalled
    # a close without a threshold neither reaches (the cube is in the way) nor stalls: canceled
    handle, feedback = gripper.send(CLOSED)
    assert probe.spin_until(lambda: bool(feedback) and abs(gripper.position() - CONTACT) < 1.5e-3)
    cancel = handle.cancel_goal_async()
    assert probe.spin_until(cancel.done)
    result = gripper.result(handle)
    assert result.status == CANCELED and not result.result.reached_goal
    # The cancel holds the fingers where they were measured, pressed into the cube's soft contact, so
    # they ease back a little; with no command after it, the watchdog holds them once more where they
    # are command_timeout (0.5 s) later, and they ease again. Judged once that is over: the fingers
    # still for 0.3 s of joint states stamped over 1 s after the cancel.
    canceled = gripper.stamp()
    assert probe.spin_until(lambda: gripper.still_since(canceled + 1.0)), "the fingers did not come to rest"
    held = gripper.position()
    assert abs(held - CONTACT) < 1.5e-3
    # goals that make no sense: refused, nothing moves (the fingers stay on the cube)
    gripper.refuse_malformed_goals()
    assert abs(gripper.position() - held) < 1e-4, "a refused goal moved the fingers"
    t = cube().transform.translation
    assert np.allclose([t.x, t.y, t.z], centre, atol=1e-3), "the squeezed cube moved"


def test_on_sim_a_close_stalls_where_the_fingers_meet_the_cube(
    probe: Probe, start_node: StartNode, tmp_path: Path
) -> None:
    values, centre = cube_between_the_fingers(tmp_path)
    values = {
        "backend": "sim",
        "collision.world": values["collision.world"],
        "sim.initial_positions": values["mujoco.initial_positions"],
    }
    gripper = Gripper(probe, start_node, values)
    # the fingers stop on its faces, and stand still there: stalled (the simulator has no effort)
    handle, _ = gripper.send(CLOSED, 10.0)
    assert handle.accepted
    result = gripper.result(handle)
    assert result.status == SUCCEEDED, gripper.node.log()
    assert result.result.stalled and not result.result.reached_goal
    assert abs(result.result.position - CONTACT) < 1e-5, result.result.position
    assert abs(gripper.position(MIMIC) - CONTACT) < 1e-5
    # opened: reached, nothing in the way
    handle, _ = gripper.send(OPEN)
    result = gripper.result(handle)
    assert result.status == SUCCEEDED and result.result.reached_goal and not result.result.stalled
