"""``bb-robot up --demo-cartesian``: the ready pose, then a circle through the servo's ``~/pose_commands``.

The geometry and the ready pose are :mod:`bb_robot.bringup.cartesian`; this module runs the demo
for one robot on a thread of its own while ``bb-robot up`` shows its live view: it moves the
servo's chain to the ready pose with a FollowJointTrajectory goal, streams the circle's poses at
:data:`~bb_robot.bringup.cartesian.STREAM_RATE`, and measures the tool (forward kinematics of the
joint states received) against the circle; a turn the machine paused
(:class:`~bb_robot.bringup.cartesian.TurnTiming`) is drawn again.  While it streams, the thread
asks for real-time priority :data:`STREAM_PRIORITY` (as the driver's joint-state publisher does):
on a slow, busy 2-core host the stream otherwise paused for 0.1-0.3 s in every turn.  It never
imports rclpy: the client does the ROS part.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bb_robot.bringup import cartesian
from bb_robot.bringup.demo import move_point
from bb_robot.cli.up_inputs import BringupPlan, UpError
from bb_robot.driver.timing.loop import request_realtime
from bb_robot.errors import BbRobotError
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import matrix_to_quaternion

if TYPE_CHECKING:
    from bb_robot.bringup.status import RobotView
    from bb_robot.nodes.up_client import UpClient

#: Nearest two links may come on the way to the ready pose or around the circle (m) when it is picked.
CLEARANCE = 0.01
#: Seconds the ready move may take beyond its own duration, and the joint states may take to arrive.
SLACK = 20.0
#: How long after a turn the demo waits for the driver's next /diagnostics (it sends them once a
#: second), to count the silences its servo saw in the turn.
DIAGNOSTICS_WAIT = 3.0
#: The real-time priority (SCHED_FIFO) the demo's thread asks for while it streams the circle (normal
#: priority where Linux refuses it); the search for the ready pose, which computes, runs before, at
#: normal priority.
STREAM_PRIORITY = 1


@dataclass
class Outcome:
    """How the Cartesian demo of one robot went (filled in by its thread)."""

    phase: str = "starting"
    done: bool = False
    ok: bool = False
    message: str = ""


class DemoThread:
    """A demo of one robot on a thread of its own: :meth:`_demo` runs there, and its end, whatever
    it is, fills in :attr:`outcome` (an exception is the demo's failure, never a silent thread death).

    Args:
        name: the thread's name.
    """

    def __init__(self, name: str) -> None:
        self.outcome = Outcome()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _demo(self) -> None:
        raise NotImplementedError

    def _end(self, ok: bool, message: str) -> None:
        self.outcome.ok, self.outcome.message, self.outcome.done = ok, message, True

    def _run(self) -> None:
        try:
            self._demo()
        except BbRobotError as error:
            self._end(False, str(error))
        except Exception as error:  # noqa: BLE001 - reported as the demo's failure, never a silent thread death
            self._end(False, f"{type(error).__name__}: {error}")


def servo_chain(plan: BringupPlan) -> SerialManipulator:
    """The chain the driver's servo moves, as the parameter file configures it.

    Raises:
        UpError: the parameter file leaves the servo off, or its tip names no chain.
    """
    config = plan.config
    if not config.servo_enabled:
        raise UpError(
            f"--demo-cartesian: the driver's servo is off in {config.path} (servo.enable); use a parameter file "
            "that turns it on, like bb_arm.yaml, or set servo.enable: true and servo.tip (docs/nodes/servo.md)"
        )
    try:
        return SerialManipulator.from_robot(plan.robot, config.servo_tip or None, strict=False)
    except BbRobotError as error:
        raise UpError(f"--demo-cartesian: servo.tip '{config.servo_tip}' in {config.path}: {error}") from None


def collision_check(plan: BringupPlan, chain: SerialManipulator) -> cartesian.Clear | None:
    """``clear(rows)`` for the ready pose search: the robot's own geometry and allowed-collision matrix.

    ``None`` when the model has no collision geometry or it cannot be read (the driver, which
    checks every goal, then says why).
    """
    loaded = plan.loaded
    if loaded is None or not any(c.geometry is not None for link in plan.robot.links.values() for c in link.collisions):
        return None
    from bb_robot.collision.path import check_path
    from bb_robot.collision.sources import checked_model

    try:
        model, _ = checked_model(loaded, plan.model_dirs)
    except BbRobotError:
        return None
    names = list(model.fk.joint_names)
    columns = [names.index(name) for name in chain.joint_names]

    def clear(rows: cartesian.FloatArray) -> bool:
        path = np.zeros((len(rows), len(names)))
        path[:, columns] = rows
        return check_path(model, path, CLEARANCE).ok

    return clear


class CartesianDemo(DemoThread):
    """The demo of one robot, on its own thread (:meth:`start`); :attr:`outcome` fills in.

    Args:
        plan: the bring-up plan.
        client: the ROS client.
        namespace: the robot's namespace.
        say: prints a progress line.
    """

    def __init__(
        self, plan: BringupPlan, client: UpClient, namespace: str, say: Callable[[str], None], stop: threading.Event
    ) -> None:
        super().__init__("cartesian-demo")
        self.plan, self.client, self.namespace, self.say, self.stop = plan, client, namespace, say, stop
        self.chain = servo_chain(plan)
        self.label = f"/{namespace} " if namespace else ""

    def start(self) -> CartesianDemo:
        """Start the thread."""
        self.client.pose_topic(self.namespace)  # the publisher first: discovery runs during the ready move
        self._thread.start()
        return self

    def _view(self) -> RobotView:
        return self.client.snapshot()[self.namespace]

    def _positions(self, view: RobotView | None = None) -> tuple[np.ndarray, float] | None:
        """The chain's joint positions in the latest joint state (of ``view``), and when it was read."""
        if view is None:
            view = self._view()
        known = dict(zip(view.joint_names, view.positions, strict=False))
        if not all(name in known for name in self.chain.joint_names):
            return None
        return np.array([known[name] for name in self.chain.joint_names]), time.monotonic()

    def _demo(self) -> None:
        outcome = self.outcome
        deadline = time.monotonic() + SLACK
        while (state := self._positions()) is None:
            if self.stop.is_set():
                return None  # interrupted: not an outcome (bb-robot up says so and exits 0)
            if time.monotonic() > deadline:
                return self._end(False, f"no joint states of the chain's joints {list(self.chain.joint_names)}")
            time.sleep(0.05)
        outcome.phase = "finding the ready pose"
        ready = cartesian.ready_configuration(self.chain, state[0], clear=collision_check(self.plan, self.chain))
        outcome.phase = "moving to the ready pose"
        # Every driven joint (a goal leaving joints out is refused): the chain's to the ready pose, the others stay.
        view = self._view()
        known = dict(zip(view.joint_names, view.positions, strict=False))
        joints = [joint for joint in self.plan.demo_joints if joint.name in known]
        wanted = dict(zip(self.chain.joint_names, ready.tolist(), strict=True))
        point = move_point(joints, [known[j.name] for j in joints], [wanted.get(j.name, known[j.name]) for j in joints])
        self.say(f"{self.label}moving to the ready pose ({point.time:.1f} s): {np.round(ready, 3).tolist()}")
        goal = self.client.send_goal(self.namespace, [j.name for j in joints], [point])
        deadline = time.monotonic() + point.time + SLACK
        while not goal.done and time.monotonic() < deadline and not self.stop.is_set():
            time.sleep(0.05)
        if self.stop.is_set():
            return None
        if not goal.done or goal.status != 4 or goal.error_code != 0:
            reason = goal.rejected_reason or goal.error_string or ("no result" if not goal.done else "")
            return self._end(False, f"the move to the ready pose failed: {reason} (status {goal.status})")
        self._come_to_rest()
        if self.stop.is_set():
            return None
        self._circle()

    def _come_to_rest(self) -> None:
        """Wait (at most :data:`~bb_robot.bringup.cartesian.STILL_WAIT`) for the tool to stand still.

        The ready move succeeds within its goal tolerance, and the arm then closes what is left; the
        circle starts where the tool rests, so that it carries none of that as a deviation.
        """
        stillness = cartesian.Stillness()
        deadline = time.monotonic() + cartesian.STILL_WAIT
        while time.monotonic() < deadline and not self.stop.is_set():
            view = self._view()
            state = self._positions(view)
            if state is not None and stillness.add(
                view.joint_state_stamp, self.chain.end_effector_pose(state[0])[:3, 3]
            ):
                return
            time.sleep(0.01)
        if not self.stop.is_set():
            self.say(
                f"{self.label}the tool did not come to rest in {cartesian.STILL_WAIT:g} s; drawing from where it is"
            )

    def _circle(self) -> None:
        state = self._positions()
        assert state is not None
        circle = cartesian.Circle(self.chain.end_effector_pose(state[0]))
        self.outcome.phase = "drawing the circle"
        request_realtime(STREAM_PRIORITY)
        pauses: list[str] = []
        for turn in range(1, cartesian.TURNS + 1):
            again = f" again (turn {turn} of at most {cartesian.TURNS})" if turn > 1 else ""
            size = f"{circle.radius * 100:g} cm circle in {circle.duration:g} s"
            self.say(f"{self.label}drawing a {size}{again} (~/pose_commands)")
            deviations, timing = self._turn(circle)
            if self.stop.is_set():
                return None
            if not deviations:
                return self._end(False, "no joint states while drawing the circle")
            pause = timing.pause()
            if not pause:
                return self._judge(circle, deviations)
            pauses.append(pause)
            self.say(
                f"{self.label}turn {turn} not judged: {pause} (longer than {cartesian.MAX_GAP:g} s; a busy machine)"
            )
        self._end(
            False,
            f"every one of {cartesian.TURNS} turns was paused longer than {cartesian.MAX_GAP:g} s "
            f"({'; '.join(pauses)}): this machine is too busy to judge the tracking",
        )

    def _turn(self, circle: cartesian.Circle) -> tuple[list[tuple[float, float]], cartesian.TurnTiming]:
        """Stream one turn of the circle; the tool's deviations seen ``(t, m)`` and the turn's timing."""
        quaternion = matrix_to_quaternion(circle.start[:3, :3])
        deviations: list[tuple[float, float]] = []
        timing = cartesian.TurnTiming()
        last: tuple[float, ...] = ()
        first_stamp = 0.0
        silences = self._view().stream_silences
        start = time.monotonic()
        period = 1.0 / cartesian.STREAM_RATE
        while (t := (now := time.monotonic()) - start) <= circle.duration + cartesian.SETTLE and not self.stop.is_set():
            pose = circle.pose(t)
            # stamped for t: a pause between computing the pose and publishing it must not shift its stamp
            age = time.monotonic() - now
            self.client.publish_pose(self.namespace, self.chain.base_link, pose[:3, 3].tolist(), quaternion, age)
            timing.sent.append(t)
            view = self._view()
            if view.positions != last and (state := self._positions()) is not None:
                last = view.positions
                first_stamp = first_stamp or view.joint_state_stamp
                tool = self.chain.end_effector_pose(state[0])[:3, 3]
                deviations.append((t, float(circle.deviation(tool)[0])))
            time.sleep(max(0.0, start + (int(t / period) + 1) * period - time.monotonic()))
        view = self._view()
        timing.state_pauses = [
            p for stamp, p in view.joint_state_pauses if first_stamp < stamp <= view.joint_state_stamp
        ]
        timing.silences = self._silences_since(silences)
        return deviations, timing

    def _silences_since(self, before: int) -> int:
        """How often the driver's servo saw the pose stream fall silent since it had counted ``before``.

        What the driver received can pause where the sender's stream did not (its intake, or the
        middleware, held the poses back): the driver then stops the tool where it is and catches up
        once poses arrive again, so such a turn is not judged either.  Waits for the driver's next
        /diagnostics (once a second) to count the end of the turn too; 0 when the driver gives none.
        """
        if before < 0:
            return 0
        ended = time.monotonic()
        deadline = ended + DIAGNOSTICS_WAIT
        while (view := self._view()).diagnostics_at <= ended and time.monotonic() < deadline:
            if self.stop.is_set():
                break
            time.sleep(0.05)
        return max(0, view.stream_silences - before)

    def _judge(self, circle: cartesian.Circle, deviations: list[tuple[float, float]]) -> None:
        worst_t, worst = max(deviations, key=lambda item: item[1])
        text = (
            f"the tool stayed within {worst * 1000:.2f} mm of the {circle.radius * 100:g} cm circle "
            f"({len(deviations)} joint states; at most {cartesian.TOLERANCE * 1000:g} mm)"
        )
        if worst <= cartesian.TOLERANCE:
            return self._end(True, text)
        self._end(
            False,
            f"the tool strayed {worst * 1000:.2f} mm from the circle at t = {worst_t:.2f} s "
            f"(at most {cartesian.TOLERANCE * 1000:g} mm)",
        )
