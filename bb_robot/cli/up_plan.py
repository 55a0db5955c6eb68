"""``bb-robot up --demo-plan``: a pose goal behind the post, through MoveIt's ``move_action``, judged.

The arm stands on a table with a post in front of it (``config/bb_arm_table.yaml``, whose
``collision.world`` is ``models/bb_arm_table.yaml``: the driver's guard, the move_group node's
planner and the view all read it).  Once the system is up and the driver armed, :class:`PlanDemo`
sends the move_group node one ``moveit_msgs/action/MoveGroup`` goal, as MoveIt's clients send a
pose target (a sphere around the position and an orientation constraint; :data:`SENT_POSITION_TOLERANCE`,
:data:`SENT_ORIENTATION_TOLERANCE`): the tool :data:`BEHIND` beyond the post, seen from the arm,
:data:`GOAL_HEIGHT` above the table, pointing down (:func:`goal_behind`); planned and executed
(``plan_only`` false).  Every joint state received from the moment the goal is sent until the arm
has settled after the result is checked by the collision library against the post
(:class:`PlanJudge`), and the tool pose of the last one (forward kinematics) against the goal.
Success: the tool within :data:`POSITION_TOLERANCE` and :data:`ORIENTATION_TOLERANCE` of the goal,
and the arm never nearer the post than :data:`CLEARANCE`.  It never imports rclpy: the client
(:mod:`bb_robot.nodes.up_client`) does the ROS part.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bb_robot.cli.up_cartesian import DemoThread
from bb_robot.cli.up_inputs import BringupPlan, UpError
from bb_robot.collision.matrix import default_configuration
from bb_robot.collision.model import CollisionModel, link_pair
from bb_robot.collision.objects import WORLD_PREFIX
from bb_robot.collision.shapes import Part
from bb_robot.errors import BbRobotError
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import Matrix, matrix_to_quaternion
from bb_robot.move_group.moveit_goals import Code

if TYPE_CHECKING:
    from bb_robot.bringup.status import MoveProgress
    from bb_robot.nodes.up_client import JointStateRecord, UpClient

#: The parameter file ``--demo-plan`` uses when neither MODEL nor ``--config`` is given.
DEMO_CONFIG = "bb_arm_table.yaml"
#: The obstacle of ``collision.world`` the goal is behind and the motion is judged against.
POST = "post"
#: How far beyond the post's axis the goal is, along the line from the arm's base through it (m).
BEHIND = 0.15
#: The goal's height above the arm's base frame (the table top in the shipped world) (m).
GOAL_HEIGHT = 0.25
#: What is judged: the tool's distance from the goal position (m) and angle from its orientation (rad).
POSITION_TOLERANCE = 1e-3
ORIENTATION_TOLERANCE = 1e-3
#: The least distance between the arm and the post in every measured joint state (m).
CLEARANCE = 0.01
#: The tolerances the goal is sent with: a tenth of the judged ones, the rest for the execution.
SENT_POSITION_TOLERANCE = 1e-4
SENT_ORIENTATION_TOLERANCE = 1e-4
#: The planning group (the move_group node serves the driven chain as ``arm`` when the SRDF has none).
GROUP = "arm"
#: ``allowed_planning_time`` (s).
PLANNING_TIME = 10.0
#: How long the result may take beyond the planning time and the planned motion (s), and the joint states.
SLACK = 20.0
#: Settled: this many successive joint states in which no joint moved more than :data:`STILL` (rad or m).
STILL_STATES = 20
STILL = 1e-5
#: How long the arm may take to settle after the result (s); judged where it is after that.
SETTLE_TIMEOUT = 10.0

_CODE_NAMES = {value: name for name, value in vars(Code).items() if name.isupper() and isinstance(value, int)}


def code_name(code: int | None) -> str:
    """A ``MoveItErrorCodes`` value's name (``-1`` → ``PLANNING_FAILED``)."""
    return "no result" if code is None else _CODE_NAMES.get(code, str(code))


def post_parts(parts: Sequence[Part], name: str = POST) -> tuple[Part, ...]:
    """The parts of obstacle ``name`` (``world/<name>``, and its sub-parts) among a world's."""
    link = f"{WORLD_PREFIX}{name}"
    return tuple(part for part in parts if part.link == link or part.link.startswith(f"{link}/"))


def goal_behind(post: Sequence[Part], behind: float = BEHIND, height: float = GOAL_HEIGHT) -> Matrix:
    """The demo's goal: ``behind`` beyond the post's centre, away from the base, at ``height``, pointing down.

    Args:
        post: the post's parts (root frame).
        behind: metres beyond the post's centre along the horizontal line from the base through it.
        height: the goal's height in the root frame (m).

    Returns:
        A 4×4 pose in the root frame: z pointing down, x along that line (away from the base).

    Raises:
        UpError: no post, or a post straight above the base (no direction to be behind it in).
    """
    if not post:
        raise UpError(f"--demo-plan: the collision world has no obstacle named '{POST}'")
    points = np.concatenate([part.points for part in post])
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    direction = np.array([centre[0], centre[1], 0.0])
    if float(np.linalg.norm(direction)) < 1e-3:
        where = centre.round(3).tolist()
        raise UpError(f"--demo-plan: the post stands over the arm's base ({where}): no side is behind it")
    direction /= np.linalg.norm(direction)
    down = np.array([0.0, 0.0, -1.0])
    pose = np.eye(4)
    pose[:3, :3] = np.column_stack((direction, np.cross(down, direction), down))
    pose[:3, 3] = centre * [1.0, 1.0, 0.0] + direction * behind + [0.0, 0.0, height]
    return pose


def rotation_angle(a: Matrix, b: Matrix) -> float:
    """The angle of the rotation between two orientations (rad, in [0, π])."""
    cosine = (float(np.trace(a[:3, :3].T @ b[:3, :3])) - 1.0) / 2.0
    return math.acos(min(1.0, max(-1.0, cosine)))


@dataclass(frozen=True)
class Nearest:
    """The arm's nearest approach to the post over the joint states judged."""

    distance: float
    link: str
    states: int


class PlanJudge:
    """Judges the demo: each measured joint state against the post, the last one's tool against the goal.

    Args:
        model: the robot's collision model (its parts; the pairs of robot links are not checked).
        post: the post's parts, in the root frame.
        chain: the chain to the tool (its tip is the goal's link).
        goal: the tool's goal pose in the root frame.
    """

    def __init__(self, model: CollisionModel, post: Sequence[Part], chain: SerialManipulator, goal: Matrix) -> None:
        links = model.links_with_geometry
        robot_pairs = {link_pair(a, b) for i, a in enumerate(links) for b in links[i + 1 :]}
        self.model = CollisionModel(model.robot, model.parts, robot_pairs, tuple(post))
        self.chain, self.goal = chain, goal
        self.names = tuple(self.model.fk.joint_names)
        self._nearest = Nearest(math.inf, "", 0)
        # the first query loads the compiled placement step (seconds on a slow host): now, not while judging
        self.model.nearest(default_configuration(model.robot, self.names))

    def _vector(self, names: Sequence[str], positions: Sequence[float], wanted: Sequence[str]) -> np.ndarray:
        known = dict(zip(names, positions, strict=False))
        missing = [name for name in wanted if name not in known]
        if missing:
            raise UpError(f"--demo-plan: a joint state without {', '.join(missing)}")
        return np.array([known[name] for name in wanted], dtype=float)

    def add(self, names: Sequence[str], positions: Sequence[float]) -> float:
        """Measure one joint state against the post; returns the arm's distance from it (m)."""
        contact = self.model.nearest(self._vector(names, positions, self.names))
        distance = math.inf if contact is None else float(contact.distance)
        best = self._nearest
        if distance < best.distance:
            link = "" if contact is None else next(name for name in contact.links if not name.startswith(WORLD_PREFIX))
            self._nearest = Nearest(distance, link, best.states + 1)
        else:
            self._nearest = Nearest(best.distance, best.link, best.states + 1)
        return distance

    @property
    def nearest(self) -> Nearest:
        """The nearest approach so far."""
        return self._nearest

    def tool_error(self, names: Sequence[str], positions: Sequence[float]) -> tuple[float, float]:
        """The tool's distance (m) and angle (rad) from the goal at one joint state (forward kinematics)."""
        pose = self.chain.end_effector_pose(self._vector(names, positions, self.chain.joint_names))
        return float(np.linalg.norm(pose[:3, 3] - self.goal[:3, 3])), rotation_angle(pose, self.goal)

    def verdict(self, names: Sequence[str], positions: Sequence[float]) -> tuple[bool, str]:
        """Whether the demo succeeded, and the line saying what was measured.

        Args:
            names: the last joint state's names.
            positions: its positions.

        Returns:
            ``(ok, text)``: the tool's errors and the nearest approach to the post, against the limits.
        """
        position, angle = self.tool_error(names, positions)
        near = self.nearest
        reached = position <= POSITION_TOLERANCE and angle <= ORIENTATION_TOLERANCE
        clear = near.distance >= CLEARANCE
        text = (
            f"tool {position * 1000:.3f} mm and {angle * 1000:.3f} mrad from the goal "
            f"(at most {POSITION_TOLERANCE * 1000:g} mm, {ORIENTATION_TOLERANCE * 1000:g} mrad); "
            f"closest to the post {near.distance * 1000:.1f} mm ({near.link or 'no link'}; {near.states} joint states; "
            f"at least {CLEARANCE * 1000:g} mm)"
        )
        if reached and clear:
            return True, text
        failed = [
            *([] if reached else ["the tool did not reach the goal"]),
            *([] if clear else [f"the arm came within {CLEARANCE * 1000:g} mm of the post"]),
        ]
        return False, f"{' and '.join(failed)}: {text}"


@dataclass(frozen=True)
class PlanSetup:
    """What the demo needs, checked before anything starts (:func:`plan_setup`)."""

    judge: PlanJudge
    chain: SerialManipulator
    goal: Matrix


def plan_setup(plan: BringupPlan) -> PlanSetup:
    """Read the parameter file's world and the robot's geometry; the goal behind the post and the judge.

    Raises:
        UpError: no collision world, no post in it, no collision geometry, no tool chain.
    """
    config = plan.config
    if not config.collision_world:
        raise UpError(
            f"--demo-plan: {config.path} gives the driver no collision.world; use {DEMO_CONFIG} (the default "
            f"for --demo-plan) or a world with an obstacle named '{POST}'"
        )
    if plan.loaded is None:
        raise UpError("--demo-plan: the model was not loaded")
    from bb_robot.collision.sources import checked_model
    from bb_robot.collision.world import model_world

    try:
        model, _ = checked_model(plan.loaded, plan.model_dirs)
        world = model_world(plan.loaded, config.collision_world, plan.model_dirs)
        chain = SerialManipulator.from_robot(plan.robot, config.servo_tip or plan.tip, strict=False)
    except BbRobotError as error:
        raise UpError(f"--demo-plan: {error}") from None
    post = post_parts(world.parts)
    if not post:
        raise UpError(f"--demo-plan: the collision world {config.collision_world} has no obstacle named '{POST}'")
    goal = goal_behind(post)
    return PlanSetup(PlanJudge(model, post, chain, goal), chain, goal)


class PlanDemo(DemoThread):
    """The demo of one robot, on its own thread (:meth:`start`); :attr:`outcome` fills in.

    Args:
        setup: the goal and the judge (:func:`plan_setup`).
        client: the ROS client.
        namespace: the robot's namespace.
        say: prints a progress line with the time.
        stop: set on a signal.
    """

    def __init__(
        self, setup: PlanSetup, client: UpClient, namespace: str, say: Callable[[str], None], stop: threading.Event
    ) -> None:
        super().__init__("plan-demo")
        self.setup, self.client, self.namespace, self.say, self.stop = setup, client, namespace, say, stop
        self.label = f"/{namespace} " if namespace else ""

    def start(self) -> PlanDemo:
        """Start the thread."""
        self._thread.start()
        return self

    def _demo(self) -> None:
        from bb_robot.nodes.up_client import pose_move_goal

        setup, outcome = self.setup, self.outcome
        goal = setup.goal
        x, y, z = goal[:3, 3]
        outcome.phase = "sending the pose goal"
        self.say(
            f"{self.label}pose goal behind the post (move_action): {setup.chain.tip_link} at "
            f"({x:.3f}, {y:.3f}, {z:.3f}) m in {setup.chain.base_link}, pointing down; sent within "
            f"{SENT_POSITION_TOLERANCE * 1000:g} mm and {SENT_ORIENTATION_TOLERANCE * 1000:g} mrad"
        )
        states = self.client.record_joint_states(self.namespace)
        message = pose_move_goal(
            GROUP, setup.chain.base_link, setup.chain.tip_link, goal[:3, 3].tolist(),
            list(matrix_to_quaternion(goal[:3, :3])), SENT_POSITION_TOLERANCE, SENT_ORIENTATION_TOLERANCE,
            PLANNING_TIME,
        )  # fmt: skip
        progress = self.client.send_move(self.namespace, message)
        judged = self._follow(progress, states)
        if judged is None:
            return None
        if progress.error_code != Code.SUCCESS:
            reason = progress.rejected_reason or f"{code_name(progress.error_code)} {progress.error_message}".strip()
            return self._end(False, f"move_action failed: {reason} (status {progress.status})")
        self.say(
            f"{self.label}move_action succeeded: planned in {progress.planning_time:.2f} s "
            f"({progress.planned_points} points, {progress.planned_duration:.2f} s of motion), executed"
        )
        outcome.phase = "settling"
        settled = self._settle(states, judged)
        if settled is None:
            return None
        if not states:
            return self._end(False, "no joint states while the goal ran")
        ok, text = setup.judge.verdict(*states[-1][1:])
        self._end(ok, text)

    def _follow(self, progress: MoveProgress, states: list[JointStateRecord]) -> int | None:
        """Judge the joint states as they come until the result; how many were judged (``None``: stopped).

        The move_group node answers once the driver has executed the plan or refused it, so the
        wait is bounded only against a hang: :data:`PLANNING_TIME` and three times :data:`SLACK`.
        """
        judged, shown = 0, 0
        deadline = time.monotonic() + PLANNING_TIME + 3 * SLACK
        while not progress.done:
            if self.stop.is_set():
                return None
            if time.monotonic() > deadline:
                self._end(False, f"move_action gave no result within {PLANNING_TIME + 3 * SLACK:g} s")
                return None
            for _, state in progress.states[shown:]:
                self.outcome.phase = {"PLANNING": "planning", "MONITOR": "executing"}.get(state, state.lower())
                self.say(f"{self.label}move_action: {state}")
            shown = len(progress.states)
            judged = self._judge(states, judged)
            time.sleep(0.02)
        return self._judge(states, judged)

    def _judge(self, states: list[JointStateRecord], judged: int) -> int:
        for _, names, positions in states[judged:]:
            self.setup.judge.add(names, positions)
            judged += 1
        return judged

    def _settle(self, states: list[JointStateRecord], judged: int) -> int | None:
        """Judge the joint states until :data:`STILL_STATES` in a row are still (or :data:`SETTLE_TIMEOUT`)."""
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while time.monotonic() < deadline:
            if self.stop.is_set():
                return None
            judged = self._judge(states, judged)
            if _still(states[-STILL_STATES - 1 :]):
                self.say(f"{self.label}arm settled ({judged} joint states judged against the post)")
                return judged
            time.sleep(0.02)
        judged = self._judge(states, judged)
        self.say(f"{self.label}arm still moving {SETTLE_TIMEOUT:g} s after the result: judged where it is")
        return judged


def _still(states: Sequence[JointStateRecord]) -> bool:
    """Whether the joint states given (at least :data:`STILL_STATES` + 1) moved no joint more than :data:`STILL`."""
    if len(states) <= STILL_STATES:
        return False
    positions = np.array([record[2] for record in states], dtype=float)
    return bool(np.ptp(positions, axis=0).max(initial=0.0) <= STILL)
