"""The driver's collision checking: trajectories before they are accepted, streamed commands while they run.

:class:`CollisionGuard` holds the robot's :class:`~bb_robot.collision.model.CollisionModel` (its
own geometry, its allowed-collision matrix, the obstacles of ``collision.world``) and does two
things for the core, through two hooks of :class:`~bb_robot.driver.core.DriverCore`:

- :meth:`CollisionGuard.check_trajectory` (``DriverCore.trajectory_check``): a trajectory, or a
  ``FollowJointTrajectory`` goal, is sampled at the loop's period (the positions the driver will
  command, cycle by cycle) and checked as a path with the motion bound of
  :func:`bb_robot.collision.path.check_path`: between two distance queries no point of any
  link moves as far as half the distance measured.  A trajectory that comes within
  ``collision.clearance`` is refused with ``INVALID_GOAL``, naming the pair, the time and the
  distance.
- :meth:`CollisionGuard.filter` (``DriverCore.command_filter``, called in each cycle): streamed
  position and velocity commands slow down as the nearest checked pair comes within
  ``collision.slowdown_distance`` and stop at ``collision.stop_distance``, unless their motion
  increases that distance.  The distances come from a thread of the guard's own
  (:meth:`CollisionGuard.start`), so the loop never waits for coal: it checks the pose the arm
  is at and the pose it is heading to over the next cycles, at ``collision.check_rate`` and
  every second cycle while the arm is slowed.  A verdict older than two cycles while slowed, or
  one the thread could not make, stops streamed motion.

While a (checked) trajectory runs, its joints are not slowed: the whole path was checked before
it was accepted.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.collision.model import CollisionModel, Contact, placement_kernel
from bb_robot.collision.path import check_path
from bb_robot.collision.sources import checked_model
from bb_robot.collision.world import model_world, standing_contacts
from bb_robot.driver.backends.base import BackendCommand, JointSample
from bb_robot.driver.commands import CommandMode, JointCommand
from bb_robot.driver.errors import INVALID_GOAL, CommandRejected, TrajectoryRejected
from bb_robot.driver.limits import JointLimitTable, approach_path
from bb_robot.driver.trajectory import Trajectory
from bb_robot.loading import LoadedModel

FloatArray = npt.NDArray[np.float64]
LogFunction = Callable[[str, str], None]


@dataclass(frozen=True)
class GuardSettings:
    """The ``collision.*`` parameters the guard uses (metres, Hz).

    Attributes:
        clearance: a trajectory coming nearer than this is refused.
        slowdown_distance: streamed motion slows below this distance.
        stop_distance: streamed motion stops at this distance.
        check_rate: how often the checker thread measures while nothing is near.
    """

    clearance: float = 0.002
    slowdown_distance: float = 0.02
    stop_distance: float = 0.005
    check_rate: float = 100.0


@dataclass(frozen=True)
class Verdict:
    """What the checker thread found, for the loop and for /diagnostics.

    Attributes:
        stamp_ns: when it was measured (monotonic).
        nearest: the nearest pair where the arm is (``None``: nothing checked is near).
        ahead: the distance at the pose the commands lead to (``inf``: nothing near).
        scale: the speed scale for streamed motion, 0 to 1.
    """

    stamp_ns: int
    nearest: Contact | None
    ahead: float
    scale: float


def speed_scale(distance: float, ahead: float, settings: GuardSettings) -> float:
    """The scale of streamed speed: 1 beyond ``slowdown_distance``, 0 at ``stop_distance``, smooth between.

    Between the two, ``(d - stop) / (slow - stop)``: the speed is proportional to what is left of
    the gap, so the gap closes towards the stop distance ever more slowly; MoveIt's exponential
    never reaches 0, this does, at the stop distance.  Motion whose target pose
    (``ahead``) is no nearer than the current one (``distance``) is not slowed: moving away continues.

    Args:
        distance: the nearest distance where the arm is.
        ahead: the nearest distance where the commands lead.
        settings: the distances.

    Returns:
        The scale.
    """
    if ahead >= distance or distance >= settings.slowdown_distance:
        return 1.0
    span = settings.slowdown_distance - settings.stop_distance
    if distance <= settings.stop_distance or span <= 0:
        return 0.0
    return (distance - settings.stop_distance) / span


class CollisionGuard:
    """Collision checks for the driver (see the module docstring).

    Args:
        model: the collision model (matrix and obstacles applied).
        joints: the driver's joints, in order; every other coordinate of the model is held at 0.
        settings: the distances and rate.
        rate: the control loop's rate (Hz): trajectories are sampled at its period.
        log: ``log(level, text)``.
        velocity_limits: each joint's velocity limit: a slowed position command moves at most the
            scaled limit per cycle (``None`` or infinite: the step to the target is scaled instead).
    """

    def __init__(
        self,
        model: CollisionModel,
        joints: Sequence[str],
        settings: GuardSettings,
        rate: float,
        log: LogFunction | None = None,
        velocity_limits: FloatArray | None = None,
    ) -> None:
        self.model = model
        limits = np.full(len(joints), np.inf) if velocity_limits is None else np.asarray(velocity_limits, dtype=float)
        self._velocity_limits = limits
        self.settings = settings
        self.period = 1.0 / rate
        self._log = log or (lambda level, text: None)
        coordinates = {name: i for i, name in enumerate(model.fk.joint_names)}
        self._columns = np.array([coordinates.get(name, -1) for name in joints], dtype=np.intp)
        self._driven = self._columns >= 0
        self._verdict: Verdict | None = None
        #: Where the last slowed command sent the position joints (slowed steps continue from there, not
        #: from a measured position that may lag); ``None`` when the last command was not slowed.
        self._slowed_from: FloatArray | None = None
        self._heading: tuple[FloatArray, FloatArray] | None = None
        #: Whether the last cycle applied the verdict: no streamed motion, or a checked trajectory, is never slowed.
        self._applied = False
        #: The targets of the last accepted position command (see :meth:`check_command`).
        self._accepted: FloatArray | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        # The checker thread's own model: a model's coal transforms are not shared between threads;
        # trajectories (from the action's and the topic's callbacks) take turns with the other one.
        self._thread_model = model.with_allowed(model.disabled)
        self._trajectory_lock = threading.Lock()
        self.failure = ""

    # ------------------------------------------------------------------ configurations
    def configuration(self, positions: FloatArray) -> FloatArray:
        """The model's coordinates for driver joint positions (others at 0; NaN as 0)."""
        q = np.zeros(len(self.model.fk.joint_names))
        q[self._columns[self._driven]] = np.nan_to_num(np.asarray(positions, dtype=float)[self._driven])
        return q

    # ------------------------------------------------------------------ trajectories
    def check_trajectory(self, trajectory: Trajectory, positions: FloatArray) -> None:
        """Refuse a trajectory that comes within ``clearance`` (any thread; see the module docstring).

        Args:
            trajectory: the checked, interpolated trajectory.
            positions: every driver joint's position when it starts (the joints it leaves out stay there).

        Raises:
            TrajectoryRejected: ``INVALID_GOAL`` naming the pair, the time and the distance.
        """
        self._accepted = None
        begin, end = float(trajectory.knots[0]), float(trajectory.knots[-1])
        times = np.append(np.arange(begin, end, self.period), end)
        rows = np.tile(np.nan_to_num(np.asarray(positions, dtype=float)), (len(times), 1))
        rows[:, trajectory.indices] = trajectory.positions_at(times)
        path = np.zeros((len(times), len(self.model.fk.joint_names)))
        path[:, self._columns[self._driven]] = rows[:, self._driven]
        with self._trajectory_lock:
            verdict = check_path(self.model, path, self.settings.clearance)
        if not verdict.ok and verdict.contact is not None:
            contact = verdict.contact
            a, b = contact.links
            raise TrajectoryRejected(
                INVALID_GOAL,
                f"collision: links '{a}' and '{b}' come {max(contact.distance, 0.0) * 1000:.1f} mm apart "
                f"(collision.clearance {self.settings.clearance * 1000:g} mm) at t = {times[verdict.index]:.3f} s "
                f"of the trajectory",
            )

    def check_command(self, command: JointCommand, sample: JointSample | None, limits: JointLimitTable) -> None:
        """Refuse a position command whose approach comes within ``clearance`` (the inputs' thread).

        The path is the one the joints take under their limits (:func:`approach_path`) from their
        state: the command's joints towards its values, the others held where they are.  From a
        pose already within ``clearance``, a command is accepted when it leads no nearer: an arm
        can always be moved out.  Velocity and effort commands are not checked here: streamed
        motion slows and stops near contact (:meth:`filter`).

        Args:
            command: a checked command.
            sample: the joints' latest state (``None``: not known yet, nothing to check from).
            limits: the effective limits.

        Raises:
            CommandRejected: ``"collision"``, naming the pair, the distance and when on the way.
        """
        if command.mode != CommandMode.POSITION or sample is None or not np.isfinite(sample.positions).all():
            self._accepted = None  # the arm heads elsewhere: the next position command is checked afresh
            return
        targets = sample.positions.copy()
        targets[command.indices] = command.values
        accepted = self._accepted
        if accepted is not None and np.array_equal(accepted[command.indices], command.values):
            return  # the target of the last accepted command again (a topic published at a rate): on its path
        rows = approach_path(sample.positions, sample.velocities, targets, limits, self.period)
        path = np.zeros((len(rows), len(self.model.fk.joint_names)))
        path[:, self._columns[self._driven]] = rows[:, self._driven]
        with self._trajectory_lock:
            verdict = check_path(self.model, path, self.settings.clearance)
            if (verdict.ok or verdict.contact is None) or (
                verdict.index == 0 and self._nearest(path[-1]) >= verdict.contact.distance
            ):  # (already that near: moving out is allowed)
                self._accepted = targets
                return
        self._accepted = None
        a, b = verdict.contact.links
        raise CommandRejected(
            "collision",
            f"collision: links '{a}' and '{b}' would come {max(verdict.contact.distance, 0.0) * 1000:.1f} mm apart "
            f"(collision.clearance {self.settings.clearance * 1000:g} mm) on the way to the target; not executed",
        )

    def _nearest(self, configuration: FloatArray) -> float:
        contact = self.model.nearest(configuration)
        return math.inf if contact is None else contact.distance

    # ------------------------------------------------------------------ streamed commands
    def start(self) -> None:
        """Start the checker thread (idempotent)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="collision-checker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the checker thread and wait for it."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            self._wake.set()
            thread.join(timeout=2.0)

    @property
    def verdict(self) -> Verdict | None:
        """The latest verdict (any thread)."""
        return self._verdict

    def measure(self, position: FloatArray, target: FloatArray, now_ns: int) -> Verdict:
        """Measure where the arm is and where it is heading, and decide the scale (the checker thread's step).

        Args:
            position: the driver joints' positions now.
            target: where the commands lead them in the coming cycles.
            now_ns: the measurement's time stamp.

        Returns:
            The verdict (also kept as :attr:`verdict`).
        """
        model = self._thread_model
        limit = 2 * self.settings.slowdown_distance
        nearest = model.nearest(self.configuration(position), limit)
        ahead_contact = model.nearest(self.configuration(target), limit)
        distance = math.inf if nearest is None else nearest.distance
        ahead = math.inf if ahead_contact is None else ahead_contact.distance
        verdict = Verdict(now_ns, nearest, ahead, speed_scale(distance, ahead, self.settings))
        self._verdict = verdict
        return verdict

    def step(self, now_ns: int) -> Verdict | None:
        """Measure the pose the loop last reported and where its commands lead (the checker thread's step).

        Args:
            now_ns: the measurement's time stamp (monotonic).

        Returns:
            The verdict, or ``None`` before the loop reported a pose (or when the measurement failed,
            which is logged once and stops streamed motion until a measurement succeeds).
        """
        heading = self._heading
        if heading is None:
            return None
        try:
            verdict = self.measure(heading[0], heading[1], now_ns)
        except Exception as error:  # noqa: BLE001 - reported; streamed motion stops meanwhile
            if not self.failure:
                self._log("error", f"collision checker failed: {error!r}; streamed motion stops")
            self.failure = repr(error)
            self._verdict = None
            return None
        self.failure = ""
        return verdict

    def _run(self) -> None:
        while not self._stop.is_set():
            verdict = self.step(time.monotonic_ns())
            slowed = verdict is not None and verdict.scale < 1.0
            # While slowed every cycle, so that no verdict in use is older than two cycles.
            self._wake.wait(self.period if slowed else max(1.0 / self.settings.check_rate, self.period))
            self._wake.clear()

    def diagnostics(self, now_ns: int) -> tuple[str, str, dict[str, object]]:
        """``(level, message, values)`` for /diagnostics: the nearest pair and its distance, the speed scale.

        Args:
            now_ns: the monotonic time now (for the verdict's age).

        Returns:
            ``level`` is ``"ok"``, ``"warn"`` (streamed motion slowed or stopped) or ``"error"`` (the
            checker failed).  Near while a checked trajectory runs is ``"ok"``: nothing is slowed.
        """
        verdict = self._verdict
        values: dict[str, object] = {
            "checked pairs": len(self.model.pairs),
            "obstacle parts": len(self.model.obstacles),
            "slowdown distance (m)": f"{self.settings.slowdown_distance:g}",
            "stop distance (m)": f"{self.settings.stop_distance:g}",
        }
        if self.failure:
            return "error", f"checker failed: {self.failure}; streamed motion stops", values
        if verdict is None:
            return "ok", "no measurement yet", values
        values["verdict age (ms)"] = f"{(now_ns - verdict.stamp_ns) * 1e-6:.1f}"
        values["speed scale"] = f"{verdict.scale:.3f}"
        if verdict.nearest is None:
            return "ok", f"nothing within {2 * self.settings.slowdown_distance:g} m", values
        a, b = verdict.nearest.links
        values["nearest pair"] = f"{a} / {b}"
        values["nearest distance (m)"] = f"{verdict.nearest.distance:.4f}"
        message = f"nearest: {a} / {b} at {verdict.nearest.distance * 1000:.1f} mm"
        if verdict.scale < 1.0 and not self._applied:
            # A trajectory's whole path was checked before it was accepted: near is not a fault.
            return "ok", message + "; a checked trajectory runs, not slowed", values
        if verdict.scale < 1.0:
            return (
                "warn",
                message + ("; streamed motion stopped" if verdict.scale <= 0 else "; streamed motion slowed"),
                values,
            )
        return "ok", message, values

    def filter(self, command: BackendCommand, sample: JointSample, now: int, trajectory: bool) -> BackendCommand:
        """Scale this cycle's streamed motion by the latest verdict (the loop's hook; never waits).

        Args:
            command: the cycle's command.
            sample: the joints' state.
            now: the cycle's time (monotonic ns).
            trajectory: a trajectory is running (checked whole: not slowed).

        Returns:
            The command, slowed or stopped where needed.
        """
        position = np.nan_to_num(sample.positions)
        # A joint never reported keeps the core's NaN (nothing is sent for it): never commanded here.
        streamed = (command.modes != int(CommandMode.EFFORT)) & np.isfinite(sample.positions)
        target = np.where(np.isfinite(command.position), command.position, position)
        lead = 10 * self.period  # where the commands lead over the next cycles
        velocity = np.nan_to_num(command.velocity)
        target = np.where(command.modes == int(CommandMode.VELOCITY), position + velocity * lead, target)
        self._heading = (position, target)
        slowed_from, self._slowed_from = self._slowed_from, None
        self._applied = not trajectory and bool(streamed.any())
        if not self._applied:
            return command
        verdict = self._verdict
        if verdict is None:
            return self._stopped(command, position, streamed) if self._thread is not None else command
        if verdict.scale >= 1.0:
            return command
        if now - verdict.stamp_ns > 2 * self.period * 1e9 or verdict.scale <= 0.0:
            self._wake.set()
            return self._stopped(command, position, streamed)
        scale = verdict.scale
        # Position joints move at most the scaled velocity limit this cycle (the scaled step where unlimited),
        # from where the previous slowed command sent them.
        base = position if slowed_from is None else np.where(np.isfinite(slowed_from), slowed_from, position)
        step = scale * self._velocity_limits * self.period
        offset = np.where(np.isfinite(step), np.clip(target - base, -step, step), scale * (target - base))
        positions = np.where(streamed, base + offset, command.position)
        self._slowed_from = np.where(streamed, positions, np.nan)
        positions = np.where(command.modes == int(CommandMode.VELOCITY), command.position, positions)
        return BackendCommand(command.modes, positions, command.velocity * scale, command.acceleration, command.effort)

    @staticmethod
    def _stopped(command: BackendCommand, position: FloatArray, streamed: npt.NDArray[np.bool_]) -> BackendCommand:
        """Stop every streamed joint: position joints held where they are, velocity joints at 0."""
        held = streamed & (command.modes != int(CommandMode.VELOCITY))
        positions = np.where(held, position, command.position)
        velocity = np.where(streamed, 0.0, command.velocity)
        acceleration = np.where(streamed, 0.0, command.acceleration)
        return BackendCommand(command.modes, positions, velocity, acceleration, command.effort)


def build_guard(
    loaded: LoadedModel,
    joints: Sequence[str],
    settings: GuardSettings,
    rate: float,
    *,
    srdf: str = "",
    compute_matrix: bool = False,
    world: str = "",
    search_dirs: Sequence[str] = (),
    log: LogFunction | None = None,
    velocity_limits: FloatArray | None = None,
) -> CollisionGuard | None:
    """The guard of a loaded model at configure, or ``None`` when the model has no collision geometry.

    Args:
        loaded: the driven model.
        joints: the driver's joints.
        settings: the ``collision.*`` distances and rate.
        rate: the control loop's rate (Hz).
        srdf: ``collision.srdf``.
        compute_matrix: ``collision.compute_matrix``.
        world: ``collision.world``.
        search_dirs: where meshes, includes and world files are looked for (``model_dirs``).
        log: ``log(level, text)``: where the matrix came from, the obstacles, the contacts allowed.
        velocity_limits: the joints' velocity limits (see :class:`CollisionGuard`).

    Returns:
        The guard, not started.

    Raises:
        CollisionError: coal is missing, a mesh cannot be read (naming the link and the file), an SRDF
            or world file cannot be used (naming the file and the entry).
    """
    say = log or (lambda level, text: None)
    if not any(c.geometry is not None for link in loaded.robot.links.values() for c in link.collisions):
        say("info", "collision checking: the model has no <collision> geometry; nothing to check")
        return None
    model, found = checked_model(loaded, search_dirs, srdf or None, compute_matrix)
    say("info" if found.origin != "partial" else "warning", found.describe())
    if world:
        obstacles = model_world(loaded, world, search_dirs)
        model = model.with_obstacles(obstacles.parts)
        standing = standing_contacts(model)
        model = model.with_allowed(set(model.disabled) | standing)
        text = f"collision world {world}: {len(obstacles.parts)} obstacle parts"
        if standing:
            text += "; in contact where the robot stands (allowed): " + ", ".join(
                f"{a}/{b}" for a, b in sorted(standing)
            )
        say("info", text)
    placement_kernel()  # load the compiled placement now, at configure, not in the checker's first pass
    return CollisionGuard(model, joints, settings, rate, log, velocity_limits)
