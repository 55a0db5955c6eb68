"""What `bb-robot up` shows: plain lines and the rich view carry the same figures."""

from __future__ import annotations

from rich.console import Console

from bb_robot.bringup.status import GoalProgress, RobotView
from bb_robot.cli.up_view import Limits, limit_bar, plain_lines, rich_view

VIEW = RobotView(
    namespace="left",
    lifecycle="active",
    arm_state="armed",
    joint_names=("a", "b"),
    positions=(0.5, -1.0),
    velocities=(0.25, 0.0),
    tip=(0.1, -0.2, 0.3, 0.0, 0.0, 0.0, 1.0),
    tip_frame="left/base_link",
    tf_rate=99.5,
    joint_state_rate=100.0,
    warnings=("driver: joint a near its limit",),
)
LIMITS = {"a": Limits(-1.0, 1.0), "b": Limits(None, None)}


def test_limit_bar_marks_where_the_joint_sits() -> None:
    assert limit_bar(-1.0, Limits(-1.0, 1.0), 5) == "[|----]"
    assert limit_bar(1.0, Limits(-1.0, 1.0), 5) == "[----|]"
    assert limit_bar(0.0, Limits(-1.0, 1.0), 5) == "[--|--]"
    assert limit_bar(9.0, Limits(-1.0, 1.0), 5) == "[----|]"  # clamped
    assert "unlimited" in limit_bar(0.0, None, 10)


def test_plain_lines_carry_every_figure() -> None:
    goal = GoalProgress(accepted=True, feedback_count=3, last_error=("+0.010",))
    text = "\n".join(plain_lines(2.5, {"left": VIEW}, LIMITS, {"left": goal}))
    for expected in (
        "/left",
        "driver active, armed",
        "/tf 99.5 Hz",
        "joint_states 100.0 Hz",
        "x +0.100 y -0.200 z +0.300",
        "left/base_link",
        "+0.5000",
        "-1.0000",
        "unlimited",
        "warning: driver: joint a near its limit",
        "3 feedback messages",
    ):
        assert expected in text, expected


def test_the_rich_view_shows_the_same() -> None:
    console = Console(record=True, width=160)
    console.print(rich_view(2.5, {"left": VIEW}, LIMITS, {"left": GoalProgress(done=True, status=4, error_code=0)}))
    text = console.export_text()
    for expected in ("/left", "active", "99.5 Hz", "+0.5000", "x +0.100", "near its limit", "error_code 0"):
        assert expected in text, expected
