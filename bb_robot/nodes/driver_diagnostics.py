"""The driver's ``/diagnostics``: the control loop, the backend, arming, the joints and collision checking."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from bb_robot.driver.backends.base import HealthLevel
from bb_robot.driver.core import DriverCore
from bb_robot.driver.guard.collision_guard import CollisionGuard
from bb_robot.driver.timing.skips import SkipWindow, rate_advice

_LEVELS = {HealthLevel.OK: DiagnosticStatus.OK, HealthLevel.WARN: DiagnosticStatus.WARN}


@dataclass(frozen=True)
class DriverView:
    """What the diagnostics say about a configured driver.

    Attributes:
        core: Its core.
        robot: The robot's name (the statuses' hardware id).
        joints: The driven joints.
        rate: The ``rate`` parameter (Hz).
        executor: How the executor thread is scheduled.
        publishing: How joint_states are published.
        skips: The node's skipped-cycle window (kept between two diagnostics).
        restarts: How often this driver was respawned (0: its first start).
        collision: Its collision guard, if it checks collisions.
        stamp_gaps: The largest gaps between the stamps of successive published joint_states (s):
            since the last diagnostics, and since activation (``None``: not publishing).
    """

    core: DriverCore
    robot: str
    joints: Sequence[str]
    rate: float
    executor: str
    publishing: str
    skips: SkipWindow = field(default_factory=SkipWindow)
    restarts: int = 0
    collision: CollisionGuard | None = None
    stamp_gaps: tuple[float, float] | None = None


def _status(
    node: str, name: str, level: bytes, message: str, values: Mapping[str, object], hardware: str = ""
) -> DiagnosticStatus:
    item = DiagnosticStatus(level=level, name=f"{node}: {name}", message=message, hardware_id=hardware)
    item.values = [KeyValue(key=str(k), value=str(v)) for k, v in values.items()]
    return item


def unconfigured_status(node: str, state: str, backend_error: str | None) -> list[DiagnosticStatus]:
    """The one status of a driver that is not configured (``backend_error``: its backend cannot be loaded)."""
    message = backend_error or f"{state}: not configured"
    level = DiagnosticStatus.ERROR if backend_error else DiagnosticStatus.WARN
    return [_status(node, "driver", level, message, {"lifecycle state": state})]


def driver_statuses(node: str, state: str, backend: str, view: DriverView) -> list[DiagnosticStatus]:
    """The statuses of a configured driver.

    Args:
        node: The node's name (each status's name starts with it).
        state: The lifecycle state.
        backend: The ``backend`` parameter.
        view: The driver.

    Returns:
        ``control loop``, ``backend``, ``arming`` and ``joints``; ``collision`` with a collision guard
        (the nearest checked pair and its distance, the speed scale of streamed commands).
    """
    ok, warn, error = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR
    core, hardware = view.core, view.robot
    snapshot = core.snapshot
    loop: dict[str, object] = {
        "lifecycle state": state,
        "rate (Hz)": f"{view.rate:g}",
        "scheduling": core.scheduling,
        "executor thread": view.executor,
        "joint_states": view.publishing,
        "commands": "written at once" if core.settings.immediate_commands else "written at the next cycle",
    }
    loop_level, loop_message = ok, "running" if core.running else "stopped"
    stats = core.loop_stats()
    if stats is not None and stats.cycles:
        figures = view.skips.add(time.monotonic(), stats.cycles, stats.skipped, view.rate)
        loop.update(
            {
                "cycles": stats.cycles,
                "skipped cycles": stats.skipped,
                "skipped share": f"{100 * figures.share:.3g} %",
                f"skipped in the last {view.skips.window:g} s": (
                    f"{figures.recent_skipped} ({100 * figures.recent_share:.3g} %)"
                ),
                "measured rate (Hz)": f"{1.0 / stats.period_mean:.1f}" if stats.period_mean > 0 else "-",
                "period jitter std (ms)": f"{stats.period_std * 1e3:.3f}",
                "period max deviation (ms)": f"{stats.period_max_deviation * 1e3:.3f}",
                "lag last (ms)": f"{stats.lag_last * 1e3:.3f}",
                "lag p99 (ms)": f"{stats.lag_p99 * 1e3:.3f}",
                "lag max (ms)": f"{stats.lag_max * 1e3:.3f}",
                "cycle time mean (ms)": f"{stats.step_mean * 1e3:.3f}",
                "cycle time max (ms)": f"{stats.step_max * 1e3:.3f}",
            }
        )
        if figures.skipped:
            loop_message = f"running; {figures.describe()}"
        if figures.warn:  # more than 1 % of the recent cycles: the machine cannot keep the rate
            loop_level = warn
    if view.stamp_gaps is not None:
        recent, total = view.stamp_gaps
        loop["joint_states stamp gap max, last period (ms)"] = f"{recent * 1e3:.1f}"
        loop["joint_states stamp gap max, since activation (ms)"] = f"{total * 1e3:.1f}"
    latency = core.command_latency()
    if latency is not None:
        loop["command latency p50 (ms)"] = f"{latency[0] * 1e3:.3f}"
        loop["command latency p99 (ms)"] = f"{latency[1] * 1e3:.3f}"
    age = core.last_command_age()
    loop["command age (s)"] = f"{age:.3f}" if age is not None else "no command yet"
    loop["command timeout (s)"] = f"{core.settings.command_timeout:g}"
    health = core.health
    backend_level = _LEVELS.get(health.level, error) if health.connected else error
    backend_values = {"backend": backend, "connected": health.connected, **health.values}
    arm_level = error if snapshot.arm_state.value == "error" else ok
    arm_message = snapshot.arm_state.value
    arming = {"state": snapshot.arm_state.value, "reason": snapshot.arm_reason, "backend errors": core.errors}
    arming["restarts"] = view.restarts
    arming["stale events"] = core.stale_watch.events
    if view.restarts:  # respawned: the previous process ended; this one started disarmed
        arm_level = max(arm_level, warn)
        arm_message += f"; respawned {view.restarts} time(s) (the driver process ended; started disarmed)"
    joints_level, joints_message = ok, "every joint reported"
    if not snapshot.all_seen:
        joints_level, joints_message = warn, "waiting for every joint to be reported by the backend"
    if snapshot.stale:
        joints_level, joints_message = warn, f"stale: {', '.join(snapshot.stale)}"
    modes = dict(zip(view.joints, snapshot.modes, strict=False))
    statuses = [
        _status(node, "control loop", loop_level, loop_message, loop, hardware),
        _status(node, "backend", backend_level, health.message, backend_values, hardware),
        _status(node, "arming", arm_level, arm_message, arming, hardware),
        _status(node, "joints", joints_level, joints_message, modes, hardware),
    ]
    if view.collision is not None:
        level, message, values = view.collision.diagnostics(time.monotonic_ns())
        collision_level = {"ok": ok, "warn": warn}.get(level, error)
        statuses.append(_status(node, "collision", collision_level, message, values, hardware))
    return statuses


def judge_rate(core: DriverCore | None, after: float) -> tuple[bool, str | None]:
    """Whether the loop's load can be judged yet (``after`` seconds of cycles), and the advice when
    this machine cannot keep the control rate comfortably (a lower ``rate``; ``None``: it can).

    Args:
        core: The session's core.
        after: Seconds of cycles before the load is judged.

    Returns:
        (judged, advice).
    """
    stats = core.loop_stats() if core is not None else None
    if stats is None or stats.cycles + stats.skipped < after * stats.rate:
        return False, None
    return True, rate_advice(stats.rate, stats.step_mean, stats.skipped / (stats.cycles + stats.skipped))
