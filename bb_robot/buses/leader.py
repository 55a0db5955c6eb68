"""Leader-follower teleop without ROS: the leader arm, its joints on the follower's, the engaging ramp, the loop.

``bb-robot teleop --leader`` (docs/buses.md, "Leader-follower teleop") reads a leader arm — torque
off, moved by hand — on a bus of its own and streams its pose to the follower's driver as position
commands.  Everything it decides is here, so that it runs over the emulator's pty without ROS:

- :class:`LeaderConfig` — the leader's section of its parameter file (``config/so101_leader.yaml``:
  port, baud, protocol, servos, calibration, rate, and which follower joint each leader joint moves);
- :class:`LeaderArm` — the leader read through the bridge's own logic (:class:`~bb_robot.buses.bridge.Bridge`:
  the same start-up checks, the same sync read, the same tick mappings), its torque kept off; a
  read in which a servo did not answer (after the Bus's retries) gives no pose at all, never a guess;
- :class:`JointMap` — leader joints onto the follower's, clamped to the follower's joint limits (the
  gripper's LeRobot 0–100 maps onto the follower's gripper limits, as the bridge maps it);
- :class:`Ramp` — on engaging, the command goes from the follower's measured pose to the leader's
  at no more than :data:`ENGAGE_SPEED` (0.5 rad/s, every joint arriving together), then tracks;
- :class:`TeleopLoop` — the rate loop: read, map, ramp or track, send; what it says, and its
  statistics (achieved rate, p99 latency from a leader read to the command sent).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bb_robot.buses.bridge import Bridge, BridgeError
from bb_robot.buses.bridge_setup import BridgeSetupError, CycleStats, ServoSpec, servo_sections, servo_specs
from bb_robot.buses.pacing import Deadlines
from bb_robot.buses.transport import Bus
from bb_robot.errors import BbRobotError

#: The fastest the follower moves while engaging (rad/s at each joint).
ENGAGE_SPEED = 0.5
#: The longest gap between two cycles the ramp moves for (s): a stalled loop does not make up for lost time.
MAX_STEP_TIME = 0.02
#: How far (rad) the engaging command may run ahead of the follower's measured position: beyond it the
#: ramp waits for the follower.  A follower whose driver or bridge stalled then catches up by no more
#: than this, however long the stall (its bridge would otherwise make up the lost time at its speed
#: limit, 2 rad/s); at 0.5 rad/s it leaves 0.1 s for a command to come back as a measurement.
RAMP_LEAD = 0.05
#: A failed leader read of the same servos is named at most once in this many seconds (the count of the
#: others with it); other servos are named at once.
FAILURE_REPEAT = 1.0
#: Seconds the ramp may wait for the follower before the loop says so (once).
WAIT_WARNING = 1.0
#: Seconds without a whole leader pose after which the loop says so (once per stretch).
SILENCE_WARNING = 0.25


class LeaderError(BbRobotError):
    """The leader cannot be used or was lost (the message names the file, port, servo or joint and what to do).

    Attributes:
        kind: ``config`` (the leader's section), ``start`` (its servos at start), ``port`` (the port vanished).
    """

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class LeaderConfig:
    """The leader's section of its parameter file.

    Attributes:
        source: the file it came from (for messages).
        port, baud, protocol, latency, retries: its bus.
        rate: reads (and commands sent) per second.
        specs: its servos (:func:`~bb_robot.buses.bridge_setup.servo_specs`).
        follower: leader joint → the follower joint it moves.
    """

    source: str
    port: str
    baud: int
    protocol: str
    rate: float
    latency: float
    retries: int
    specs: tuple[ServoSpec, ...]
    follower: Mapping[str, str]

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any], source: str, port: str = "") -> LeaderConfig:
        """The leader's configuration from its section's parameters, flattened (``servos.gripper.id``).

        Args:
            values: the ``/**/leader`` section's ``ros__parameters``, flattened.
            source: the file's name, for messages.
            port: overrides the section's ``port`` when not empty.

        Returns:
            The checked configuration.

        Raises:
            LeaderError: kind ``config``: no port, no servos, a rate that is not positive, or a servo
                section the bridge would refuse (the message names the file and parameter).
        """
        servos = servo_sections(values)
        follower = {
            str(key).partition(".")[2]: str(value)
            for key, value in values.items()
            if str(key).startswith("follower_joints.") and str(key).partition(".")[2]
        }
        joints = [str(j) for j in values.get("joints") or ()]
        try:
            specs = servo_specs(
                str(values.get("protocol", "feetech")), joints, servos, str(values.get("calibration", ""))
            )
        except BridgeSetupError as error:
            raise LeaderError(f"{source}: the leader section: {error}", "config") from None
        unknown = sorted(set(follower) - set(joints))
        if unknown:
            raise LeaderError(
                f"{source}: follower_joints names leader joint(s) {', '.join(unknown)} that are not in its joints "
                f"({', '.join(joints)})",
                "config",
            )
        chosen = port or str(values.get("port") or "")
        if not chosen:
            raise LeaderError(
                f"{source}: the leader section has no port: set port, or give --leader-port PATH", "config"
            )
        rate = float(values.get("rate", 200.0))
        if not math.isfinite(rate) or rate <= 0:
            raise LeaderError(f"{source}: rate {rate} is not a rate (reads per second, > 0)", "config")
        return cls(
            source=source, port=chosen, baud=int(values.get("baud", 1_000_000)),
            protocol=str(values.get("protocol", "feetech")), rate=rate,
            latency=float(values.get("latency", 0.004)), retries=int(values.get("retries", 2)), specs=specs,
            follower={spec.joint: follower.get(spec.joint, spec.joint) for spec in specs},
        )  # fmt: skip


@dataclass(frozen=True)
class JointMap:
    """Leader joints onto the follower's, each clamped to the follower joint's limits.

    Attributes:
        pairs: (leader joint, follower joint), in the leader's bus order.
        limits: follower joint → (lower, upper) (rad); a joint without limits is not clamped.
    """

    pairs: tuple[tuple[str, str], ...]
    limits: Mapping[str, tuple[float, float]]

    @classmethod
    def build(
        cls, config: LeaderConfig, follower_joints: Sequence[str], limits: Mapping[str, tuple[float, float]]
    ) -> JointMap:
        """The map of ``config``'s joints onto a follower with ``follower_joints``.

        Args:
            config: the leader's configuration.
            follower_joints: the follower's joints (its ``joint_states`` names).
            limits: the follower's joint limits (rad), by joint.

        Returns:
            The map.

        Raises:
            LeaderError: kind ``config``: a leader joint whose follower joint the follower does not
                have, or one follower joint moved by two leader joints.
        """
        pairs = tuple((leader, config.follower[leader]) for leader in (s.joint for s in config.specs))
        absent = [f"{leader} -> {follower}" for leader, follower in pairs if follower not in follower_joints]
        if absent:
            raise LeaderError(
                f"{config.source}: the follower has no joint for {', '.join(absent)} (its joints: "
                f"{', '.join(follower_joints)}); set follower_joints.<leader joint> to the follower's name",
                "config",
            )
        targets = [follower for _, follower in pairs]
        twice = sorted({t for t in targets if targets.count(t) > 1})
        if twice:
            raise LeaderError(
                f"{config.source}: follower joint(s) {', '.join(twice)} moved by two leader joints", "config"
            )
        return cls(pairs, {f: limits[f] for _, f in pairs if f in limits})

    def targets(self, leader: Mapping[str, float]) -> dict[str, float]:
        """The follower's joint positions (rad) for the leader's ``leader`` (by leader joint), clamped."""
        out = {}
        for source, target in self.pairs:
            value = leader[source]
            limits = self.limits.get(target)
            out[target] = min(max(value, limits[0]), limits[1]) if limits else value
        return out


class Ramp:
    """From the follower's measured pose to the leader's at no more than ``speed``, then tracking.

    While ramping, every joint moves along the straight line (in joint space) towards the latest
    target, the farthest one at ``speed``, so that all arrive together; the target may move
    meanwhile.  While any joint's command is more than ``lead`` ahead of where the follower was
    measured, the command waits.  Once the command reaches the target the ramp is over and the
    command is the target itself until :meth:`disengage`.

    Args:
        speed: the fastest any joint moves while ramping (rad/s).
        max_step_time: the longest gap (s) between two steps that is moved for.
        lead: how far (rad) the command may be ahead of the measured position.
    """

    def __init__(
        self, speed: float = ENGAGE_SPEED, max_step_time: float = MAX_STEP_TIME, lead: float = RAMP_LEAD
    ) -> None:
        self.speed = speed
        self.max_step_time = max_step_time
        self.lead = lead
        #: The joint the ramp last waited for (``""``: it did not wait).
        self.waiting_for = ""
        self.command: dict[str, float] = {}
        self.engaged = False
        self.tracking = False

    def engage(self, start: Mapping[str, float]) -> None:
        """Start ramping from ``start`` (the follower's measured pose, by joint)."""
        self.command, self.engaged, self.tracking = dict(start), True, False

    def disengage(self) -> None:
        """Stop: the next :meth:`engage` ramps again."""
        self.command, self.engaged, self.tracking = {}, False, False

    def distance(self, target: Mapping[str, float]) -> float:
        """The largest distance (rad) of any joint from ``target``."""
        return max((abs(target[j] - self.command[j]) for j in target), default=0.0)

    def step(
        self, target: Mapping[str, float], dt: float, measured: Mapping[str, float] | None = None
    ) -> dict[str, float]:
        """The command after ``dt`` seconds towards ``target`` (every joint of the engaged pose).

        Args:
            target: the leader's pose on the follower's joints (rad).
            dt: seconds since the previous step (at most ``max_step_time`` counts).
            measured: the follower's latest measured positions (rad); while ramping, the command
                does not move while a joint's is more than ``lead`` ahead of its.

        Returns:
            The command (a copy).
        """
        if self.tracking:
            self.command = dict(target)
            return dict(self.command)
        self.waiting_for = ""
        if measured is not None:
            behind = [j for j, c in self.command.items() if j in measured and abs(c - measured[j]) > self.lead]
            if behind:
                self.waiting_for = behind[0]
                return dict(self.command)
        reach = self.speed * min(max(dt, 0.0), self.max_step_time)
        far = self.distance(target)
        if far <= reach:
            self.command, self.tracking = dict(target), True
        else:
            scale = reach / far
            self.command = {j: c + (target[j] - c) * scale for j, c in self.command.items()}
        return dict(self.command)


class LeaderArm:
    """The leader arm on its bus, read through the bridge's logic, its torque kept off.

    Args:
        bus: the leader's open bus.
        config: its configuration.
        follower_limits: the follower's joint limits (the gripper's 0–100 maps onto them).
        clock: monotonic seconds (how often a failed read is named).

    Raises:
        LeaderError: kind ``config``: a ``percent`` servo whose follower joint has no limits.
    """

    def __init__(
        self,
        bus: Bus,
        config: LeaderConfig,
        follower_limits: Mapping[str, tuple[float, float]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.clock = clock
        self._said_at: float | None = None
        self._said_failures = 0
        self._said_missing = ""
        self.bridge = Bridge(bus, config.specs, silence_timeout=0.0)
        self.failures = 0
        self._failing = False
        self._said: list[tuple[str, str]] = []
        for spec in config.specs:
            if spec.mapping == "percent":
                limits = follower_limits.get(config.follower[spec.joint])
                if limits is None:
                    raise LeaderError(
                        f"{config.source}: servos.{spec.joint}.mapping is percent, but the follower's joint "
                        f"{config.follower[spec.joint]} has no limits to map 0-100 onto",
                        "config",
                    )
                self.bridge.set_limits(spec.joint, *limits)

    def start(self) -> list[str]:
        """The bridge's start-up checks on the leader, then torque off on every servo.

        Returns:
            Warnings for the user.

        Raises:
            LeaderError: kind ``start`` (servos missing, another model, EEPROM differing from the
                calibration, torque that would not turn off) or ``port``.
        """
        try:
            warnings = self.bridge.start()
        except BridgeError as error:
            raise LeaderError(f"the leader: {error}", "port" if error.kind == "port" else "start") from None
        left = self.bridge.torque_off(5)
        if left:
            names = ", ".join(f"{s.spec.id} ({s.spec.joint})" for s in left)
            raise LeaderError(
                f"the leader: torque could not be turned off on servo(s) {names}: cut their power", "start"
            )
        return warnings

    def read(self) -> dict[str, float] | None:
        """One sync read: every leader joint's angle (rad), or ``None`` when a servo did not answer.

        Raises:
            LeaderError: kind ``port``: the leader's port vanished.
        """
        try:
            feedback = self.bridge.cycle()
        except BridgeError as error:
            kind = "port" if error.kind == "port" else "start"
            raise LeaderError(
                f"{self.config.port}: the leader's port failed ({error}); stopped streaming: the follower holds "
                "where it is (the driver's command_timeout). Plug the leader back in and start bb-robot teleop again",
                kind,
            ) from None
        # The bridge's own warnings name one servo each (its silence is off here); one line a stretch instead.
        self._said += [event for event in self.bridge.events.take() if event[0] == "error"]
        if len(feedback) < len(self.bridge.servos):
            self.failures += 1
            answered = {item.joint for item in feedback}
            missing = ", ".join(f"{s.id} ({s.joint})" for s in self.config.specs if s.joint not in answered)
            now = self.clock()
            repeat = (
                missing == self._said_missing and self._said_at is not None and now - self._said_at < FAILURE_REPEAT
            )
            if not self._failing and not repeat:
                since = (
                    ""
                    if self._said_at is None
                    else f"; {self.failures - self._said_failures - 1} more failed reads before"
                )
                self._said.append(("warn", f"servo(s) {missing} did not answer ({self.bridge.bus.stats.last_error}): "
                                   f"no leader pose this cycle, nothing sent{since}"))  # fmt: skip
                self._said_at, self._said_failures, self._said_missing = now, self.failures, missing
            self._failing = True
            return None
        self._failing = False
        return {item.joint: item.position for item in feedback}

    def messages(self) -> list[tuple[str, str]]:
        """What there is to say since the last call (level, text): the first failed read of each stretch,
        and the hardware errors the bridge's logic found."""
        said, self._said = self._said, []
        return said


class Follower(Protocol):
    """The follower as the loop sees it (the ROS side implements it: :mod:`bb_robot.nodes.teleop_leader`)."""

    def pose(self) -> Mapping[str, float] | None:
        """The follower's latest measured joint positions (rad), or ``None`` before any."""

    def armed(self) -> bool:
        """Whether the follower's driver is armed."""

    def send(self, positions: Mapping[str, float]) -> None:
        """Send one position command (rad, by follower joint)."""


class TeleopLoop:
    """Read the leader, map, ramp or track, send: at ``rate``, until stopped or the leader's port vanishes.

    Args:
        arm: the started leader.
        joints: the leader → follower map.
        follower: the follower.
        say: where messages go (level ``info``, ``warn`` or ``error``, text).
        clock: monotonic seconds.
    """

    def __init__(
        self,
        arm: LeaderArm,
        joints: JointMap,
        follower: Follower,
        say: Callable[[str, str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.arm, self.joints, self.follower, self.say, self.clock = arm, joints, follower, say, clock
        self.ramp = Ramp()
        self.stats = CycleStats()
        self.sent = 0
        self.last_pose_at = clock()
        self._silent = False
        self._previous: float | None = None
        self._waiting_since: float | None = None
        self._said_waiting = False

    @property
    def state(self) -> str:
        """``waiting`` (not engaged), ``ramping`` or ``tracking``."""
        return "tracking" if self.ramp.tracking else "ramping" if self.ramp.engaged else "waiting"

    def cycle(self) -> None:
        """One cycle (module docstring).

        Raises:
            LeaderError: kind ``port``: the leader's port vanished (nothing is sent from then on).
        """
        start = self.clock()
        leader = self.arm.read()
        for level, text in self.arm.messages():
            self.say(level, f"the leader: {text}")
        if leader is None:
            if not self._silent and start - self.last_pose_at >= SILENCE_WARNING:
                self._silent = True
                self.say("warn", f"no whole leader pose for {start - self.last_pose_at:.2f} s ({self.arm.failures} "
                         "failed reads): nothing sent; the follower holds (the driver's command_timeout)")  # fmt: skip
            return
        if self._silent:
            self.say("info", f"the leader answers again ({self.arm.failures} failed reads so far)")
        self._silent, self.last_pose_at = False, start
        target = self.joints.targets(leader)
        if not self.follower.armed():
            if self.ramp.engaged:
                self.ramp.disengage()
                self.say("warn", "the follower's driver is not armed: stopped streaming; it ramps again once armed")
            return
        dt = 0.0 if self._previous is None else start - self._previous
        self._previous = start
        if not self.ramp.engaged:
            pose = self.follower.pose()
            if pose is None or any(j not in pose for j in target):
                return
            self.ramp.engage({j: pose[j] for j in target})
            self.say("info", f"engaging: the follower ramps to the leader's pose at <= {self.ramp.speed:g} rad/s "
                     f"({self.ramp.distance(target):.3f} rad away)")  # fmt: skip
            dt = 0.0
        was = self.ramp.tracking
        command = self.ramp.step(target, dt, None if was else self.follower.pose())
        self.follower.send(command)
        self.sent += 1
        self.stats.record(start, self.clock() - start)
        if self.ramp.tracking and not was:
            self.say("info", "tracking the leader")
        if not self.ramp.waiting_for:
            self._waiting_since = None
        elif self._waiting_since is None:
            self._waiting_since = start
        elif start - self._waiting_since >= WAIT_WARNING and not self._said_waiting:
            self._said_waiting = True
            self.say("warn", f"engaging: the follower's {self.ramp.waiting_for} has been more than "
                     f"{self.ramp.lead:g} rad behind the ramp for {WAIT_WARNING:g} s: the ramp waits for it (its "
                     "limits, the collision guard, or a stalled driver or bridge hold it back)")  # fmt: skip

    def run(self, rate: float, stop: threading.Event) -> None:
        """Cycles on absolute deadlines at ``rate`` until ``stop`` is set.

        Raises:
            LeaderError: kind ``port``: the leader's port vanished.
        """
        deadlines = Deadlines(1.0 / rate, self.clock)
        while not stop.is_set():
            deadlines.wait(stop.wait)
            self.cycle()


__all__ = [
    "ENGAGE_SPEED",
    "RAMP_LEAD",
    "Follower",
    "JointMap",
    "LeaderArm",
    "LeaderConfig",
    "LeaderError",
    "Ramp",
    "TeleopLoop",
]
