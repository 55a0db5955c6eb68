"""What ``bb-robot up`` shows while the robots run: a live view in a terminal (``rich``), else the
same figures as plain lines (CI, a pipe)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bb_robot.bringup.status import GoalProgress, RobotView

if TYPE_CHECKING:
    from rich.console import RenderableType

#: Width of the bar that shows where a joint sits between its limits.
BAR = 20


@dataclass(frozen=True)
class Limits:
    """A joint's position limits (``None``: unlimited)."""

    lower: float | None
    upper: float | None


def limit_bar(value: float, limits: Limits | None, width: int = BAR) -> str:
    """``[----|-----]``: where ``value`` sits between the limits (``unlimited`` without any)."""
    if limits is None or limits.lower is None or limits.upper is None or not limits.upper > limits.lower:
        return "unlimited".center(width + 2)
    fraction = min(max((value - limits.lower) / (limits.upper - limits.lower), 0.0), 1.0)
    index = min(int(round(fraction * (width - 1))), width - 1)
    return "[" + "-" * index + "|" + "-" * (width - 1 - index) + "]"


def _label(namespace: str) -> str:
    return f"/{namespace}" if namespace else "robot"


def _tip(view: RobotView) -> str:
    if view.tip is None:
        return "tip: (no ~/tip_pose yet)"
    x, y, z = view.tip[:3]
    return f"tip in {view.tip_frame or '?'}: x {x:+.3f} y {y:+.3f} z {z:+.3f} m"


def _goal(progress: GoalProgress | None) -> str:
    if progress is None:
        return ""
    if not progress.done:
        state = "sent" if progress.accepted is None else "running"
        error = f", error {' '.join(progress.last_error)}" if progress.last_error else ""
        return f"demo goal {state}: {progress.feedback_count} feedback messages{error}"
    if progress.rejected_reason:
        return f"demo goal: {progress.rejected_reason}"
    return f"demo goal finished: error_code {progress.error_code} {progress.error_string}".rstrip()


def plain_lines(
    elapsed: float,
    views: Mapping[str, RobotView],
    limits: Mapping[str, Limits],
    goals: Mapping[str, GoalProgress] | None = None,
) -> list[str]:
    """The figures of one moment as plain lines (one summary line per robot, one per joint)."""
    lines = []
    for namespace, view in views.items():
        lines.append(
            f"[{elapsed:7.2f} s] {_label(namespace)}: driver {view.lifecycle}, {view.arm_state}; "
            f"/tf {view.tf_rate:.1f} Hz, joint_states {view.joint_state_rate:.1f} Hz; {_tip(view)}"
        )
        for name, position, velocity in _joints(view):
            lines.append(f"    {name:<24} {position:+9.4f} {velocity:+9.4f}/s {limit_bar(position, limits.get(name))}")
        for warning in view.warnings:
            lines.append(f"    warning: {warning}")
        goal = _goal((goals or {}).get(namespace))
        if goal:
            lines.append(f"    {goal}")
    return lines


def _joints(view: RobotView) -> list[tuple[str, float, float]]:
    velocities: Sequence[float] = view.velocities or [math.nan] * len(view.positions)
    return list(zip(view.joint_names, view.positions, velocities, strict=False))


def rich_view(
    elapsed: float,
    views: Mapping[str, RobotView],
    limits: Mapping[str, Limits],
    goals: Mapping[str, GoalProgress] | None = None,
) -> RenderableType:
    """The same figures as a ``rich`` renderable (a table per robot)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[RenderableType] = []
    for namespace, view in views.items():
        table = Table(
            title=f"{_label(namespace)}: driver [bold]{view.lifecycle}[/], {view.arm_state}   "
            f"/tf {view.tf_rate:.1f} Hz   joint_states {view.joint_state_rate:.1f} Hz   ({elapsed:.1f} s)",
            title_justify="left",
        )
        table.add_column("joint")
        table.add_column("position", justify="right")
        table.add_column("velocity", justify="right")
        table.add_column("within limits")
        for name, position, velocity in _joints(view):
            table.add_row(name, f"{position:+.4f}", f"{velocity:+.4f}", limit_bar(position, limits.get(name)))
        parts.append(table)
        parts.append(Text(_tip(view)))
        for warning in view.warnings:
            parts.append(Text(f"warning: {warning}", style="yellow"))
        goal = _goal((goals or {}).get(namespace))
        if goal:
            parts.append(Text(goal, style="cyan"))
    return Group(*parts)
