#!/usr/bin/env python3
"""The Cartesian servo inside the driver's loop (500 Hz), on bb_arm to its ``tcp``.

Run ``python benchmarks/bench_servo.py [--quick] [--no-docs]``.  In one run:

(a) **CPU per cycle**, servo on against servo off: the core's whole cycle (read, inbox, setpoints,
    write) on the simulator and a simulated clock, streaming a twist (servo on) against streaming
    position commands along the path the servo commanded in the same round (servo off: the same
    motion, so the simulator's work is alike), interleaved; median µs.  Verdict: the servo adds at
    most 30 %.
(b) **Latency** from a twist handed to the driver (``DriverCore.submit``, what the node's callback
    does as the message arrives) to the backend's ``write`` that carries it, with the loop running
    on its own thread at 500 Hz; with ``immediate_commands`` (the node's default) and without.
    The DDS hop before the callback is not included (``bench_driver`` measures it for joint
    commands).  Verdict: p99 at most 2 control periods.
(c) **Circle tracking**: a 5 cm circle in the plane normal to the tool's z, one turn in 4 s, as
    pose commands streamed at 50 Hz; the error is the measured tool point's distance from the circle
    (forward kinematics of the joint states), after the first 0.2 s; on the simulator and on MuJoCo.
(d) **Drift** on MuJoCo: an angular twist about the tool (0.3 rad/s, 10 s): the tool point's
    largest deviation; a linear twist (3 cm/s, 3 s): the orientation's; a held pose (60 s, 10 s
    with ``--quick``): the position's; and into a singularity: from bb_arm's shoulder singularity
    (:data:`SHOULDER`), the same angular twist about ``tcp``'s z at 100 Hz until the servo has
    halted (4 s): the tool point's largest deviation, and how far the tool turned.

Prints a Markdown report and rewrites the ``bench_servo`` section of ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _common  # noqa: E402
import _streams  # noqa: E402

from bb_robot.driver.backends.base import BackendCommand, BackendContext  # noqa: E402
from bb_robot.driver.backends.sim import SimBackend  # noqa: E402
from bb_robot.driver.commands import limits as L  # noqa: E402
from bb_robot.driver.commands.commands import CommandMode, CommandValidator  # noqa: E402
from bb_robot.driver.core import CoreSettings, DriverCore  # noqa: E402
from bb_robot.driver.model import driven_joints  # noqa: E402
from bb_robot.driver.servo.servo import Servo  # noqa: E402
from bb_robot.driver.servo.servo_inputs import (  # noqa: E402
    ServoSettings,
    check_pose,
    check_twist,
)
from bb_robot.driver.servo.servo_math import pose_error, rotation_vector  # noqa: E402
from bb_robot.urdf.builder import load_urdf  # noqa: E402

SECTION = "bench_servo"
SLOW_SECTION = "bench_servo_slow_host"
SLOW_TITLE = "The Cartesian demo's streams on a slow host (`bench_servo.py --slow-host 80`)"
ARM = Path(__file__).resolve().parents[1] / "models" / "bb_arm.urdf"
PERIOD_NS = 2_000_000
READY = [0.0, -1.2, 1.5, -1.9, -1.5708, 0.0]
#: bb_arm at its shoulder singularity (the wrist point 34 mm from the base axis, measure 0.0084).
SHOULDER = [0.3, -0.5, 1.2, -0.7, 0.9, 0.2]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000_000_000

    def __call__(self) -> int:
        return self.now


class Bench:
    """bb_arm's core with a servo on ``backend`` (simulated clock, lockstep)."""

    def __init__(
        self, backend: str = "sim", clock: Callable[[], int] | None = None, initial: list[float] | None = None
    ) -> None:
        self.clock = Clock()
        robot = load_urdf(ARM)
        joints = driven_joints(robot)
        limits = L.from_robot(robot, joints)
        options: dict[str, Any] = {"initial_positions": (initial or READY) + [0.0] * (len(joints) - 6)}
        backend_class: Any = SimBackend
        if backend == "mujoco":
            from bb_robot.driver.backends.mujoco import MujocoBackend

            backend_class, options["lockstep"] = MujocoBackend, True
        writes: list[int] = []
        self.writes = writes

        class Recorded(backend_class):  # type: ignore[misc,valid-type]
            last: Any = None  # the positions of the last command

            def write(self, command: BackendCommand, now: int) -> None:
                writes.append(time.monotonic_ns())
                self.last = command.position
                super().write(command, now)

        context = BackendContext(
            robot, joints, limits, 500.0, logging.getLogger("bench"), options, clock=clock or self.clock
        )
        self.backend = Recorded(context)
        self.backend.connect(1.0)
        self.core = DriverCore(
            self.backend, limits, CoreSettings(command_timeout=0.0), clock=clock or self.clock, armed=True
        )
        self.core.active = True
        self.backend.set_armed(True)
        self.servo = Servo(robot, joints, limits, ServoSettings(tip="tcp"))
        self.core.servo = self.servo
        self.validator = CommandValidator(limits, self.backend.capabilities.modes, backend=backend)
        self.cycle(10)

    def cycle(self, count: int = 1, each: Callable[[], None] | None = None) -> None:
        for _ in range(count):
            if each is not None:
                each()
            self.clock.now = self.core.run_cycles(1, PERIOD_NS, self.clock.now)

    def q(self) -> np.ndarray:
        sample = self.core.snapshot.sample
        assert sample is not None
        return np.asarray(sample.positions[self.servo.indices])

    def tool(self) -> np.ndarray:
        return np.asarray(self.servo.chain.end_effector_pose(self.q()))

    def twist(self, linear: Any, angular: Any = (0.0, 0.0, 0.0), frame: str = "") -> None:
        servo = self.servo
        self.core.submit(check_twist("/bench", servo.frames, servo.settings, frame, linear, angular, self.clock.now))

    def pose(self, target: np.ndarray) -> None:
        vector = rotation_vector(target[:3, :3])
        angle = float(np.linalg.norm(vector))
        axis = vector / angle if angle > 1e-12 else np.zeros(3)
        quaternion = (*(axis * math.sin(angle / 2)), math.cos(angle / 2))
        self.core.submit(check_pose("/bench", self.servo.frames, "", list(target[:3, 3]), quaternion, self.clock.now))


def cpu_per_cycle(cycles: int, rounds: int) -> tuple[float, float]:
    """(a): median seconds per cycle with the servo streaming a twist, and with position commands on its path.

    The servo-off core is sent, cycle by cycle, the positions the servo-on core commanded in the
    same round, so both arms move alike and the simulator does the same work: the difference is
    the servo's (its input check, its cycle) against the position command's.
    """
    on, off = Bench(), Bench()
    off.core.servo = None
    timings: dict[str, list[float]] = {"on": [], "off": []}
    path: list[list[float]] = []
    for _ in range(rounds):
        path.clear()

        def twist(b: Bench = on) -> None:
            path.append([float(v) for v in b.backend.last])  # the previous cycle's command (the off run's input)
            b.twist((0.0, 0.02 * math.sin(b.clock.now * 1e-9), 0.0))

        start = time.perf_counter()
        on.cycle(cycles, twist)
        timings["on"].append((time.perf_counter() - start) / cycles)
        replay = iter(path[1:] + [path[-1]])

        def position(b: Bench = off, replay: Iterator[list[float]] = replay) -> None:
            b.core.submit(b.validator.from_array(CommandMode.POSITION, next(replay), "/bench", b.clock.now))

        start = time.perf_counter()
        off.cycle(cycles, position)
        timings["off"].append((time.perf_counter() - start) / cycles)
    return _common.median(timings["on"]), _common.median(timings["off"])


def latency(seconds: float, immediate: bool) -> np.ndarray:
    """(b): seconds from submit to the backend write carrying it, the loop on its thread at 500 Hz."""
    bench = Bench(clock=time.monotonic_ns)
    bench.core.settings = CoreSettings(command_timeout=0.0, immediate_commands=immediate)
    bench.core.start(500.0)
    samples: list[float] = []
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            time.sleep(0.02)  # a 50 Hz stream
            before = len(bench.writes)
            sent = bench.clock.now = time.monotonic_ns()
            bench.twist((0.0, 0.01, 0.0))
            deadline = time.monotonic() + 0.1
            while len(bench.writes) == before and time.monotonic() < deadline:
                time.sleep(0.0001)
            if len(bench.writes) > before:
                samples.append((bench.writes[before] - sent) * 1e-9)
    finally:
        bench.core.stop(0.5)
    return np.array(samples)


def circle(backend: str) -> tuple[float, float]:
    """(c): the largest and the RMS distance (m) of the tool point from the commanded circle."""
    bench = Bench(backend)
    bench.cycle(250)
    start = bench.tool()
    radius, turn = 0.05, 4.0
    centre = start[:3, 3] - radius * start[:3, 0]  # the tool sits on the circle at angle 0
    u, v = start[:3, 0], start[:3, 1]
    errors: list[float] = []
    for k in range(int(turn * 500) + 250):
        t = k * PERIOD_NS * 1e-9
        if k % 10 == 0:  # 50 Hz pose stream
            angle = 2 * math.pi * min(t / turn, 1.0)
            target = start.copy()
            target[:3, 3] = centre + radius * (math.cos(angle) * u + math.sin(angle) * v)
            bench.pose(target)
        bench.cycle(1)
        if t > 0.2:
            p = bench.tool()[:3, 3] - centre
            in_plane = p - (p @ start[:3, 2]) * start[:3, 2]
            errors.append(math.hypot(float(np.linalg.norm(in_plane)) - radius, float(p @ start[:3, 2])))
    values = np.array(errors)
    return float(values.max()), float(np.sqrt(np.mean(values**2)))


def drift(hold_seconds: float) -> tuple[float, float, float]:
    """(d) on MuJoCo: angular twist tool-point deviation, linear twist orientation deviation, held pose error."""
    bench = Bench("mujoco")
    bench.cycle(250)
    start = bench.tool()
    worst = [0.0, 0.0, 0.0]

    def angular() -> None:
        bench.twist((0.0, 0.0, 0.0), (0.0, 0.0, 0.3), frame="tcp")
        worst[0] = max(worst[0], float(np.linalg.norm(bench.tool()[:3, 3] - start[:3, 3])))

    bench.cycle(5000, angular)
    bench.cycle(250)
    start = bench.tool()

    def linear() -> None:
        bench.twist((0.0, 0.03, 0.0))
        worst[1] = max(worst[1], float(np.linalg.norm(rotation_vector(bench.tool()[:3, :3] @ start[:3, :3].T))))

    bench.cycle(1500, linear)
    bench.cycle(250)
    target = bench.tool().copy()
    target[:3, 3] += (0.02, 0.0, 0.02)
    bench.pose(target)
    bench.cycle(1000)

    def hold() -> None:
        worst[2] = max(worst[2], float(np.linalg.norm(pose_error(target, bench.tool())[:3])))

    bench.cycle(int(hold_seconds * 500), hold)
    return worst[0], worst[1], worst[2]


def into_singularity() -> tuple[float, float, str]:
    """(d) on MuJoCo, from :data:`SHOULDER`: the tool point's largest deviation (m), the turn (rad), the final state."""
    bench = Bench("mujoco", initial=SHOULDER)
    bench.cycle(250)
    start = bench.tool()
    worst, count = [0.0], [0]

    def angular() -> None:
        if count[0] % 5 == 0:  # 100 Hz
            bench.twist((0.0, 0.0, 0.0), (0.0, 0.0, 0.3), frame="tcp")
        count[0] += 1
        worst[0] = max(worst[0], float(np.linalg.norm(bench.tool()[:3, 3] - start[:3, 3])))

    bench.cycle(2000, angular)
    turned = float(np.linalg.norm(rotation_vector(bench.tool()[:3, :3] @ start[:3, :3].T)))
    status = bench.servo.status
    return worst[0], turned, f"{status.state}: {status.reason.split(' (')[0]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer cycles, a smoke test")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    _streams.add_slow_host_option(parser, "--demo-cartesian")
    args = parser.parse_args(argv)
    if args.slow_host is not None:
        return _streams.slow_host_main(
            "--demo-cartesian", args.slow_host, SLOW_TITLE, SLOW_SECTION, write=not args.no_docs
        )
    load_start = _common.load_average()
    cycles, rounds = (200, 3) if args.quick else (1000, 7)
    on, off = cpu_per_cycle(cycles, rounds)
    kernel = "one compiled call per cycle" if Bench().servo.compiled else "numpy path"
    lat = {flag: latency(2.0 if args.quick else 10.0, flag) for flag in (True, False)}
    circles = {name: circle(name) for name in ("sim", "mujoco")}
    angular, linear, held = drift(10.0 if args.quick else 60.0)
    singular, turned, halted = into_singularity()
    period = PERIOD_NS * 1e-9
    rows = [
        [
            "immediate_commands true" if flag else "immediate_commands false",
            len(values),
            _common.format_seconds(float(np.percentile(values, 50))),
            _common.format_seconds(float(np.percentile(values, 99))),
            f"{np.percentile(values, 99) / period:.2f}",
        ]
        for flag, values in lat.items()
    ]
    p99 = float(np.percentile(lat[True], 99))
    report = "\n\n".join(
        [
            f"## Cartesian servo (`bench_servo`)\n\n{_common.timestamp()}; {_common.machine_summary(('numpy',))}; "
            f"load average {load_start} at the start, {_common.load_average()} at the end"
            + ("; **--quick**" if args.quick else ""),
            "bb_arm to `tcp`, loop at 500 Hz. What each figure is: `benchmarks/bench_servo.py`'s docstring.",
            "### CPU per cycle (simulator, whole core cycle)\n\n"
            + _common.markdown_table(
                ["", "median per cycle"],
                [
                    [f"servo on (twist stream; {kernel})", _common.format_seconds(on)],
                    ["servo off (position stream along the same path)", _common.format_seconds(off)],
                ],
            )
            + f"\n\nVerdict: the servo adds {100 * (on / off - 1):.0f} % CPU per cycle (target at most 30 %): "
            + ("**met**." if on <= 1.3 * off else "**missed**."),
            "### Twist → backend write (in the driver, loop on its thread)\n\n"
            + _common.markdown_table(["", "samples", "p50", "p99", "p99 / period"], rows)
            + f"\n\nVerdict (immediate_commands true, the default): p99 is {p99 / period:.2f} control periods "
            + "(target at most 2): "
            + ("**met**." if p99 <= 2 * period else "**missed**."),
            "### Circle (5 cm, 4 s, pose commands at 50 Hz): distance of the measured tool point from it\n\n"
            + _common.markdown_table(
                ["backend", "max", "RMS"],
                [[name, f"{m * 1000:.3f} mm", f"{r * 1000:.3f} mm"] for name, (m, r) in circles.items()],
            ),
            "### Drift (MuJoCo)\n\n"
            + _common.markdown_table(
                ["motion", "largest deviation", "spec"],
                [
                    ["angular twist about the tool, 10 s: tool point", f"{angular * 1000:.3f} mm", "< 1 mm"],
                    ["linear twist, 3 s: orientation", f"{linear * 1000:.3f} mrad", "< 1 mrad"],
                    [
                        f"held pose, {10 if args.quick else 60} s: position",
                        f"{held * 1e6:.2f} µm",
                        "< 100 µm",
                    ],
                    [
                        "angular twist about the tool into the shoulder singularity, until halted "
                        f"(turned {math.degrees(turned):.0f}°, {halted}): tool point",
                        f"{singular * 1000:.3f} mm",
                        "< 1 mm",
                    ],
                ],
            ),
        ]
    )
    print(report)
    if not args.no_docs:
        _common.rewrite_doc_section(SECTION, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
