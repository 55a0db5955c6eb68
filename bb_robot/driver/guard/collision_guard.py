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
  increases that distance.  The distances come from a process of the guard's own
  (:class:`~bb_robot.driver.guard.collision_checker.CheckerProcess`, spawned by
  :meth:`CollisionGuard.prepare` at configure, given its model and waited for by
  :meth:`CollisionGuard.start` at activation), so the loop neither waits for coal nor shares the interpreter
  lock with it: each cycle hands it the pose the arm is at and the pose it is heading to over
  the next cycles (at ``collision.check_rate``, and every cycle while the arm is slowed) and
  takes its newest verdict.  A verdict older than two cycles while slowed, older than
  :data:`LATE_AFTER` at any time, or one the process could not make, stops streamed motion.

A checker process that dies is started again, from a thread of the guard's own (the loop never
waits for it), at most once a second and five times a minute
(:class:`~bb_robot.driver.guard.collision_checker.RestartBudget`).  From the death to the new process's
first verdict, streamed motion stays stopped and trajectories are refused; a sixth death within a
minute leaves the guard down (both, until it is stopped and started again: the driver deactivated
and activated).  :meth:`CollisionGuard.diagnostics` names each restart.

While a (checked) trajectory runs, its joints are not slowed: the whole path was checked before
it was accepted.

The scene may change while the driver runs (objects added at run time, attached objects:
:meth:`CollisionGuard.follow`).  Trajectories and position commands are checked against the new
scene from the call on; the checker process is handed the new model by the loop, and until its
first verdict on it streamed motion stops (a verdict on the old scene does not count).
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.collision.model import CollisionModel, Contact, placement_kernel
from bb_robot.collision.path import MotionBound, check_path
from bb_robot.collision.scene import Scene
from bb_robot.driver.backends.base import BackendCommand, JointSample
from bb_robot.driver.commands.commands import CommandMode, JointCommand
from bb_robot.driver.commands.limits import JointLimitTable, SampledMotion, approach_path
from bb_robot.driver.commands.trajectory import Trajectory
from bb_robot.driver.errors import INVALID_GOAL, CommandRejected, TrajectoryRejected
from bb_robot.driver.guard.collision_checker import (
    RESTARTS_PER_MINUTE,
    CheckerError,
    CheckerProcess,
    GuardSettings,
    Measurement,
    Measurer,
    RestartBudget,
    spawn,
    speed_scale,
    update_record,
)

FloatArray = npt.NDArray[np.float64]
LogFunction = Callable[[str, str], None]


__all__ = ["LATE_AFTER", "CollisionGuard", "GuardSettings", "Restart", "Verdict", "speed_scale"]

#: Pairs whose bounding spheres are within this (m) of each other have their distance measured for
#: :meth:`CollisionGuard.check_command`'s free region; farther ones count the spheres' gap.
FREE_WITHIN = 0.1
#: A verdict older than this (s) stops streamed motion even while nothing is near: the checker is late or gone.
LATE_AFTER = 0.2


@dataclass(frozen=True)
class Verdict:
    """What the checker found, for the loop and for /diagnostics.

    Attributes:
        stamp_ns: the time of the pose it measured (monotonic; the loop's cycle that handed it over).
        nearest: the nearest pair where the arm is (``None``: nothing checked is near).
        ahead: the distance at the pose the commands lead to (``inf``: nothing near).
        scale: the speed scale for streamed motion, 0 to 1.
        generation: the scene it measured (:meth:`CollisionGuard.follow` counts them).
    """

    stamp_ns: int
    nearest: Contact | None
    ahead: float
    scale: float
    generation: int = 0


@dataclass
class Restart:
    """One restart of the checker process, for the log and /diagnostics.

    Attributes:
        number: the how-manieth since activation (1 for the first).
        cause: what became of the process it replaces.
        pid: the new process's id once it runs (``None`` while it starts).
        failure: why the new process did not start (``""``: it did, or is starting).
    """

    number: int
    cause: str
    pid: int | None = None
    failure: str = ""

    def describe(self) -> str:
        if self.failure:
            return f"{self.cause}; the new process did not start: {self.failure}"
        return f"{self.cause}; " + (
            "starting a new process" if self.pid is None else f"restarted as process {self.pid}"
        )


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
        self._verdict: Verdict | None = None
        #: Where the last slowed command sent the position joints (slowed steps continue from there, not
        #: from a measured position that may lag); ``None`` when the last command was not slowed.
        self._slowed_from: FloatArray | None = None
        self._heading: tuple[FloatArray, FloatArray] | None = None
        #: Whether the last cycle applied the verdict: no streamed motion, or a checked trajectory, is never slowed.
        self._applied = False
        #: How fast each joint moved over its latest samples (:meth:`filter`, at least 10 ms): an approach
        #: path starts from the slower of that and what the joint reads (:class:`SampledMotion`).
        self._moved = SampledMotion(len(joints))
        #: The targets of the last accepted position command (see :meth:`check_command`).
        self._accepted: FloatArray | None = None
        #: What the last path checked proves free (see :meth:`_inside_free`): its model, each checked pair's
        #: relative motion bound in that model, the path's first configuration, and each pair's distance there.
        self._free: tuple[CollisionModel, FloatArray, FloatArray, FloatArray] | None = None
        # The checker's own model (its coal transforms are not shared: the process gets a pickled copy;
        # :meth:`step` measures with it in this process); trajectories, from the action's and the
        # topic's callbacks, take turns with the other one.
        self._measurer = Measurer(model.with_allowed(model.disabled), joints, settings)
        self._checker: CheckerProcess | None = None
        #: The checker process :meth:`prepare` spawned, until :meth:`start` takes it over.
        self._spawned: CheckerProcess | None = None
        #: When the loop last handed the checker a heading (monotonic ns).
        self._sent_ns = 0
        self._check_period_ns = int(1e9 / settings.check_rate) if settings.check_rate > 0 else 0
        self._trajectory_lock = threading.Lock()
        self.failure = ""
        #: When a dead checker may be started again (its ``clock`` may be replaced: tests).
        self.restart_budget = RestartBudget()
        #: Why the guard is down for good (its checker died once more after the minute's restarts); "" if not.
        self.down = ""
        #: From a checker's death to its successor's first verdict: what became of it ("" otherwise).
        self._outage = ""
        #: Where the restart of a dead checker is, for /diagnostics.
        self._revival = ""
        #: The restarts since activation (the latest ones: any minute's fit).
        self._restarts: deque[Restart] = deque(maxlen=RESTARTS_PER_MINUTE)
        self.restart_count = 0
        #: The thread starting a new checker, and what it hands the loop: the checker, or why it did not start.
        self._restarter: threading.Thread | None = None
        self._replacement: CheckerProcess | CheckerError | None = None
        self._cancel = threading.Event()
        #: How long :func:`~bb_robot.driver.guard.build.build_guard` took for each of its steps,
        #: ``(step, seconds)`` (the driver logs them).
        self.build_times: tuple[tuple[str, float], ...] = ()
        #: The scene run-time objects are applied to (:func:`~bb_robot.driver.guard.build.build_guard`
        #: makes it; ``None``: the guard checks ``model`` only), then handed to :meth:`follow`.
        self.scene: Scene | None = None
        #: The scene's generation, the models of the latest ones (verdicts name their pairs by them),
        #: and the new measurer's record the loop has still to hand the checker process.
        self.generation = 0
        self._models: dict[int, CollisionModel] = {0: model}
        self._update: tuple[int, bytes] | None = None
        #: The driver joints, in order.
        self.joints = tuple(joints)

    # ------------------------------------------------------------------ the scene
    def follow(self, model: CollisionModel) -> int:
        """Check against ``model`` from now on: the scene with its run-time objects (any thread but the loop's).

        Trajectories and position commands are checked against it from this call on.  The loop hands
        the checker process the new model (pickled here, not in the loop); streamed motion stops
        until the process's first verdict on it.

        Args:
            model: the scene's collision model (:attr:`Scene.model`): the same robot and joints.

        Returns:
            The scene's new generation.
        """
        generation = self.generation + 1
        measurer = Measurer(model.with_allowed(model.disabled), self.joints, self.settings, generation)
        record = update_record(len(self.joints), measurer)
        with self._trajectory_lock:
            self._models[generation] = model
            for old in [g for g in self._models if g < generation - 4]:
                del self._models[old]
            self.model, self._measurer, self._accepted = model, measurer, None
            self._update = (generation, record)
            self.generation = generation
        return generation

    # ------------------------------------------------------------------ configurations
    def configuration(self, positions: FloatArray) -> FloatArray:
        """The model's coordinates for driver joint positions (others at 0; NaN as 0)."""
        return self._measurer.configuration(positions)

    # ------------------------------------------------------------------ trajectories
    def check_trajectory(self, trajectory: Trajectory, positions: FloatArray) -> None:
        """Refuse a trajectory that comes within ``clearance`` (any thread; see the module docstring).

        Args:
            trajectory: the checked, interpolated trajectory.
            positions: every driver joint's position when it starts (the joints it leaves out stay there).

        Raises:
            TrajectoryRejected: ``INVALID_GOAL`` naming the pair, the time and the distance; or, while the
                guard is down or its checker restarts, saying so.
        """
        unavailable = self.unavailable
        if unavailable:
            raise TrajectoryRejected(INVALID_GOAL, f"collision guard: {unavailable}; trajectories are refused")
        self._accepted = None
        begin, end = float(trajectory.knots[0]), float(trajectory.knots[-1])
        times = np.append(np.arange(begin, end, self.period), end)
        rows = np.tile(np.nan_to_num(np.asarray(positions, dtype=float)), (len(times), 1))
        rows[:, trajectory.indices] = trajectory.positions_at(times)
        path = self._measurer.path(rows)
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
        rows = approach_path(sample.positions, self._moved.slower(sample.velocities), targets, limits, self.period)
        path = self._measurer.path(rows)
        with self._trajectory_lock:
            if self._inside_free(path):
                self._accepted = targets
                return
            verdict = check_path(self.model, path, self.settings.clearance)
            if verdict.ok:
                self._remember_free(path[0])
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

    def _inside_free(self, path: FloatArray) -> bool:
        """Whether ``path`` stays where the last path checked proves it free: no checked pair's two parts move
        relative to each other, from that path's first configuration, by more than their distance there less
        ``clearance`` (each coordinate taken at its farthest from there along ``path``, which a path followed
        linearly stays within; a joint above both parts counts nothing: :meth:`MotionBound.between`).  A stream
        of nearby targets (leader-follower teleop at 200 Hz) is then checked once in many commands, not at each
        (2-9 ms of coal each on the SO-101, on the executor thread)."""
        free = self._free
        if free is None or free[0] is not self.model:
            return False
        _, relative, start, distances = free
        moved = relative @ np.abs(path - start).max(axis=0)
        return bool(np.all(distances - moved >= self.settings.clearance))

    def _remember_free(self, configuration: FloatArray) -> None:
        """Keep ``configuration``'s pair distances (measured within :data:`FREE_WITHIN`) for :meth:`_inside_free`."""
        model, free = self.model, self._free
        if free is not None and free[0] is model:
            relative = free[1]
        else:
            bound = MotionBound(model)
            pairs = model.pair_frames()
            # (rows of the coordinates' count: a robot without checked pairs has none, and nothing to prove)
            relative = np.array([bound.between(a, b) for a, b in pairs]).reshape(len(pairs), bound.reach.shape[1])
        self._free = (model, relative, configuration.copy(), model.pair_lower_distances(configuration, FREE_WITHIN))

    def _nearest(self, configuration: FloatArray) -> float:
        contact = self.model.nearest(configuration)
        return math.inf if contact is None else contact.distance

    # ------------------------------------------------------------------ streamed commands
    def prepare(self) -> None:
        """Spawn the checker process, which loads its kernels meanwhile, and load the compiled placement
        of this process's own checks (trajectories, position commands): at configure, so that
        activation does not wait for either (see :mod:`~bb_robot.driver.guard.collision_checker`).
        """
        if self._checker is None and self._spawned is None:
            self._spawned = CheckerProcess(self._measurer, spawn())
        placement_kernel()

    def start(self) -> None:
        """Start the checker process (the one :meth:`prepare` spawned, else a new one) and wait until it
        is ready (idempotent; at activation).

        Raises:
            CheckerError: it could not be started (the activation fails, saying why).
            KeyboardInterrupt: SIGINT while waiting (the process is ended first).
        """
        if self._checker is not None:
            return
        checker, self._spawned = self._spawned or CheckerProcess(self._measurer), None
        checker.start()
        self._checker, self._verdict, self.failure, self._sent_ns = checker, None, "", 0
        self.down = self._outage = ""
        self._cancel.clear()
        self.restart_budget.reset()
        self._restarts.clear()
        self.restart_count = 0

    def stop(self) -> None:
        """End the checker process, or the one spawned for it, or one restarting (at deactivation and cleanup)."""
        self._cancel.set()
        restarter = self._restarter
        if restarter is not None:
            restarter.join()
        replacement = self._replacement
        for checker in (self._checker, self._spawned, replacement):
            if isinstance(checker, CheckerProcess):
                checker.close()
        self._checker = self._spawned = self._replacement = self._restarter = None

    @property
    def unavailable(self) -> str:
        """Why streamed motion stops and trajectories are refused whatever the verdicts say: the guard is
        down, or its checker died and its successor has not given its first verdict ("" otherwise)."""
        if self.down:
            return f"down: {self.down}"
        outage = self._outage
        return f"the collision checker restarts ({outage}), until its first verdict" if outage else ""

    def _revive(self, dead: CheckerProcess) -> CheckerProcess | None:
        """The loop's side of a restart (never waits): the dead checker's successor once it runs, else ``None``.

        Called each cycle while the checker is dead: it starts the restart thread when the budget
        allows, takes over the new process once it is ready, and puts the guard down when the
        minute's restarts are spent.
        """
        if self.down:
            return None
        if not self._outage:  # found dead this cycle
            self._outage = self.failure = dead.failure
            self._verdict = None
            self._revival = "restart due (at most one a second)"
            self._log("warning", f"collision guard: {dead.failure}; streamed motion stops and trajectories are refused")
        replacement = self._replacement
        if replacement is not None:  # the restart thread is done
            self._replacement = self._restarter = None
            restart = self._restarts[-1]
            if isinstance(replacement, CheckerProcess):
                self._checker, self.failure, self._sent_ns, restart.pid = replacement, "", 0, replacement.pid
                self._revival = (
                    f"restart {restart.number}: process {replacement.pid} started, waiting for its first verdict"
                )
                self._log("info", f"collision checker restarted: process {replacement.pid}; waiting for its verdict")
                return replacement
            restart.failure = self.failure = str(replacement)
            self._revival = f"restart {restart.number} failed: {replacement}; another is due (at most one a second)"
            self._log("error", f"collision checker restart {restart.number} failed: {replacement}")
        if self._restarter is not None or self._cancel.is_set():
            return None
        decision = self.restart_budget.decide()
        if decision == "later":
            return None
        cause = self.failure or dead.failure
        if decision == "never":
            self.down = (
                f"{cause}, after {self.restart_budget.per_minute} restarts within a minute; "
                "deactivate and activate the driver to start it again"
            )
            self._log("error", f"collision guard down: {self.down}; streamed motion stops, trajectories are refused")
            return None
        recent = self.restart_budget.spend()
        self.restart_count += 1
        self._restarts.append(Restart(self.restart_count, cause))
        self._revival = f"restart {self.restart_count}: starting a new checker process"
        self._log(
            "warning",
            f"restarting the collision checker (restart {recent} within a minute, of at most "
            f"{self.restart_budget.per_minute}): {cause}",
        )
        self._restarter = threading.Thread(
            target=self._restart, args=(dead,), name="bb_robot-collision-restart", daemon=True
        )
        self._restarter.start()
        return None

    def _restart(self, dead: CheckerProcess) -> None:
        """The restart thread: end the dead checker, start a new one, hand it (or why it failed) to the loop."""
        dead.close()  # reaps it (one that stopped answering but lives is killed)
        checker = CheckerProcess(self._measurer)
        try:
            checker.start(cancel=self._cancel)
        except Exception as error:  # noqa: BLE001 - CheckerError, or the spawn's OSError: the loop says it
            checker.close()
            self._replacement = error if isinstance(error, CheckerError) else CheckerError(repr(error))
            return
        self._replacement = checker  # (stop() closes it if it comes too late)

    @property
    def checker_pid(self) -> int | None:
        """The checker process's id while it runs."""
        checker = self._checker
        return None if checker is None else checker.pid

    @property
    def verdict(self) -> Verdict | None:
        """The latest verdict (any thread)."""
        return self._verdict

    def _verdict_of(self, stamp_ns: int, found: Measurement) -> Verdict:
        model = self._models.get(found.generation, self.model)
        nearest = None if found.pair < 0 else model.pair_contact(found.pair, found.distance)
        return Verdict(stamp_ns, nearest, found.ahead, found.scale, found.generation)

    def measure(self, position: FloatArray, target: FloatArray, now_ns: int) -> Verdict:
        """Measure where the arm is and where it is heading, in this process (what the checker process does).

        Args:
            position: the driver joints' positions now.
            target: where the commands lead them in the coming cycles.
            now_ns: the measurement's time stamp.

        Returns:
            The verdict (also kept as :attr:`verdict`).
        """
        verdict = self._verdict_of(now_ns, self._measurer.measure(position, target))
        self._verdict = verdict
        return verdict

    def step(self, now_ns: int) -> Verdict | None:
        """Measure, in this process, the heading the loop last reported (a loop on a simulated clock, without
        the checker process, steps the guard so).

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
            self._failed(repr(error))
            return None
        self.failure = ""
        return verdict

    def _failed(self, failure: str) -> None:
        if not self.failure:
            self._log("error", f"collision checker failed: {failure}; streamed motion stops")
        self.failure = failure
        self._verdict = None

    def _exchange(self, checker: CheckerProcess, now: int, position: FloatArray, target: FloatArray) -> None:
        """Take the checker's newest verdict, and hand it this cycle's heading when one is due (never waits);
        a dead checker is restarted (:meth:`_revive`); a new scene is handed over (:meth:`follow`)."""
        answer = checker.receive()
        if checker.failure:
            revived = self._revive(checker)
            if revived is None:
                return
            checker, answer = revived, None
        update = self._update
        if update is not None and checker.generation < update[0]:
            checker.update(*update)
        if answer is not None:
            stamp, found, failure = answer
            if found is None:
                self._failed(failure)
            elif found.generation != self.generation:
                pass  # measured on a scene since replaced: streamed motion waits for one on the new scene
            else:
                if self._outage:
                    self._log("info", f"collision checker process {checker.pid} answers: streamed motion may move")
                self.failure = self._outage = ""
                self._verdict = self._verdict_of(stamp, found)
        verdict = self._verdict
        if verdict is None or verdict.scale < 1.0 or now - self._sent_ns >= self._check_period_ns:
            if checker.send(now, position, target):
                self._sent_ns = now

    def diagnostics(self, now_ns: int) -> tuple[str, str, dict[str, object]]:
        """``(level, message, values)`` for /diagnostics: the nearest pair and its distance, the speed scale.

        Args:
            now_ns: the monotonic time now (for the verdict's age).

        Returns:
            ``level`` is ``"ok"``, ``"warn"`` (streamed motion slowed or stopped; the checker restarts) or
            ``"error"`` (the checker failed; the guard is down).  Near while a checked trajectory runs is
            ``"ok"``: nothing is slowed.  Each restart since activation is named (the latest five).
        """
        verdict = self._verdict
        values: dict[str, object] = {
            "checked pairs": len(self.model.pairs),
            "obstacle parts": len(self.model.obstacles),
            "slowdown distance (m)": f"{self.settings.slowdown_distance:g}",
            "stop distance (m)": f"{self.settings.stop_distance:g}",
            "checker restarts": self.restart_count,
        }
        for restart in list(self._restarts):
            values[f"checker restart {restart.number}"] = restart.describe()
        if self.down:
            return "error", f"guard down: {self.down}; streamed motion stops, trajectories are refused", values
        outage, state = self._outage, self._revival
        if outage:
            values["checker"] = state
            return "warn", f"{outage}; {state}; streamed motion stops, trajectories are refused", values
        if self.failure:
            return "error", f"checker failed: {self.failure}; streamed motion stops", values
        pid = self.checker_pid
        values["checker"] = f"process {pid}" if pid is not None else "not running"
        if verdict is None:
            return "ok", "no measurement yet", values
        age = now_ns - verdict.stamp_ns
        values["verdict age (ms)"] = f"{age * 1e-6:.1f}"
        if pid is not None and age > LATE_AFTER * 1e9:
            return "warn", f"checker late: its newest verdict is {age * 1e-6:.0f} ms old; streamed motion stops", values
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
        self._moved.observe(sample.positions, sample.stamps, sample.stamp_ns)
        # (np.where, not np.nan_to_num: a tenth of the time, in every cycle of the loop)
        known = np.isfinite(sample.positions)
        position = np.where(known, sample.positions, 0.0)
        # A joint never reported keeps the core's NaN (nothing is sent for it): never commanded here.
        streamed = (command.modes != int(CommandMode.EFFORT)) & known
        target = np.where(np.isfinite(command.position), command.position, position)
        lead = 10 * self.period  # where the commands lead over the next cycles
        velocity = np.where(np.isfinite(command.velocity), command.velocity, 0.0)
        target = np.where(command.modes == int(CommandMode.VELOCITY), position + velocity * lead, target)
        self._heading = (position, target)
        checker = self._checker
        if checker is not None:
            self._exchange(checker, now, position, target)
        slowed_from, self._slowed_from = self._slowed_from, None
        self._applied = not trajectory and bool(streamed.any())
        if not self._applied:
            return command
        verdict = self._verdict
        if verdict is not None and verdict.generation != self.generation and checker is not None:
            verdict = None  # measured on a scene since replaced
        if verdict is None:
            return self._stopped(command, position, streamed) if checker is not None else command
        age = now - verdict.stamp_ns
        if checker is not None and age > LATE_AFTER * 1e9:
            return self._stopped(command, position, streamed)  # the checker is late, or gone: nothing is known
        if verdict.scale >= 1.0:
            return command
        if age > 2 * self.period * 1e9 or verdict.scale <= 0.0:
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
