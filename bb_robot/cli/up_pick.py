"""``bb-robot up --demo-pick``: pick the cube, carry it over the wall, place it; judged from where it really is.

The arm stands on a table with a 4 cm cube on one side of a wall and its place spot on the other
(``config/bb_arm_pick.yaml``, whose ``collision.world`` is ``models/bb_arm_pick.yaml``; MuJoCo by
default).  Once the system is up and the driver armed, :class:`PickDemo` runs the ten steps of
:data:`bb_robot.bringup.pick.STEPS` through MoveIt's public interfaces only (the ROS side is
:mod:`bb_robot.nodes.pick_client`): it adds the cube to the planning scene where ``object/cube`` on
/tf says it is, allows the hand and the table to touch it, then pre-grasp (``move_action``), a
straight approach (``compute_cartesian_path``, executed through ``execute_trajectory``), close
(``GripperCommand``), attach (``/attached_collision_object``), a straight lift, a plan over the wall,
a straight descent, open, detach, a straight retreat.  Each step is printed with its time.

The judge reads the measured state, never the commands: the cube's last pose on /tf within 1 cm of
the place spot and standing on a face (:func:`~bb_robot.bringup.pick.judge_place`); its pose
relative to ``tcp`` between close and open (:class:`~bb_robot.bringup.pick.SlipWatch`); on MuJoCo
the physics steps in which the wall touched the arm or the cube (the backend's counts on
``/diagnostics``).  A failure names the step.  ``--seed S`` puts the cube at random
(:func:`seeded_config`).  It never imports rclpy.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml  # type: ignore[import-untyped]

from bb_robot.bringup.config import config_path, read_config
from bb_robot.bringup.pick import (
    CUBE,
    PAIRED,
    STEPS,
    WALL,
    PickError,
    SlipWatch,
    Spot,
    Waypoints,
    judge_place,
    mirrored,
    seeded_spot,
    spot_of,
    waypoints,
    with_cube_at,
    world_spots,
)
from bb_robot.cli.up_cartesian import DemoThread
from bb_robot.cli.up_inputs import BringupPlan, UpError
from bb_robot.errors import BbRobotError

if TYPE_CHECKING:
    from bb_robot.nodes.pick_client import ActionOutcome, PickClient
    from bb_robot.nodes.up_client import UpClient

#: The parameter file ``--demo-pick`` uses when neither MODEL nor ``--config`` is given.
DEMO_CONFIG = "bb_arm_pick.yaml"
#: The planning group and the tool link the poses are for.
GROUP = "arm"
TOOL = "tcp"
#: The links that may touch the cube while the hand holds it (MoveIt's ``touch_links``), and the table it
#: rests on (a configured obstacle: its name in the scene is ``world/<name>``).
TOUCH_LINKS = ("left_finger", "right_finger", "gripper_base")
TABLE = "world/table"
#: The gripper's open position (each finger's stroke, m: the fingers 7 cm apart) and its close command.
OPEN = 0.03
CLOSED = 0.0
#: The close's ``max_effort``: 0, no effort threshold: the fingers count as stalled on the cube after
#: the driver's ``gripper.stall_time`` without motion.  (A threshold below the stiff fingers' first push,
#: ``mujoco.gripper_kp`` times the stroke, would end the close before the fingers moved.)
CLOSE_EFFORT = 0.0
#: On MuJoCo, the least squeeze (N, the finger's effort) of a close that stalled on the cube, and how
#: many closes are sent to get it.
SQUEEZE = 5.0
CLOSES = 6
#: The pause before a close is sent again (s): the guard's checker catches up meanwhile (in the first
#: run after an install it was late for seconds, and three closes in a row all stopped).
RECLOSE_PAUSE = 1.0
#: ``compute_cartesian_path``'s ``max_step`` (m), and the least fraction of a straight line accepted.
MAX_STEP = 0.005
FRACTION = 0.999
#: The pose goal's tolerances as sent (m, rad) and its planning time (s).
SENT_POSITION_TOLERANCE = 1e-4
SENT_ORIENTATION_TOLERANCE = 1e-4
PLANNING_TIME = 10.0
#: How long a step may take (s): a bound against a hang, far above any step's time.
STEP_TIMEOUT = 90.0
#: How long the servers, the transforms and the scene's changes may take to appear (s).
READY_TIMEOUT = 60.0
#: After the scene changed in the move_group node, the driver's guard takes it within its publish
#: period and a model build (docs/nodes/move_group.md, "One scene"): waited so.
SCENE_SETTLE = 1.0
#: A scene update not shown within this long is sent again (s).
RESEND = 2.0
#: After the close, the grasp settles this long before the cube's pose in the hand is its reference (s).
GRASP_SETTLE = 0.5
#: After the retreat, the cube and the arm rest this long before the cube is judged (s).
REST = 1.0
#: The backend's diagnostic values of the wall's contacts (mujoco counts them at each physics step).
WALL_ROBOT = f"contact steps {WALL}/robot"
WALL_OBJECTS = f"contact steps {WALL}/objects"


def _driver_section(data: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for pattern, section in data.items():
        if str(pattern).rstrip("/").endswith("driver") and isinstance(section, dict):
            merged.update(section.get("ros__parameters") or {})
    return merged


def seeded_config(config: str, seed: int, directory: Path) -> Path:
    """A copy of the parameter file whose world has the cube at the spot of ``seed``.

    The world (``collision.world``) is written to ``directory`` with the cube moved
    (:func:`~bb_robot.bringup.pick.seeded_spot`), and the parameter file beside it, of the same
    name, naming that world instead.

    Args:
        config: the parameter file (a name in config/ or a path).
        seed: ``--seed``.
        directory: where the two files go (it exists).

    Returns:
        The new parameter file.

    Raises:
        UpError: no collision world, or one without a cube and a wall.
    """
    from bb_robot.collision.world import world_path

    settings = read_config(config)
    if not settings.collision_world:
        raise UpError(f"--demo-pick: {settings.path} gives the driver no collision.world (use {DEMO_CONFIG})")
    source = Path(world_path(settings.collision_world, ()))
    world = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
    try:
        spot, _, _ = world_spots(world)
    except PickError as error:
        raise UpError(str(error)) from None
    moved = with_cube_at(world, seeded_spot(seed, spot.z))
    target = directory / f"{source.stem}_seed{seed}{source.suffix}"
    target.write_text(f"# {source.name} with the cube at the spot of --seed {seed}\n" + yaml.safe_dump(moved))
    text = config_path(config).read_text(encoding="utf-8")
    if settings.collision_world not in text:
        raise UpError(
            f"--demo-pick --seed: cannot find collision.world '{settings.collision_world}' in {settings.path}"
        )
    written = directory / settings.path.name
    written.write_text(text.replace(settings.collision_world, str(target)))
    return written


def across(spot: Spot) -> Spot:
    """The spot turned by 90° (a cube looks the same): the tool's yaw for it, in [45°, 135°].

    :func:`~bb_robot.bringup.pick.tool_down` closes the fingers along the tool's y axis, and the
    gripper's base is 12 cm long that way.  At the spot's own yaw (within ±45°) the fingers would
    close across the wall (y = 0), the base reaching 6 cm towards it: near the wall (y 8 cm) the
    pre-grasp pose came within 7 mm of it.  Turned by 90°, they close along the wall.
    """
    return Spot(spot.x, spot.y, spot.z, spot.yaw + math.pi / 2)


@dataclass(frozen=True)
class PickSetup:
    """What the demo needs, checked before anything starts (:func:`pick_setup`)."""

    pick: Spot
    place: Spot
    side: float
    wall_top: float
    wall_y: float
    root: str
    gripper_joints: tuple[str, ...]
    mujoco: bool


def pick_setup(plan: BringupPlan) -> PickSetup:
    """Read the parameter file's world: the cube, the wall, the place spot; and the gripper.

    Raises:
        UpError: no collision world, no cube or wall in it, no gripper joints, no ``tcp``.
    """
    from bb_robot.collision.world import world_path

    config = plan.config
    if not config.collision_world:
        raise UpError(
            f"--demo-pick: {config.path} gives the driver no collision.world; use {DEMO_CONFIG} (the default for "
            f"--demo-pick) or a world with boxes named '{CUBE}' and '{WALL}' (docs/pick.md)"
        )
    try:
        path = Path(world_path(config.collision_world, plan.model_dirs))
        world = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        pick, wall_y, wall_top = world_spots(world)
    except (BbRobotError, OSError, yaml.YAMLError) as error:
        raise UpError(f"--demo-pick: {error}") from None
    cube = next(entry for entry in world["obstacles"] if entry.get("name") == CUBE)
    if cube.get("mass") is None:
        raise UpError(f"--demo-pick: the cube of {path} has no mass: it would be a fixed obstacle, not an object")
    data = yaml.safe_load(config.path.read_text(encoding="utf-8")) or {}
    driver = _driver_section(data)
    gripper = driver.get("gripper") or {}
    joints = tuple(gripper.get("joints") or driver.get("gripper.joints") or ())
    if not joints:
        raise UpError(f"--demo-pick: {config.path} names no gripper joints (the driver's gripper.joints)")
    if TOOL not in plan.robot.links:
        raise UpError(f"--demo-pick: robot '{plan.robot.name}' has no link '{TOOL}' (the tool the poses are for)")
    backend = str(plan.launch_arguments.get("backend") or config.backend or "sim")
    side = float(cube["box"][0])
    return PickSetup(
        pick, mirrored(pick, wall_y), side, wall_top, wall_y, plan.robot.root_link, joints, backend == "mujoco"
    )


@dataclass
class PickTimes:
    """Where the time went: each step's seconds, and the planning part (pose plans, Cartesian paths)."""

    steps: list[float] = field(default_factory=list)
    planning: float = 0.0


class PickDemo(DemoThread):
    """The demo on its own thread (:meth:`start`); :attr:`outcome` fills in.

    Args:
        setup: the spots and the gripper (:func:`pick_setup`).
        up: the running ROS client (its node carries the pick client).
        say: prints a progress line with the time.
        stop: set on a signal.
    """

    def __init__(self, setup: PickSetup, up: UpClient, say: Callable[[str], None], stop: threading.Event) -> None:
        super().__init__("pick-demo")
        from bb_robot.nodes.pick_client import PickClient

        self.setup, self.say, self.stop = setup, say, stop
        self.client: PickClient = PickClient(up, setup.root, setup.gripper_joints)
        self.slip = SlipWatch()
        self.times = PickTimes()
        self._watching = False
        self._since = 0.0
        self.result_line = ""

    def start(self) -> PickDemo:
        """Start the thread."""
        self._thread.start()
        return self

    # ---------------------------------------------------------------- helpers
    def _sample(self) -> None:
        if not self._watching:
            return
        pairs, self._since = self.client.pairs_since(f"object/{CUBE}", TOOL, self._since, PAIRED)
        for tool, cube in pairs:
            self.slip.add(tool, cube)

    def _until(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait (sampling the slip) until ``done()``; False on timeout; raises on a signal."""
        deadline = time.monotonic() + timeout
        while not done():
            if self.stop.is_set():
                raise _Stopped
            if time.monotonic() > deadline:
                return False
            self._sample()
            time.sleep(0.02)
        self._sample()
        return True

    def _pause(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        self._until(lambda: time.monotonic() >= end, seconds + 1.0)

    def _finish(self, outcome: ActionOutcome, what: str) -> ActionOutcome:
        if not self._until(outcome.done.is_set, STEP_TIMEOUT):
            raise _StepFailed(f"{what} gave no answer within {STEP_TIMEOUT:g} s")
        if not outcome.accepted:
            raise _StepFailed(f"{what} refused the goal ({outcome.error})")
        if outcome.result is None:
            raise _StepFailed(f"{what} failed: {outcome.error or 'no result'}")
        return outcome

    def _execute(self, trajectory: Any, what: str) -> None:
        outcome = self._finish(self.client.execute(trajectory), "execute_trajectory")
        code = outcome.result.error_code
        if code.val != 1:
            raise _StepFailed(f"execute_trajectory of the {what} failed: code {code.val} {code.message}".strip())

    def _straight(self, target: np.ndarray, what: str) -> str:
        began = time.monotonic()
        outcome = self._finish(self.client.cartesian(GROUP, TOOL, [target], MAX_STEP), "compute_cartesian_path")
        self.times.planning += time.monotonic() - began
        response = outcome.result
        if response.error_code.val != 1:
            code = response.error_code
            raise _StepFailed(f"compute_cartesian_path failed: code {code.val} {code.message}".strip())
        if response.fraction < FRACTION:
            why = f" ({response.error_code.message})" if response.error_code.message else ""
            raise _StepFailed(
                f"compute_cartesian_path achieved {response.fraction * 100:.1f} % of the straight {what}{why}"
            )
        points = response.solution.joint_trajectory.points
        self._execute(response.solution, what)
        last = points[-1].time_from_start if points else None
        duration = last.sec + last.nanosec * 1e-9 if last is not None else 0.0
        return f"{len(points)} points, {duration:.2f} s of motion"

    def _plan(self, target: np.ndarray, what: str) -> str:
        began = time.monotonic()
        outcome = self._finish(
            self.client.plan(GROUP, TOOL, target, SENT_POSITION_TOLERANCE, SENT_ORIENTATION_TOLERANCE, PLANNING_TIME),
            "move_action",
        )
        self.times.planning += time.monotonic() - began
        result = outcome.result
        if result.error_code.val != 1:
            code = result.error_code
            raise _StepFailed(f"move_action could not plan the {what}: code {code.val} {code.message}".strip())
        points = result.planned_trajectory.joint_trajectory.points
        self._execute(result.planned_trajectory, what)
        last = points[-1].time_from_start if points else None
        duration = last.sec + last.nanosec * 1e-9 if last is not None else 0.0
        return f"planned in {result.planning_time:.2f} s, {len(points)} points, {duration:.2f} s of motion"

    def _gripper(self, position: float, effort: float) -> Any:
        outcome = self._finish(self.client.gripper(position, effort), "driver/gripper_cmd")
        if outcome.status != 4:
            raise _StepFailed(f"the gripper goal ended with status {outcome.status}, not succeeded")
        return outcome.result

    def _scene(self, check: Callable[[Any], bool], what: str, send: Callable[[], None]) -> None:
        """Send a scene update and wait until ``monitored_planning_scene`` shows it, sending it again every
        :data:`RESEND` s (the topics are volatile: a message sent before the move_group node has matched
        this publisher, as on a busy host, is lost; each update here is idempotent)."""
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            send()
            if self._until(lambda: self.client.scene_shows(check), RESEND):
                break
            if time.monotonic() > deadline:
                raise _StepFailed(f"monitored_planning_scene did not show {what} within {READY_TIMEOUT:g} s")
        self._pause(SCENE_SETTLE)

    # ---------------------------------------------------------------- the demo
    def _demo(self) -> None:
        try:
            self._steps()
        except _Stopped:
            return
        except _StepFailed as failure:
            self._end(False, str(failure))

    def _prepare(self) -> Waypoints:
        client, setup = self.client, self.setup
        self.outcome.phase = "waiting for the interfaces"
        if not self._until(lambda: not client.missing(), READY_TIMEOUT):
            raise _StepFailed(f"not ready after {READY_TIMEOUT:g} s: {', '.join(client.missing())}")
        cube_frame = f"object/{CUBE}"
        if not self._until(
            lambda: client.pose(cube_frame) is not None and client.pose(TOOL) is not None, READY_TIMEOUT
        ):
            raise _StepFailed(f"no /tf of {cube_frame} and {TOOL} in {setup.root} after {READY_TIMEOUT:g} s")
        cube = client.pose(cube_frame)
        assert cube is not None
        measured = spot_of(cube)
        self.say(
            f"cube measured at ({measured.x:.3f}, {measured.y:.3f}, {measured.z:.3f}) m, yaw "
            f"{math.degrees(measured.yaw):.1f}° (object/{CUBE}); place spot ({setup.place.x:.3f}, {setup.place.y:.3f}, "
            f"{setup.place.z:.3f}) m, yaw {math.degrees(setup.place.yaw):.1f}°, across the wall"
        )
        # The scene learns the cube where it is, and that the hand and the table may touch it.
        self._scene(
            lambda s: any(o.id == CUBE for o in s.world.collision_objects),
            f"the {CUBE}",
            lambda: client.add_box(CUBE, cube, (setup.side,) * 3),
        )
        self._scene(
            lambda s: CUBE in s.allowed_collision_matrix.entry_names,
            f"the {CUBE}'s allowed contacts",
            lambda: client.allow(CUBE, (*TOUCH_LINKS, TABLE)),
        )
        self.say(f"planning scene: {CUBE} added, allowed to touch {', '.join((*TOUCH_LINKS, TABLE))}")
        result = self._gripper(OPEN, 0.0)
        self.say(f"gripper open ({result.position:.3f} m)")
        grasp = across(measured)
        place = across(Spot(setup.place.x, setup.place.y, measured.z, setup.place.yaw))
        return waypoints(grasp, place, setup.side, setup.wall_top)

    def _steps(self) -> None:
        client, setup = self.client, self.setup
        poses = self._prepare()
        started = time.monotonic()
        for number, name in enumerate(STEPS, start=1):
            self.outcome.phase = f"step {number}/{len(STEPS)}: {name}"
            began = time.monotonic()
            try:
                detail = self._step(number, poses)
            except _StepFailed as failure:
                raise _StepFailed(f"step {number} ({name}) failed: {failure}") from None
            took = time.monotonic() - began
            self.times.steps.append(took)
            if self._watching and number > 3:
                detail += f"; the cube's slip in the hand so far {self.slip.distance * 1000:.1f} mm"
            self.say(f"step {number}/{len(STEPS)} {name}: {took:.2f} s{' (' + detail + ')' if detail else ''}")
        total = time.monotonic() - started
        self.outcome.phase = "judging"
        self._pause(REST)
        cube = client.pose(f"object/{CUBE}")
        if cube is None:
            raise _StepFailed(f"no /tf of object/{CUBE} at the end")
        verdict = judge_place(cube, setup.place)
        problems = [] if verdict.ok else [f"the cube is not at the place spot: {verdict.text}"]
        slip = self.slip.problem()
        if slip:
            problems.append(slip)
        contacts = self._wall_contacts()
        if contacts.startswith("!"):
            contacts = contacts[1:]
            problems.append(contacts)
        x, y, z = (v * 1000 for v in self.slip.offset)
        slip_text = (
            f"slip at most {self.slip.distance * 1000:.1f} mm ({x:.1f}, {y:.1f}, {z:.1f} mm in the tool's frame) and "
            f"{math.degrees(self.slip.angle):.1f}° ({self.slip.samples} paired poses)"
        )
        self.result_line = f"{verdict.text}; {slip_text}; {contacts}"
        timing = f"{total:.1f} s, planning {self.times.planning:.1f} s"
        if problems:
            return self._end(False, f"judged from the measured state ({timing}): {'; '.join(problems)}")
        self._end(True, f"{timing}: {self.result_line}")

    def _step(self, number: int, poses: Waypoints) -> str:
        client = self.client
        if number == 1:
            return self._plan(poses.pre_grasp, "pre-grasp")
        if number == 2:
            return self._straight(poses.grasp, "approach")
        if number == 3:
            result = self._gripper(CLOSED, CLOSE_EFFORT)
            closes = 1
            # On MuJoCo a stall must squeeze: the driver's guard stops streamed motion while its checker
            # is late (a busy host), and fingers stopped so stall at the cube's faces without force.
            while self.setup.mujoco and result.stalled and abs(result.effort) < SQUEEZE and closes < CLOSES:
                self._pause(RECLOSE_PAUSE)
                result, closes = self._gripper(CLOSED, CLOSE_EFFORT), closes + 1
            if not result.stalled:
                raise _StepFailed(
                    f"the fingers closed on nothing (at {result.position:.4f} m, reached_goal {result.reached_goal}): "
                    "the cube is not between them"
                )
            if self.setup.mujoco and abs(result.effort) < SQUEEZE:
                raise _StepFailed(
                    f"the fingers stopped at {result.position * 1000:.1f} mm squeezing {abs(result.effort):.1f} N "
                    f"after {closes} closes (at least {SQUEEZE:g} N)"
                )
            self._pause(GRASP_SETTLE)
            self._since = client.latest(f"object/{CUBE}") or 0.0
            self._watching = True
            again = f"; closed {closes} times" if closes > 1 else ""
            return f"stalled on the cube at {result.position * 1000:.1f} mm, effort {result.effort:.1f}{again}"
        if number == 4:
            self._scene(
                lambda s: any(a.object.id == CUBE for a in s.robot_state.attached_collision_objects),
                f"the {CUBE} attached to {TOOL}",
                lambda: client.attach(CUBE, TOOL, TOUCH_LINKS),
            )
            return f"{CUBE} attached to {TOOL}, touch links {', '.join(TOUCH_LINKS)}"
        if number == 5:
            return self._straight(poses.lifted, "lift")
        if number == 6:
            return self._plan(poses.above_place, "motion over the wall")
        if number == 7:
            return self._straight(poses.release, "descent")
        if number == 8:
            self._pause(0.2)  # the transforms of the last moment before the open arrive
            self._watching = False
            result = self._gripper(OPEN, 0.0)
            return f"at {result.position * 1000:.1f} mm, reached_goal {result.reached_goal}"
        if number == 9:
            self._scene(
                lambda s: (
                    not any(a.object.id == CUBE for a in s.robot_state.attached_collision_objects)
                    and any(o.id == CUBE for o in s.world.collision_objects)
                ),
                f"the {CUBE} detached, in the world",
                lambda: client.detach(CUBE, TOOL),
            )
            return f"{CUBE} detached, left in the world where it is"
        return self._straight(poses.retreat, "retreat")

    def _wall_contacts(self) -> str:
        """The wall's contacts as the backend counted them; a text starting with ``!`` when there were any."""
        if not self.setup.mujoco:
            return "wall contacts not counted (the sim backend has no contact physics; its guard checked the motion)"
        at = time.monotonic()
        seen: dict[str, str] = {}

        def fresh() -> bool:
            nonlocal seen
            seen = self.client.backend()
            return WALL_ROBOT in seen and time.monotonic() - at > 1.5

        if not self._until(fresh, 10.0):
            return f"!no wall contact counts ('{WALL_ROBOT}') in the driver's /diagnostics"
        robot, objects = int(seen[WALL_ROBOT]), int(seen.get(WALL_OBJECTS, "0"))
        text = f"wall contacts: {robot} physics steps with the arm, {objects} with the cube"
        return text if robot == 0 and objects == 0 else f"!the wall was touched: {text}"


class _StepFailed(BbRobotError):
    """A step failed; the message says why (and, once caught by the loop, which step)."""


class _Stopped(Exception):
    """A signal stopped the demo."""
