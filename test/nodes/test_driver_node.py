"""The driver node over real DDS: the driver runs as a child process, this process is its client.

Covers issue 5's list: lifecycle transitions (lifecycle_msgs ChangeState), the model from the
robot_description topic or a file, position / velocity / sas-array / by-name commands and
trajectories converging within the limits, FollowJointTrajectory goals (success with
feedback, cancel, preemption, a path tolerance violation, a goal tolerance violation,
invalid goals), every bad-input case with the warning naming the topic while the loop keeps
running, arming, the watchdog, live limit changes, joint states held back until every joint
is seen and stale joints left out, /diagnostics and the sas get/ topics.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.nodes import LOST_RESPONSE, TIMEOUT, NodeProcess, Probe, StartNode
from helpers.processes import parent_of, wait_until_ended

from bb_robot.driver.commands.limits import from_robot
from bb_robot.driver.model import driven_joints, mimic_joints
from bb_robot.urdf.builder import load_urdf

control_msgs = pytest.importorskip("control_msgs", reason="control_msgs is not built: run scripts/setup")
from builtin_interfaces.msg import Duration  # noqa: E402
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from control_msgs.msg import JointTolerance  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from lifecycle_msgs.msg import Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState, GetState  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

ANSWER_TIMEOUT = 8.0
ANSWER_ATTEMPTS = 3
#: The lifecycle state a successful transition leads to.
STATE_AFTER = {
    Transition.TRANSITION_CONFIGURE: "inactive",
    Transition.TRANSITION_ACTIVATE: "active",
    Transition.TRANSITION_DEACTIVATE: "inactive",
    Transition.TRANSITION_CLEANUP: "unconfigured",
}

REPO_ROOT = Path(__file__).resolve().parents[2]
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"
ROBOT = load_urdf(BB_ARM)
JOINTS = driven_joints(ROBOT)
MIMIC = mimic_joints(ROBOT, JOINTS)
LIMITS = from_robot(ROBOT, JOINTS)
N = len(JOINTS)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
VOLATILE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
SAS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
ACCELERATION = 4.0


def parameters(**overrides: Any) -> dict[str, Any]:
    """The driver on the source tree's bb_arm, active and armed, acceleration limits on every joint.

    Collision checking is off here: :func:`mid_range`, the target most of these tests command,
    puts the gripper 4 cm into the first wrist link.  ``test_collision_checking`` turns it on.
    """
    values: dict[str, Any] = {
        "model": str(BB_ARM),
        "autostart": True,
        "auto_arm": True,
        "command_timeout": 0.0,
        "collision.check": False,
        "joint_limits": {j: {"has_acceleration_limits": True, "max_acceleration": ACCELERATION} for j in JOINTS},
    }
    values.update(overrides)
    return values


def duration(seconds: float) -> Duration:
    return Duration(sec=int(seconds), nanosec=int(round((seconds - int(seconds)) * 1e9)))


def gentle() -> list[float]:
    """A target trajectories reach in 3 s within the test's limits."""
    return [0.4 * p for p in mid_range()]


def mid_range() -> list[float]:
    """A reachable target for every joint, well inside the command range."""
    lower, upper = LIMITS.command_lower, LIMITS.command_upper
    return [
        float(0.3 * lo + 0.7 * hi) if np.isfinite(lo) and np.isfinite(hi) else 0.5
        for lo, hi in zip(lower, upper, strict=True)
    ]


class Driver:
    """A running driver and this process's side of every interface it has."""

    def __init__(self, probe: Probe, node: NodeProcess, robot_name: str = "bb_arm") -> None:
        self.probe, self.node = probe, node
        ns, name = node.namespace, node.name
        self.joint_states = probe.subscribe(JointState, f"{ns}/joint_states", VOLATILE)
        self.sas_states = probe.subscribe(JointState, f"{ns}/{robot_name}/get/joint_states", VOLATILE)
        self.sas_min = probe.subscribe(Float64MultiArray, f"{ns}/{robot_name}/get/joint_positions_min", LATCHED)
        self.sas_max = probe.subscribe(Float64MultiArray, f"{ns}/{robot_name}/get/joint_positions_max", LATCHED)
        self.arm_state = probe.subscribe(String, f"{name}/arm_state", LATCHED)
        self.diagnostics = probe.subscribe(DiagnosticArray, "/diagnostics", VOLATILE)
        node_ = probe.node
        self.sas = {
            kind: node_.create_publisher(Float64MultiArray, f"{ns}/{robot_name}/set/target_joint_{kind}", SAS)
            for kind in ("positions", "velocities", "forces")
        }
        self.commands = node_.create_publisher(JointState, f"{name}/joint_commands", VOLATILE)
        self.trajectories = node_.create_publisher(JointTrajectory, f"{name}/joint_trajectory", VOLATILE)
        self.action = ActionClient(node_, FollowJointTrajectory, f"{name}/follow_joint_trajectory")
        self.clients = {
            "arm": node_.create_client(Trigger, f"{name}/arm"),
            "disarm": node_.create_client(Trigger, f"{name}/disarm"),
            "reset": node_.create_client(Trigger, f"{name}/reset"),
            "set_armed": node_.create_client(SetBool, f"{name}/set_armed"),
            "change_state": node_.create_client(ChangeState, f"{name}/change_state"),
            "get_state": node_.create_client(GetState, f"{name}/get_state"),
        }

    # ------------------------------------------------------------------ waiting
    def wait_active(self) -> None:
        self.node.wait_for_log("active: control loop")
        self.wait_state(lambda s: True, "a joint state")

    def wait_state(self, condition: Callable[[JointState], bool], what: str, timeout: float = TIMEOUT) -> JointState:
        def ok() -> bool:
            return bool(self.joint_states) and condition(self.joint_states[-1])

        if not self.probe.spin_until(ok, timeout):
            last = self.joint_states[-1] if self.joint_states else None
            raise AssertionError(f"no joint state with {what} within {timeout} s (last: {last}):\n{self.node.log()}")
        return self.joint_states[-1]

    def positions(self, state: JointState | None = None) -> np.ndarray:
        """The driven joints' positions in ``state`` (default: the last joint state received)."""
        state = self.joint_states[-1] if state is None else state
        index = {name: i for i, name in enumerate(state.name)}
        return np.array([state.position[index[j]] for j in JOINTS])

    def wait_held(self, before: Sequence[float], states: int = 30, **tolerance: float) -> None:
        """After a refused command (its warning or answer seen): the arm stays at ``before`` in every one
        of the next ``states`` joint states (counted at the driver's own rate, not on the test's clock)."""
        start = len(self.joint_states)
        assert self.probe.spin_until(lambda: len(self.joint_states) >= start + states), (
            f"fewer than {states} joint states within {TIMEOUT} s:\n{self.node.log()}"
        )
        for state in self.joint_states[start:]:
            assert self.positions(state) == pytest.approx(before, **tolerance), state

    def wait_positions(self, target: Sequence[float], tolerance: float = 1e-6, timeout: float = TIMEOUT) -> JointState:
        """Wait until the joints are at ``target`` and at rest."""
        goal = np.asarray(target, dtype=float)

        def reached(state: JointState) -> bool:
            index = {name: i for i, name in enumerate(state.name)}
            if not all(j in index for j in JOINTS):
                return False
            at = np.abs(np.array([state.position[index[j]] for j in JOINTS]) - goal).max() < tolerance
            return bool(at and not np.any(np.array([state.velocity[index[j]] for j in JOINTS])))

        return self.wait_state(reached, f"positions {list(goal)} at rest", timeout)

    # ------------------------------------------------------------------ sending
    def publish(self, publisher: Any, message: Any) -> None:
        self.probe.wait_for_subscribers(publisher)
        publisher.publish(message)

    def send_sas(self, kind: str, values: Sequence[float]) -> None:
        self.publish(self.sas[kind], Float64MultiArray(data=[float(v) for v in values]))

    def send_command(self, names: Sequence[str], **fields: Sequence[float]) -> None:
        message = JointState(name=list(names), **{k: [float(x) for x in v] for k, v in fields.items()})
        self.publish(self.commands, message)

    def call(self, client: str, request: Any) -> Any:
        return self._call(client, request)[0]

    def _call(self, client: str, request: Any) -> tuple[Any, int]:
        """The answer and the attempt that got it.

        ``service_is_ready`` says the server reads requests; its answers can still be lost
        while DDS matches the reply path, so an unanswered request is sent again.
        """
        service = self.clients[client]
        assert self.probe.spin_until(service.service_is_ready), f"no service {service.srv_name}:\n{self.node.log()}"
        for attempt in range(1, ANSWER_ATTEMPTS + 1):
            future = service.call_async(request)
            if self.probe.spin_until(future.done, ANSWER_TIMEOUT):
                return future.result(), attempt
            service.remove_pending_request(future)
        raise AssertionError(f"{service.srv_name} did not answer {ANSWER_ATTEMPTS} requests:\n{self.node.log()}")

    def transition(self, transition: int) -> bool:
        answer, attempt = self._call("change_state", ChangeState.Request(transition=Transition(id=transition)))
        if attempt > 1 and not answer.success and self.lifecycle_state() == STATE_AFTER.get(transition):
            return True  # the first request was carried out; only its answer was lost
        return bool(answer.success)

    def lifecycle_state(self) -> str:
        return str(self.call("get_state", GetState.Request()).current_state.label)

    def send_goal(self, goal: Any) -> tuple[Any, list[Any]]:
        assert self.probe.spin_until(lambda: self.action.server_is_ready()), f"no action server:\n{self.node.log()}"
        feedback: list[Any] = []
        future = self.action.send_goal_async(goal, feedback_callback=feedback.append)
        if not self.probe.spin_until(future.done) and LOST_RESPONSE in self.node.log():
            # The middleware dropped the goal's response (as in test_faults.py, docs/testing.md):
            # the driver accepted it; the same goal again preempts it and is answered.
            future = self.action.send_goal_async(goal, feedback_callback=feedback.append)
        assert self.probe.spin_until(future.done), f"the goal was not answered:\n{self.node.log()}"
        handle = future.result()
        assert handle.accepted
        return handle, feedback

    def result(self, handle: Any, timeout: float = TIMEOUT) -> Any:
        future = handle.get_result_async()
        assert self.probe.spin_until(future.done, timeout), f"no result within {timeout} s:\n{self.node.log()}"
        return future.result()

    def warned(self, *texts: str, timeout: float = TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self.node.log()
            if all(text in log for text in texts):
                return log
            self.probe.spin_for(0.05)
        raise AssertionError(f"{texts} not all in the driver's output:\n{self.node.log()}")


def start(probe: Probe, start_node: StartNode, **overrides: Any) -> Driver:
    node = start_node(parameters(**overrides), module="bb_robot.nodes.driver", node="driver")
    driver = Driver(probe, node)
    if overrides.get("autostart", True):
        driver.wait_active()
    return driver


def trajectory(points: Sequence[tuple[float, Sequence[float]]], names: Sequence[str] = JOINTS) -> JointTrajectory:
    message = JointTrajectory(joint_names=list(names))
    for t, positions in points:
        message.points.append(
            JointTrajectoryPoint(positions=[float(p) for p in positions], time_from_start=duration(t))
        )
    return message


# ------------------------------------------------------------------------------ lifecycle
def test_lifecycle_transitions(probe: Probe, start_node: StartNode) -> None:
    driver = start(probe, start_node, autostart=False)
    assert driver.lifecycle_state() == "unconfigured"
    assert not driver.transition(Transition.TRANSITION_ACTIVATE)  # not from unconfigured
    assert driver.transition(Transition.TRANSITION_CONFIGURE) and driver.lifecycle_state() == "inactive"
    assert probe.spin_until(lambda: bool(driver.sas_max)), "sas limits not latched at configure"
    assert list(driver.sas_max[-1].data) == pytest.approx(LIMITS.upper.tolist())
    # Inactive: commands are refused, with the reason.
    driver.call("arm", Trigger.Request())
    driver.send_sas("positions", mid_range())
    driver.warned("rejected a command on", "not active")
    assert not driver.joint_states
    assert driver.transition(Transition.TRANSITION_ACTIVATE) and driver.lifecycle_state() == "active"
    driver.wait_state(lambda s: True, "any state")
    target = mid_range()
    driver.send_sas("positions", target)
    driver.wait_positions(target)
    # Deactivate holds: no more samples, the position stays.  What was published before the answer is
    # still arriving: taken first (the stream falls quiet), then nothing more comes.
    assert driver.transition(Transition.TRANSITION_DEACTIVATE) and driver.lifecycle_state() == "inactive"
    assert probe.spin_until_quiet(lambda: len(driver.joint_states), quiet=0.5), "joint states go on when inactive"
    count = len(driver.joint_states)
    probe.spin_for(0.5)
    assert len(driver.joint_states) == count
    assert driver.transition(Transition.TRANSITION_ACTIVATE)
    state = driver.wait_state(lambda s: len(driver.joint_states) > count, "a state after reactivation")
    assert driver.positions() == pytest.approx(target, abs=1e-6), state
    assert driver.transition(Transition.TRANSITION_DEACTIVATE)
    assert driver.transition(Transition.TRANSITION_CLEANUP) and driver.lifecycle_state() == "unconfigured"
    driver.warned("cleaned up: backend released")
    assert driver.transition(Transition.TRANSITION_CONFIGURE) and driver.lifecycle_state() == "inactive"
    assert driver.transition(Transition.TRANSITION_INACTIVE_SHUTDOWN) and driver.lifecycle_state() == "finalized"


def test_model_from_the_robot_description_topic(probe: Probe, start_node: StartNode) -> None:
    node = start_node(
        {**parameters(model=""), "description_timeout": 30.0}, module="bb_robot.nodes.driver", node="driver"
    )
    publisher = probe.node.create_publisher(String, f"{node.namespace}/robot_description", LATCHED)
    publisher.publish(String(data=BB_ARM.read_text()))
    driver = Driver(probe, node)
    driver.wait_active()
    log = node.log()
    assert "robot_description topic" in log
    assert list(driver.joint_states[-1].name) == [*JOINTS, *MIMIC]


def test_configure_fails_with_the_reason(probe: Probe, start_node: StartNode) -> None:
    driver = start(probe, start_node, autostart=False, model="", description_timeout=0.3)
    assert not driver.transition(Transition.TRANSITION_CONFIGURE)
    driver.warned("configure failed: no robot_description message on", "start the description node")
    assert driver.lifecycle_state() == "unconfigured"
    bad = start(probe, start_node, autostart=False, backend="warp_drive")
    assert not bad.transition(Transition.TRANSITION_CONFIGURE)
    bad.warned("unknown backend 'warp_drive' (known: ", "sim")
    # The servo switched on without servo.tip where bb_arm's tree branches at the fingers: no
    # guessing which link moves; configure fails naming the candidates (docs/nodes/servo.md).
    servo = start(probe, start_node, autostart=False, **{"servo.enable": True})
    assert not servo.transition(Transition.TRANSITION_CONFIGURE)
    servo.warned("configure failed: servo.tip is empty", "finger", "set servo.tip to the link to move")
    assert servo.lifecycle_state() == "unconfigured"


# ------------------------------------------------------------------------------ commands
def test_commands_converge_within_the_limits(probe: Probe, start_node: StartNode) -> None:
    driver = start(probe, start_node)
    assert probe.spin_until(lambda: bool(driver.sas_min) and bool(driver.sas_max))
    first = driver.wait_state(lambda s: True, "a state")
    assert list(first.name) == [*JOINTS, *MIMIC] and len(first.velocity) == len(first.name)
    assert not first.effort  # the simulator measures no effort
    # sas array, in joint order
    target = mid_range()
    driver.send_sas("positions", target)
    start_index = len(driver.joint_states)
    driver.wait_positions(target)
    moves = driver.joint_states[start_index:]
    velocities = np.array([[s.velocity[s.name.index(j)] for j in JOINTS] for s in moves])
    assert (np.abs(velocities) <= LIMITS.velocity + 1e-9).all()
    stamps = np.array([s.header.stamp.sec + s.header.stamp.nanosec * 1e-9 for s in moves])
    accelerations = np.diff(velocities, axis=0) / np.diff(stamps)[:, None]
    assert (np.abs(accelerations) <= ACCELERATION * 1.05 + 1e-6).all()
    # At rest at the target, the sas state and joint_states report the same sample: equal to 1e-9.
    assert probe.spin_until(
        lambda: (
            bool(driver.sas_states)
            and np.abs(np.array(driver.sas_states[-1].position) - driver.positions()).max() < 1e-9
        )
    ), (list(driver.sas_states[-1].position) if driver.sas_states else None, list(driver.positions()))
    # mimic joints follow
    for name, mimic in MIMIC.items():
        state = driver.joint_states[-1]
        assert state.position[state.name.index(name)] == pytest.approx(
            mimic.multiplier * state.position[state.name.index(mimic.source)] + mimic.offset
        )
    # by name, velocity: the joint moves, then stops at its (soft) limit
    joint = JOINTS[0]
    driver.send_command([joint], velocity=[LIMITS.velocity[0]])
    upper = LIMITS.command_upper[0]
    count = len(driver.joint_states)
    driver.wait_state(lambda s: s.position[0] > upper - 0.01 and s.velocity[0] == 0, "stopped at the limit")
    assert max(s.position[0] for s in driver.joint_states[count:]) <= upper + 1e-4
    # by name, position beyond the soft limit (within the 0.1 rad clamp margin): clamped, with a
    # warning naming the topic
    driver.send_command([joint], position=[upper + 0.05])
    driver.warned(f"command on '{driver.node.name}/joint_commands': clamped position to the joint limits: {joint}")
    # sas velocities: the first joint moves back from its limit.  The next command comes on another
    # topic (no order between the two): it is sent once the velocity shows in the joint states.
    driver.send_sas("velocities", [-0.1] + [0.0] * (N - 1))
    driver.wait_state(lambda s: abs(s.velocity[s.name.index(joint)] + 0.1) < 1e-9, "the sas velocity")
    driver.send_sas("positions", target)
    driver.wait_positions(target)


def test_bad_inputs_are_rejected_and_the_loop_keeps_running(probe: Probe, start_node: StartNode) -> None:
    driver = start(probe, start_node)
    ns = driver.node.namespace
    positions_topic = f"{ns}/bb_arm/set/target_joint_positions"
    commands_topic = f"{driver.node.name}/joint_commands"
    # The sas subscriptions keep one message (depth 1, as sas_robot_driver): the next is sent once
    # the driver has taken the last.  (A publisher can see the driver's subscription before the
    # driver has matched the publisher; what it sends meanwhile is delivered once they match, but
    # a depth-1 queue holds only the newest by then.)
    for values, warning in (
        ([float("nan")] + [0.0] * (N - 1), f"non-finite position values: {JOINTS[0]}=nan"),
        ([0.0] * (N - 1), f"{N - 1} values for {N} joints"),
    ):
        driver.send_sas("positions", values)
        driver.warned(f"rejected a command on '{positions_topic}': {warning}")
    driver.send_sas("forces", [0.0] * N)
    driver.send_command([JOINTS[1]], velocity=[float("-inf")])
    driver.send_command(["no_such_joint"], position=[0.0])
    driver.send_command([JOINTS[0], JOINTS[0]], position=[0.0, 0.0])
    driver.send_command([JOINTS[0], JOINTS[1]], position=[0.0])
    for name in MIMIC:
        driver.send_command([name], position=[0.01])
    driver.send_command([JOINTS[0]])
    driver.publish(driver.trajectories, trajectory([(0.05, mid_range())]))  # far too fast
    driver.publish(driver.trajectories, trajectory([(1.0, [0.0] * (N - 1))], names=JOINTS[:-1]))  # partial
    driver.warned(
        f"rejected a command on '{positions_topic}': non-finite position values: {JOINTS[0]}=nan",
        f"rejected a command on '{commands_topic}': non-finite velocity values: {JOINTS[1]}=-inf",
        f"rejected a command on '{positions_topic}': {N - 1} values for {N} joints",
        f"rejected a command on '{ns}/bb_arm/set/target_joint_forces': backend 'sim' does not support effort commands",
        f"rejected a command on '{commands_topic}': unknown joint 'no_such_joint'",
        "is named twice",
        "2 names but 1 position values",
        "no position, velocity or effort values",
        "the timing needs velocity",
        "leaves out joints",
        *([f"mimics '{next(iter(MIMIC.values())).source}'"] if MIMIC else []),
    )
    # The loop kept running: states still flow and a good command still works.
    count = len(driver.joint_states)
    assert probe.spin_until(lambda: len(driver.joint_states) > count), driver.node.log()
    target = mid_range()
    driver.send_sas("positions", target)
    driver.wait_positions(target)


def test_reject_policy(probe: Probe, start_node: StartNode) -> None:
    driver = start(probe, start_node, limit_policy="reject")
    before = driver.positions()
    driver.send_command([JOINTS[0]], position=[float(LIMITS.command_upper[0]) + 0.5])
    driver.warned("outside the joint limits (limit_policy: reject)")
    driver.wait_held(before)


def test_absurd_commands_never_move_the_arm_by_default(probe: Probe, start_node: StartNode) -> None:
    """1e300 rad, or degrees for radians, is refused whole; just past a limit is clamped (clamp_near)."""
    driver = start(probe, start_node)
    ns = driver.node.namespace
    before = driver.positions()
    upper = float(LIMITS.command_upper[0])
    absurd = [1e300] + list(before[1:])
    driver.send_sas("positions", absurd)
    driver.warned(
        f"rejected a command on '{ns}/bb_arm/set/target_joint_positions': position too far outside the joint "
        f"limits to be clamped (limit_policy: clamp_near, clamp_margin.*): {JOINTS[0]} 1e+300 outside"
    )
    driver.wait_held(before)  # not a step towards the limit
    driver.send_command([JOINTS[0]], position=[upper + 0.05])  # within the 0.1 rad margin: clamped
    driver.wait_positions([upper, *before[1:]])


# ------------------------------------------------------------------------------ trajectories
def test_trajectory_topic_and_preemption(probe: Probe, start_node: StartNode) -> None:
    driver = start(probe, start_node)
    target = gentle()
    driver.publish(driver.trajectories, trajectory([(1.5, np.array(target) * 0.5), (3.0, target)]))
    driver.wait_positions(target)
    # A trajectory replaces a running one at once: the first (back to zero) is cut short once the
    # arm has started on it, early in its 3 s, and the arm goes to `other`, 30 % of the way; it never
    # gets near zero, as it would if the driver ignored the replacement or queued it behind the first.
    other = [0.3 * p for p in target]
    start_index = len(driver.joint_states)
    driver.publish(driver.trajectories, trajectory([(3.0, [0.0] * N)]))
    driver.wait_state(lambda s: np.abs(driver.positions(s) - target).max() > 1e-3, "the first trajectory started")
    driver.publish(driver.trajectories, trajectory([(3.0, other)]))
    driver.wait_positions(other)
    moving = [j for j, p in enumerate(target) if abs(p) > 0.2]
    assert moving
    fractions = np.array(
        [[s.position[s.name.index(JOINTS[j])] / target[j] for j in moving] for s in driver.joint_states[start_index:]]
    )
    assert fractions.min() > 0.2, f"the arm went {fractions.min():.2f} of the way back to zero: not replaced"


def goal(points: Sequence[tuple[float, Sequence[float]]], **fields: Any) -> Any:
    message = FollowJointTrajectory.Goal(trajectory=trajectory(points))
    for key, value in fields.items():
        setattr(message, key, value)
    return message


def test_follow_joint_trajectory(probe: Probe, start_node: StartNode) -> None:
    driver = start(probe, start_node, **{"constraints.goal_time": 1.0})
    Result = FollowJointTrajectory.Result  # noqa: N806
    target = gentle()
    # success, with feedback
    handle, feedback = driver.send_goal(goal([(3.0, target)]))
    result = driver.result(handle)
    assert result.status == 4 and result.result.error_code == Result.SUCCESSFUL, result.result.error_string
    assert feedback and list(feedback[-1].feedback.joint_names) == list(JOINTS)
    assert driver.wait_positions(target)
    # cancel
    handle, feedback = driver.send_goal(goal([(3.0, [0.0] * N)]))
    assert probe.spin_until(lambda: bool(feedback)), "no feedback: the goal is not executing"
    cancel = handle.cancel_goal_async()
    assert probe.spin_until(cancel.done)
    assert driver.result(handle).status == 5  # CANCELED
    # preemption: the first goal is aborted with the reason
    first, feedback = driver.send_goal(goal([(3.0, target)]))
    assert probe.spin_until(lambda: bool(feedback)), "no feedback: the first goal is not executing"
    second, _ = driver.send_goal(goal([(3.0, [0.0] * N)]))
    result = driver.result(first)
    assert result.status == 6 and result.result.error_code == Result.INVALID_GOAL
    assert "preempted by a new trajectory" in result.result.error_string
    assert driver.result(second).result.error_code == Result.SUCCESSFUL
    assert driver.wait_positions([0.0] * N)  # where the second goal goes, not the first
    # invalid goals: the reason comes back
    handle, _ = driver.send_goal(goal([(0.05, target)]))
    result = driver.result(handle)
    assert result.result.error_code == Result.INVALID_GOAL and "the timing needs" in result.result.error_string
    bad = goal([(2.0, target)])
    bad.trajectory.joint_names[0] = "nope"
    handle, _ = driver.send_goal(bad)
    result = driver.result(handle)
    assert result.result.error_code == Result.INVALID_JOINTS and "unknown joint 'nope'" in result.result.error_string
    handle, _ = driver.send_goal(goal([(2.0, target)], path_tolerance=[JointTolerance(name="nope", position=0.1)]))
    assert driver.result(handle).result.error_code == Result.INVALID_JOINTS


def test_tolerance_violations_and_live_limits(probe: Probe, start_node: StartNode) -> None:
    driver = start(probe, start_node)
    Result = FollowJointTrajectory.Result  # noqa: N806
    joint = JOINTS[0]
    # Path tolerance: slow the first joint down (a live parameter change) while it executes.  The
    # goal is long (8 s, about 0.15 rad/s on average for the first joint) so that the change lands
    # while it runs however long a busy host takes to answer the parameter request; the error then
    # passes the tolerance about 0.2 s after the change.
    handle, feedback = driver.send_goal(
        goal([(8.0, mid_range())], path_tolerance=[JointTolerance(name=joint, position=0.02)])
    )
    assert probe.spin_until(lambda: bool(feedback)), "no feedback: the goal is not executing"
    results = probe.set_parameters(
        driver.node.name,
        {f"joint_limits.{joint}.has_velocity_limits": True, f"joint_limits.{joint}.max_velocity": 0.05},
    )
    assert all(r.successful for r in results)
    result = driver.result(handle)
    assert result.status == 6 and result.result.error_code == Result.PATH_TOLERANCE_VIOLATED
    assert f"joint '{joint}' position error" in result.result.error_string
    # The new limit holds for every command: just over it (within the 10 % clamp margin) is clamped,
    # far over it is refused.
    driver.send_command([joint], velocity=[-1.0])
    refused = "velocity too far outside the joint limits to be clamped (limit_policy: clamp_near, clamp_margin.*)"
    driver.warned(f"{refused}: {joint} -1 outside [-0.05, 0.05]")
    driver.send_command([joint], velocity=[-0.052])
    driver.wait_state(lambda s: abs(s.velocity[s.name.index(joint)] + 0.05) < 1e-9, "the slowed velocity")
    driver.send_command([joint], velocity=[0.0])
    # Goal tolerance: a goal the joint cannot reach in time once it is slowed down further (4 s
    # long, so that the change lands before its end on a busy host too).
    probe.set_parameters(driver.node.name, {f"joint_limits.{joint}.max_velocity": 1.0})
    here = driver.positions()
    end = here.copy()
    end[0] += 0.2
    handle, _ = driver.send_goal(
        goal(
            [(4.0, end)], goal_tolerance=[JointTolerance(name=joint, position=0.001)], goal_time_tolerance=duration(0.2)
        )
    )
    probe.set_parameters(driver.node.name, {f"joint_limits.{joint}.max_velocity": 0.001})
    result = driver.result(handle)
    assert result.result.error_code == Result.GOAL_TOLERANCE_VIOLATED, result.result.error_string
    assert "goal_time_tolerance 0.2 s" in result.result.error_string
    # Bound model parameter: the upper limit, published on the sas topic.
    upper = float(LIMITS.upper[1]) - 0.1
    results = probe.set_parameters(driver.node.name, {f"joints.{JOINTS[1]}.limit.upper": upper})
    assert all(r.successful for r in results)
    assert probe.spin_until(lambda: driver.sas_max[-1].data[1] == pytest.approx(upper))
    bad = probe.set_parameters(driver.node.name, {f"joint_limits.{joint}.max_velocity": -1.0})
    assert not bad[0].successful and "above 0" in bad[0].reason
    assert not probe.set_parameters(driver.node.name, {"rate": 100.0})[0].successful  # active


# ------------------------------------------------------------------------------ arming, watchdog
def test_arming(probe: Probe, start_node: StartNode) -> None:
    driver = start(probe, start_node, auto_arm=False)
    assert probe.spin_until(lambda: bool(driver.arm_state) and driver.arm_state[-1].data == "disarmed")
    before = driver.positions()
    driver.send_sas("positions", mid_range())
    driver.warned("the driver is disarmed", "call ~/arm")
    driver.wait_held(before)
    response = driver.call("arm", Trigger.Request())
    assert response.success and response.message == "armed"
    assert probe.spin_until(lambda: driver.arm_state[-1].data == "armed")
    target = mid_range()
    driver.send_sas("positions", target)
    driver.wait_positions(target)
    assert driver.call("set_armed", SetBool.Request(data=False)).success
    assert probe.spin_until(lambda: driver.arm_state[-1].data == "disarmed")
    assert driver.call("set_armed", SetBool.Request(data=True)).success
    assert driver.call("disarm", Trigger.Request()).success
    response = driver.call("reset", Trigger.Request())
    assert response.success and "not in error" in response.message
    handle, _ = driver.send_goal(goal([(2.0, [0.0] * N)]))
    result = driver.result(handle)
    assert (
        result.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
        and "disarmed" in result.result.error_string
    )


def test_watchdog(probe: Probe, start_node: StartNode) -> None:
    driver = start(probe, start_node, command_timeout=0.3)
    joint = JOINTS[0]
    driver.send_command([joint], velocity=[0.3])
    driver.wait_state(lambda s: abs(s.velocity[0] - 0.3) < 1e-9, "moving")
    stopped = driver.wait_state(lambda s: s.velocity[0] == 0.0, "stopped by the watchdog")
    # By the watchdog, far from where the joint's limit would have stopped it (about 10 s at 0.3 rad/s).
    assert stopped.position[0] < float(LIMITS.command_upper[0]) - 0.5, stopped
    driver.warned("watchdog: no command for 0.3 s (command_timeout): holding position")
    # A trajectory longer than the timeout is a live command.
    here = driver.positions()
    target = here.copy()
    target[0] -= 0.3
    handle, _ = driver.send_goal(goal([(1.5, target)]))
    assert driver.result(handle).result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    # watchdog_action: disarm
    assert all(r.successful for r in probe.set_parameters(driver.node.name, {"watchdog_action": "disarm"}))
    assert not probe.set_parameters(driver.node.name, {"watchdog_action": "explode"})[0].successful
    driver.send_command([joint], velocity=[0.3])
    assert probe.spin_until(lambda: bool(driver.arm_state) and driver.arm_state[-1].data == "disarmed")
    driver.warned("watchdog: no command for 0.3 s (command_timeout): disarming")


# ------------------------------------------------------------------------------ reporting
def test_diagnostics_and_sas_topics(probe: Probe, start_node: StartNode) -> None:
    driver = start(probe, start_node)
    name = driver.node.name.strip("/").rsplit("/", 1)[-1]

    def ours(array: DiagnosticArray) -> list[Any]:
        return [s for s in array.status if s.name.startswith(f"{name}: ") and s.hardware_id == ROBOT.name]

    assert probe.spin_until(lambda: any(len(ours(a)) == 5 for a in driver.diagnostics))
    statuses = {s.name.split(": ", 1)[1]: s for s in ours(next(a for a in driver.diagnostics if ours(a)))}
    assert set(statuses) == {"control loop", "backend", "arming", "joints", "servo"}  # servo: docs/nodes/servo.md
    loop = {kv.key: kv.value for kv in statuses["control loop"].values}
    assert {"rate (Hz)", "measured rate (Hz)", "lag p99 (ms)", "skipped cycles", "command age (s)"} <= set(loop)
    # joint_states from a thread of their own (not the executor's), its scheduling named.
    assert loop["joint_states"].startswith("at 100 Hz, its own thread (") and loop["commands"] == "written at once"
    assert float(loop["joint_states stamp gap max, since activation (ms)"]) > 0  # measured while publishing
    assert statuses["arming"].message == "armed" and statuses["backend"].message == "simulated"
    assert probe.spin_until(lambda: bool(driver.sas_states) and bool(driver.sas_min))
    assert list(driver.sas_states[-1].name) == list(JOINTS)
    assert list(driver.sas_min[-1].data) == pytest.approx(LIMITS.lower.tolist())

    # publish_rate 0, live: the simulator is read by the loop, so each cycle's sample is published.
    results = probe.set_parameters(driver.node.name, {"publish_rate": 0.0, "immediate_commands": False})
    assert all(r.successful for r in results), results

    def loop_values() -> dict[str, str]:
        latest = [s for a in driver.diagnostics for s in ours(a) if s.name.endswith(": control loop")]
        return {kv.key: kv.value for kv in latest[-1].values} if latest else {}

    assert probe.spin_until(lambda: loop_values().get("joint_states") == "each sample, after each control cycle"), (
        loop_values()
    )
    assert loop_values()["commands"] == "written at the next cycle"
    driver.joint_states.clear()
    assert probe.spin_until(lambda: len(driver.joint_states) >= 50), f"{len(driver.joint_states)} joint states"
    stamps = [(m.header.stamp.sec, m.header.stamp.nanosec) for m in driver.joint_states]
    assert len(set(stamps)) == len(stamps), "a sample was published twice"


BACKEND_MODULE = '''
"""A backend for the driver's node tests: reports the first joint late, and goes silent on request.

The first joint is not seen for 1 s; it then reports until a file named ``silence`` appears in
the working directory (the test creates it once it has received a state), and is silent after.
"""
import os

from bb_robot.driver.backends.sim import SimBackend


class LateBackend(SimBackend):
    name = "late"

    def read(self, now_ns):
        sample = super().read(now_ns)
        if self.first is None:
            self.first = now_ns
        stamps = sample.stamps.copy()
        if (now_ns - self.first) * 1e-9 < 1.0:
            stamps[0] = 0  # not seen yet
        elif self.silent_since is not None or os.path.exists("silence"):
            self.silent_since = self.silent_since or now_ns
            stamps[0] = self.silent_since  # silent since
        return type(sample)(sample.positions, sample.velocities, None, stamps, now_ns)

    first = None
    silent_since = None
'''


def test_joint_states_wait_for_every_joint_and_leave_stale_ones_out(
    probe: Probe, start_node: StartNode, tmp_path: Path
) -> None:
    (tmp_path / "late_backend.py").write_text(BACKEND_MODULE)
    node = start_node(
        parameters(backend="late_backend:LateBackend", stale_timeout=0.1),
        module="bb_robot.nodes.driver",
        node="driver",
        pythonpath=(str(tmp_path),),
    )
    driver = Driver(probe, node)
    node.wait_for_log("active: control loop")
    first = driver.wait_state(lambda s: True, "a state")
    assert JOINTS[0] in first.name  # published only once every joint was seen
    (tmp_path / "silence").touch()  # the first joint goes silent now
    stale = driver.wait_state(lambda s: JOINTS[0] not in s.name, "the silent joint left out")
    assert list(stale.name) == [j for j in [*JOINTS, *MIMIC] if j != JOINTS[0]]
    assert probe.spin_until(
        lambda: any(s.message == f"stale: {JOINTS[0]}" for a in driver.diagnostics for s in a.status)
    )


def test_collision_checking(probe: Probe, start_node: StartNode) -> None:
    """With collision checking (the default): a goal into the arm itself is refused before it moves
    anything, naming the pair and the time; one clear of it is executed; /diagnostics names the
    nearest pair."""
    # A slow-down distance of 10 cm: /diagnostics names the nearest pair within twice that.
    driver = start(probe, start_node, **{"collision.check": True, "collision.slowdown_distance": 0.1})
    driver.wait_active()
    assert "allowed-collision matrix from" in driver.node.log() and "bb_arm.srdf" in driver.node.log()
    start_state = driver.positions()
    handle, _ = driver.send_goal(goal([(3.0, mid_range())]))
    result = driver.result(handle)
    assert result.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL, result.result.error_string
    text = result.result.error_string
    assert "collision: links 'gripper_base' and 'wrist_1_link'" in text and "at t = " in text, text
    driver.wait_held(start_state, abs=1e-9)
    # The same through the trajectory topic: refused and logged.
    driver.publish(driver.trajectories, trajectory([(3.0, mid_range())]))
    driver.warned("collision: links 'gripper_base' and 'wrist_1_link'")
    # A position command to the same pose: its approach path is checked the same way, refused, logged.
    driver.send_sas("positions", mid_range())
    driver.warned("target_joint_positions': collision: links 'gripper_base' and 'wrist_1_link'", "not executed")
    driver.wait_held(start_state, abs=1e-9)
    target = gentle()
    handle, _ = driver.send_goal(goal([(3.0, target)]))
    result = driver.result(handle)
    assert result.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result.result.error_string
    name = driver.node.name.strip("/").rsplit("/", 1)[-1]

    def collision_status() -> Any:
        found = [s for a in driver.diagnostics for s in a.status if s.name == f"{name}: collision"]
        return found[-1] if found else None

    assert probe.spin_until(lambda: collision_status() is not None and "nearest" in collision_status().message)
    values = {kv.key: kv.value for kv in collision_status().values}
    assert "nearest pair" in values and float(values["nearest distance (m)"]) > 0
    # The checker is a process of the driver's own, and it ends with the driver (SIGINT, as launch stops
    # it; a SIGKILLed parent: test_collision_checker, without DDS).
    checker = int(values["checker"].removeprefix("process "))
    assert parent_of(checker) == driver.node.process.pid, "the checker is the driver's child"
    assert driver.node.stop() == 0, driver.node.log()
    wait_until_ended(checker, "the collision checker of a stopped driver")


def test_with_the_description_node_and_the_bundled_config(probe: Probe, start_node: StartNode) -> None:
    """config/bb_arm.yaml for both nodes, as the launch files pass it: the driver takes its model
    from the description node's robot_description, and its joint states drive the TF."""
    config = str(REPO_ROOT / "config" / "bb_arm.yaml")
    description = start_node({}, args=("--params-file", config))  # (both nodes log to one file: same namespace)
    node = start_node(
        {"autostart": True, "auto_arm": True},
        namespace=description.namespace,
        args=("--params-file", config),
        module="bb_robot.nodes.driver",
        node="driver",
    )
    driver = Driver(probe, node)
    driver.wait_active()
    assert "(string, robot_description topic)" in node.log()
    # The config's watchdog (command_timeout 0.5 s) holds a one-off position command that takes
    # longer; a trajectory is a live command until it ends.
    target = gentle()
    driver.publish(driver.trajectories, trajectory([(3.0, target)]))
    driver.wait_positions(target)
    assert description.alive()


def test_a_rate_the_machine_cannot_keep_is_said_measured_with_a_lower_one_offered(
    probe: Probe, start_node: StartNode
) -> None:
    # 10 kHz leaves 0.1 ms per cycle: no Python control cycle fits comfortably on any machine.
    driver = start(probe, start_node, rate=10000.0)
    log = driver.node.wait_for_log("control loop: this machine runs the control cycle in")
    line = next(line for line in log.splitlines() if "control loop: this machine runs" in line)
    assert re.search(r"in \d+\.\d\d ms: at 10000 Hz that is \d+ % of one CPU", line), line
    assert "; rate: " in line, line  # a lower rate, with what it would leave
