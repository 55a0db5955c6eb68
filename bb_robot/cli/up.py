"""``bb-robot up [MODEL]``: bring the whole system up with ROS 2's launch, watch it, run a demo.

Runs ``launch/bringup.launch.py`` through launch's ``LaunchService`` in a child process
(:mod:`bb_robot.cli.up_process`), shows the stages as the system comes up (robot_description
published → driver configured → active → first /tf → armed → move_group ready) with their times, then a live view of the
joints, the tip pose, the /tf and joint_states rates (counted from the messages received here),
the driver's state and its /diagnostics warnings.  ``--demo`` sends a FollowJointTrajectory goal
that moves every joint through half its range; ``--demo-cartesian`` moves the tool along a circle
through the Cartesian servo (:mod:`bb_robot.cli.up_cartesian`); ``--demo-plan`` sends MoveIt's
``move_action`` a pose goal behind a post and judges the motion (:mod:`bb_robot.cli.up_plan`);
``--demo-pick`` picks a cube, carries it over a wall and places it, judged from where the cube
really is (:mod:`bb_robot.cli.up_pick`).
The ROS side is :mod:`bb_robot.nodes.up_client`; this module never imports rclpy.  ``docs/bringup.md`` describes it all.

Exit codes: 0 success (or a clean shutdown on Ctrl-C / SIGTERM / ``--duration``); 1 the input is
bad or the system did not come up (the message names the stage and why) or the demo goal
failed; 2 wrong usage.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import re
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bb_robot.bringup.demo import DemoPoint, demo_points
from bb_robot.bringup.status import GoalProgress, RobotView
from bb_robot.cli import common
from bb_robot.cli.common import EXIT_INPUT, EXIT_OK, UsageError
from bb_robot.cli.up_cartesian import CartesianDemo, servo_chain
from bb_robot.cli.up_demo_setup import PICK_CONFIG, PLAN_CONFIG, demo_inputs, demo_setup, moveit_msgs_built
from bb_robot.cli.up_inputs import BringupPlan, UpError, plan_bringup
from bb_robot.cli.up_pick import PickDemo, PickSetup
from bb_robot.cli.up_plan import PlanDemo, PlanSetup
from bb_robot.cli.up_process import BringupProcess, DriverWatch
from bb_robot.cli.up_view import Limits, plain_lines, rich_view
from bb_robot.driver.backends.base import builtin_backends
from bb_robot.errors import BbRobotError
from bb_robot.resources import share_directories

if TYPE_CHECKING:
    from bb_robot.nodes.up_client import UpClient

#: Seconds between two plain status blocks without a terminal.
PLAIN_PERIOD = 1.0
#: The view node's line saying where it serves (its own stdout, in the launch output).
_SERVED = re.compile(r"\] Foxglove: open (ws://\S+) ")
#: How long the demo goal may take beyond its own duration before it counts as failed.
GOAL_SLACK = 20.0
#: How long each stage may take by default (s; ``--timeout``).  Generous, for a slow and busy host
#: (issue 33): here, at ``scripts/slow-host --cpu 40``, robot_description came 6 s after the start
#: and the driver answered "active" 5 to 11 s after that (its process start, configure and
#: activation: one timer callback, during which it answers no lifecycle query); a busy 2-core CI
#: host took over 10 s.  60 s is five times the slowest seen.  A stage the driver reports as
#: failed (its autostart's configure or activation) ends at once, so only a hang waits this long.
DEFAULT_TIMEOUT = 60.0
#: The driver's log lines that end a stage at once: ``(stage, text after the logger's name)``.
_DRIVER_FAILED = {
    "driver configured": "autostart: configure failed",
    "driver active": "autostart: activate failed",
}
#: The move_group node's line once it can plan (its logger name, then this), and the line saying it cannot.
_PLANNING_READY = re.compile(r"\]: planning for robot '([^']*)' ready in ([0-9.]+) s; groups: (.*)$", re.MULTILINE)
_PLANNING_FAILED = ("cannot plan for robot_description", "process has died")
#: Fast DDS profile in bb_robot's config/ for quick discovery at start-up.
DISCOVERY_PROFILE = "fastdds_discovery.xml"
#: GoalStatus.STATUS_SUCCEEDED.
SUCCEEDED = 4


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "up",
        help="bring a robot up (description node, driver, move_group, with ROS 2 launch), watch it, run a demo",
        description="Start launch/bringup.launch.py (the description node, the driver, the move_group node) "
        "through ROS 2's "
        "launch system, show the stages as the system comes up, then a live view of the joints. "
        "Ctrl-C or SIGTERM shuts everything down.",
    )
    parser.add_argument(
        "file",
        nargs="?",
        metavar="MODEL",
        help="URDF, xacro, SDF model or SDF world (default: the parameter file's model, bb_arm)",
    )
    parser.add_argument("--scope", metavar="S", help="SDF: '::'-separated scoped name of the robot model")
    parser.add_argument(
        "--resource-path",
        action="append",
        default=[],
        metavar="DIR",
        help="SDF: a directory searched for <include> URIs (repeatable); the nodes may load files from it",
    )
    parser.add_argument(
        "--config",
        metavar="YAML",
        help="parameter file of the nodes: a path or a name in bb_robot's config/ (default: bb_arm.yaml)",
    )
    parser.add_argument(
        "--backend",
        metavar="NAME",
        help=f"what moves the joints: {', '.join(builtin_backends())} (default: the parameter file's, else sim)",
    )
    demos = parser.add_mutually_exclusive_group()
    demos.add_argument(
        "--demo",
        action="store_true",
        help="arm the driver and move every joint through half its range with a FollowJointTrajectory goal; "
        "without --duration, exit when it ends (0 succeeded, 1 failed)",
    )
    demos.add_argument(
        "--demo-cartesian",
        action="store_true",
        help="arm the driver, move the servo's chain to a ready pose, then draw a 5 cm circle with the tool "
        "through ~/pose_commands; succeeds when the tool stays within 2 mm of it (exit as --demo)",
    )
    demos.add_argument(
        "--demo-plan",
        action="store_true",
        help=f"the arm on a table with a post ({PLAN_CONFIG} unless --config): arm the driver, send MoveIt's "
        "move_action a pose goal behind the post and execute it; succeeds when the tool reaches it within 1 mm and "
        "1 mrad and the arm never came within 1 cm of the post (exit as --demo)",
    )
    demos.add_argument(
        "--demo-pick",
        action="store_true",
        help=f"the arm, a cube and a wall on a table ({PICK_CONFIG} unless --config; MuJoCo unless --backend): "
        "pick the cube, carry it over the wall and place it on the other side through move_action, "
        "compute_cartesian_path and the gripper action; succeeds when the cube ends within 1 cm of the place spot "
        "standing on a face, slipped at most 5 mm and 5° in the hand and never touched the wall (docs/pick.md)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="--demo-pick: put the cube at random (seed S) in the pick area, its place spot mirrored across the wall",
    )
    parser.add_argument(
        "--no-planning",
        action="store_true",
        help="leave out the move_group node (MoveIt's interface on bb_robot's planner; docs/nodes/move_group.md)",
    )
    parser.add_argument(
        "--respawn",
        action="store_true",
        help="restart a description node or driver that ends (the driver comes back disarmed; docs/safety.md)",
    )
    parser.add_argument(
        "--view",
        action="store_true",
        help="serve the running robot to Foxglove or Lichtblick (the view node; docs/view.md)",
    )
    parser.add_argument("--port", type=int, default=8765, metavar="N", help="--view: the server's port (default 8765)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        metavar="ADDR",
        help="--view: the address to listen on (default 127.0.0.1; any other shares the robot on the network, "
        "unauthenticated)",
    )
    parser.add_argument(
        "--record", metavar="FILE", help="record the robot's topics to this MCAP file (must not exist yet)"
    )
    parser.add_argument(
        "--bus-port", metavar="PATH", help="the servo bus's port (a parameter file with a bus section; docs/buses.md)"
    )
    parser.add_argument("--duration", type=float, metavar="S", help="shut down S seconds after the system is up")
    parser.add_argument("--picture", metavar="FILE", help="draw the robot at its final pose (PNG, SVG, PDF)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"seconds each stage may take (default {DEFAULT_TIMEOUT:g}: enough for a slow, busy host)",
    )
    parser.set_defaults(handler=run)


# ------------------------------------------------------------------------------ the run
@dataclass
class _Run:
    plan: BringupPlan
    process: BringupProcess
    client: UpClient
    stop: threading.Event
    start: float
    drivers: dict[str, DriverWatch] = field(default_factory=dict)
    #: ``--demo-pick``'s verdict: printed again as the last line.
    pick_line: str = ""

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def views(self) -> dict[str, RobotView]:
        views = self.client.snapshot()
        for namespace, view in views.items():
            watch = self.drivers.get(namespace)
            if watch is not None:
                view.warnings = (*watch.warnings(), *view.warnings)
        return views

    def watch_drivers(self) -> None:
        """Follow each robot's driver process; say when one is lost or restarted."""
        pids = self.process.node_pids("driver")
        for namespace in self.plan.robots:
            watch = self.drivers.setdefault(namespace, DriverWatch())
            event = watch.update(pids.get(namespace.strip("/")))
            if event:
                self.say(f"{'/' + namespace + ' ' if namespace else ''}{event}")

    def driver_lost(self) -> bool:
        """Whether a driver process ended since it was seen (even if a respawned one runs now)."""
        return any(watch.losses for watch in self.drivers.values())

    def say(self, text: str) -> None:
        print(f"  [{self.elapsed():6.2f} s] {text}", flush=True)


class StageFailed(BbRobotError):
    """A stage did not complete; the message says which and why."""


@contextmanager
def _signals_to(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set ``stop`` (a clean shutdown follows) instead of killing the command."""
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, lambda *_: stop.set())
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _wait(
    run: _Run, done: Callable[[], bool], timeout: float, stage: str, failed: Callable[[], str | None] = lambda: None
) -> bool:
    """Poll until ``done()`` (True), a signal or the timeout (False). Raises :class:`StageFailed`
    when the launch ends first, or when ``failed()`` says why the stage cannot complete."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return True
        if run.stop.is_set():
            return False
        run.watch_drivers()
        if not run.process.running():
            errors = "; ".join(run.process.errors()) or "no error in its output"
            raise StageFailed(
                f"{stage}: the launch ended (exit status {run.process.process.returncode}) before it: {errors}"
            )
        reason = failed()
        if reason:
            raise StageFailed(_explain(run, reason))
        run.process.watch()
        time.sleep(0.05)
    return done()


def _explain(run: _Run, what: str) -> str:
    errors = run.process.errors(3)
    return what + (f" (launch output: {' | '.join(e.strip() for e in errors)})" if errors else "")


def _stage(
    run: _Run,
    done: Callable[[], bool],
    timeout: float,
    stage: str,
    why: Callable[[], str],
    failed: Callable[[], str | None] = lambda: None,
) -> bool:
    """Wait for one stage: True when done, False when stopped by a signal; raises
    :class:`StageFailed` with ``why()`` (and the launch's last errors) when it times out, or with
    ``failed()``'s reason as soon as it gives one."""
    if _wait(run, done, timeout, stage, failed):
        return True
    if run.stop.is_set():
        return False
    raise StageFailed(_explain(run, why()))


def _bring_up(run: _Run, timeout: float, arm: bool, view: bool) -> bool:
    """Wait for each stage of every robot, and for the view node when ``view``; False when stopped by a signal."""
    if not all(_bring_up_robot(run, namespace, timeout, arm) for namespace in run.plan.robots):
        return False
    if run.plan.launch_arguments.get("planning") == "true" and not all(
        _planning_stage(run, namespace, timeout) for namespace in run.plan.robots
    ):
        return False
    return not view or _view_stage(run, timeout)


def _planning_stage(run: _Run, namespace: str, timeout: float) -> bool:
    """Wait until the move_group node of the robot in ``namespace`` says it can plan (it has read
    robot_description and set up the scene), or that it cannot; False when stopped by a signal.

    A robot the node cannot plan for (a gripper alone has no chain to plan along) is a warning, not
    a failed bringup: the node is an extra beside the description node and the driver."""
    logger = ".".join([*namespace.split("/"), "move_group"]) if namespace else "move_group"
    label = f"/{namespace} " if namespace else ""

    def ready() -> re.Match[str] | None:
        return next((m for m in _PLANNING_READY.finditer(run.process.log()) if f"[{logger}" in _line(m)), None)

    def cannot() -> str | None:
        lines = [line for line in run.process.log().splitlines() if f"[{logger}" in line or "[move_group-" in line]
        return next((line.strip() for line in lines if any(text in line for text in _PLANNING_FAILED)), None)

    if not _stage(
        run,
        lambda: ready() is not None or cannot() is not None,
        timeout,
        "move_group ready",
        lambda: (
            f"the move_group node {label}did not say whether it can plan after {timeout:g} s "
            "(bb-robot up --no-planning leaves it out)"
        ),
    ):
        return False
    found = ready()
    if found is None:
        common.warn(
            f"{label}move_group cannot plan for this robot, the rest runs (--no-planning leaves it out): {cannot()}"
        )
        return True
    run.say(f"{label}move_group ready: groups {found.group(3).strip()} (its set-up {float(found.group(2)):.2f} s)")
    return True


def _line(match: re.Match[str]) -> str:
    """The whole output line a match is in."""
    text = match.string
    return text[text.rfind("\n", 0, match.start()) + 1 : match.end()]


def _view_stage(run: _Run, timeout: float) -> bool:
    """Wait until the view node (``--view``, ``--record``) takes /tf and the robot's joint_states.

    The view subscribes to the topics it finds in the ROS graph, each time it looks (once a
    second by default); on a busy machine that can take seconds, and a demo started before would
    be missing from the recording and from a Foxglove client.  /tf appears in the graph as soon
    as the description node starts, joint_states only once the driver is configured, so both are
    waited for.  The view shows the joint_states of its own namespace: with several robots (each
    in a namespace of its own) only /tf is waited for.
    """
    topics = ["/tf", *(["/joint_states"] if run.plan.robots == ("",) else [])]
    if not all(_view_takes(run, topic, timeout) for topic in topics):
        return False
    run.say(f"view node takes {' and '.join(topics)}")
    if run.plan.launch_arguments.get("view_port") == "0":
        served = _SERVED.search(run.process.log())
        where = f"open {served.group(1)}" if served else f"its address is in the launch output {run.process.log_path}"
        run.say(f"view: {where} in Foxglove or Lichtblick")
    return True


def _view_takes(run: _Run, topic: str, timeout: float) -> bool:
    """Wait until the view node subscribes to ``topic``; False when stopped by a signal."""
    return _stage(
        run,
        lambda: run.client.subscribed("view", topic),
        timeout,
        "view",
        lambda: f"the view node (/view) took no {topic} after {timeout:g} s",
    )


def _driver_failed(
    run: _Run, logger: str, stage: str, why: Callable[[float], str], started: float
) -> Callable[[], str | None]:
    """Why ``stage`` cannot complete, as soon as the driver (logger name ``logger``: its namespace and
    name, dotted) says so in the launch output (``None`` until then, and for a stage it does not report)."""
    line = _DRIVER_FAILED.get(stage)

    def failed() -> str | None:
        if line is None or f"[{logger}]: {line}" not in run.process.log():
            return None
        return f"{why(time.monotonic() - started)}: {line}"

    return failed


def _bring_up_robot(run: _Run, namespace: str, timeout: float, arm: bool) -> bool:
    """The stages of the robot in ``namespace``; False when stopped by a signal."""
    robot = run.plan.robot
    ns = f"/{namespace}" if namespace else ""
    label = f"{ns} " if ns else ""
    driver = f"{ns}/driver"

    def view() -> RobotView:
        return run.views()[namespace]

    # (stage, done, why it failed after so many seconds, what to print when done)
    stages: tuple[tuple[str, Callable[[], bool], Callable[[float], str], str], ...] = (
        (
            "robot_description",
            lambda: view().description_at is not None,
            lambda seconds: f"no robot_description on {ns}/robot_description after {seconds:.0f} s",
            f"robot_description published: '{robot.name}', {len(robot.links)} links, {len(robot.joints)} joints",
        ),
        (
            "driver configured",
            lambda: view().configured_at is not None,
            lambda seconds: f"driver {driver} still {view().lifecycle} after {seconds:.0f} s, not configured",
            "driver configured",
        ),
        (
            "driver active",
            lambda: view().active_at is not None,
            lambda seconds: f"driver {driver} {view().lifecycle} after {seconds:.0f} s, not active",
            "driver active",
        ),
        (
            "first /tf",
            lambda: view().first_tf_at is not None,
            lambda seconds: (
                f"no /tf of {robot.name} after {seconds:.0f} s: the description node gets no {ns}/joint_states?"
            ),
            "first /tf received",
        ),
    )
    logger = ".".join([*namespace.split("/"), "driver"]) if namespace else "driver"
    for stage, done, why, done_text in stages:
        failed = _driver_failed(run, logger, stage, why, time.monotonic())
        if not _stage(run, done, timeout, stage, functools.partial(why, timeout), failed):
            return False
        run.say(label + done_text)
    if arm and view().arm_state != "armed":
        ok, message = run.client.arm(namespace, timeout)
        if not ok:
            raise StageFailed(f"driver {driver} did not arm: {message or 'refused'}")
        if not _stage(
            run,
            lambda: view().arm_state == "armed",
            timeout,
            "driver armed",
            lambda: f"driver {driver} {view().arm_state} after {timeout:g} s, not armed",
        ):
            return False
    if view().arm_state == "armed":
        run.say(f"{label}driver armed")
    else:
        run.say(f"{label}driver {view().arm_state} (--demo arms it; or call {driver}/arm)")
    return True


def _demo_goal(run: _Run, namespace: str) -> GoalProgress:
    plan = run.plan
    view = run.views()[namespace]
    current = dict(zip(view.joint_names, view.positions, strict=False))
    joints = [joint for joint in plan.demo_joints if joint.name in current]
    points: list[DemoPoint] = demo_points(joints, current)
    return run.client.send_goal(namespace, [j.name for j in joints], points)


def _show(run: _Run, goals: dict[str, GoalProgress], until: Callable[[], bool]) -> None:
    """The live view (rich in a terminal, plain lines otherwise) until ``until()`` or a signal."""
    limits = {
        joint.name: Limits(joint.limits.lower, joint.limits.upper)
        for joint in run.plan.robot.joints_in_order()
        if joint.limits is not None and joint.type != "continuous"
    }
    if sys.stdout.isatty():
        from rich.live import Live

        with Live(rich_view(run.elapsed(), run.views(), limits, goals), refresh_per_second=4) as live:
            while not until() and not run.stop.is_set() and run.process.running():
                run.process.watch()
                live.update(rich_view(run.elapsed(), run.views(), limits, goals))
                time.sleep(0.25)
        return
    next_print = 0.0
    while not until() and not run.stop.is_set() and run.process.running():
        run.process.watch()
        if time.monotonic() >= next_print:
            print("\n".join(plain_lines(run.elapsed(), run.views(), limits, goals)), flush=True)
            next_print = time.monotonic() + PLAIN_PERIOD
        time.sleep(0.05)
    print("\n".join(plain_lines(run.elapsed(), run.views(), limits, goals)), flush=True)


def _operate(run: _Run, args: argparse.Namespace, setup: PlanSetup | PickSetup | None = None) -> int:
    """After the system is up: demo, live view, until the end; returns the exit code."""
    up_at = time.monotonic()
    goals: dict[str, GoalProgress] = {}
    if args.demo:
        for namespace in run.plan.robots:
            goals[namespace] = _demo_goal(run, namespace)
            run.say(f"{'/' + namespace + ' ' if namespace else ''}demo goal sent (FollowJointTrajectory)")
    cartesian: dict[str, CartesianDemo] = {}
    if args.demo_cartesian:
        for namespace in run.plan.robots:
            cartesian[namespace] = CartesianDemo(run.plan, run.client, namespace, run.say, run.stop).start()
    threads: dict[str, CartesianDemo | PlanDemo | PickDemo] = dict(cartesian)
    if isinstance(setup, PlanSetup):
        threads = {ns: PlanDemo(setup, run.client, ns, run.say, run.stop).start() for ns in run.plan.robots}
    elif isinstance(setup, PickSetup):
        threads = {"": PickDemo(setup, run.client, run.say, run.stop).start()}
    goal_deadline = time.monotonic() + run.plan.demo_time + GOAL_SLACK

    def demo_over() -> bool:
        if threads:
            return all(demo.outcome.done for demo in threads.values())
        return all(goal.done for goal in goals.values()) or time.monotonic() > goal_deadline

    def finished() -> bool:
        run.watch_drivers()
        if goals and run.driver_lost():
            return True  # the goals died with the driver: no result will come
        demos = bool(goals or threads)
        if args.duration is not None:
            return time.monotonic() - up_at >= args.duration and (not demos or demo_over())
        return demos and demo_over()

    _show(run, goals, finished)
    if not run.process.running():
        raise StageFailed(_explain(run, f"the launch ended (exit status {run.process.process.returncode})"))
    code = EXIT_OK
    for namespace, goal in goals.items():
        label = f"/{namespace} " if namespace else ""
        if not goal.done and run.driver_lost():
            run.say(f"{label}demo goal failed: driver lost (its process ended while the goal ran)")
            code = EXIT_INPUT
        elif not goal.done:
            if run.stop.is_set():
                run.say(f"{label}demo interrupted")
                continue
            run.say(f"{label}demo goal failed: no result within {run.plan.demo_time + GOAL_SLACK:.0f} s")
            code = EXIT_INPUT
        elif goal.rejected_reason or goal.status != SUCCEEDED or goal.error_code != 0:
            reason = goal.rejected_reason or f"error_code {goal.error_code} {goal.error_string}".strip()
            run.say(f"{label}demo goal failed: {reason} (status {goal.status})")
            code = EXIT_INPUT
        else:
            run.say(f"{label}demo goal succeeded ({goal.feedback_count} feedback messages)")
    for namespace, demo in threads.items():
        label = f"/{namespace} " if namespace else ""
        outcome = demo.outcome
        name = {CartesianDemo: "cartesian demo", PlanDemo: "plan demo", PickDemo: "pick demo"}[type(demo)]
        if isinstance(demo, PickDemo):
            run.pick_line = demo.result_line or outcome.message
        if outcome.done and outcome.ok:
            run.say(f"{label}{name} succeeded: {outcome.message}")
        elif not outcome.done and run.stop.is_set():
            run.say(f"{label}{name} interrupted ({outcome.phase})")
        else:
            run.say(f"{label}{name} failed ({outcome.phase}): {outcome.message or 'driver lost'}")
            code = EXIT_INPUT
    return code


def _picture(run: _Run, path: str) -> None:
    from bb_robot.bringup.picture import draw_robot

    namespace = run.plan.robots[0]
    view = run.views()[namespace]
    positions = dict(zip(view.joint_names, view.positions, strict=False))
    written = draw_robot(run.plan.robot, positions, path, run.plan.tip)
    print(f"picture of the final pose: {written}", flush=True)


def _check_launch_installed() -> None:
    if importlib.util.find_spec("launch_ros") is None or importlib.util.find_spec("launch.launch_service") is None:
        raise UpError(
            "ROS 2's launch system (launch, launch_ros) is not installed: run scripts/setup with the pinned "
            "archives in ../shared/third_party/ros2/ beside the repository (docs/bringup.md), or source a "
            "ROS 2 install"
        )


def run(args: argparse.Namespace) -> int:
    """Bring the system up, watch it, shut it down; returns the exit code."""
    if args.duration is not None and not args.duration >= 0:
        raise UsageError(f"--duration must be a number of seconds >= 0, got {args.duration}")
    if not args.timeout > 0:
        raise UsageError(f"--timeout must be positive, got {args.timeout}")
    if args.seed is not None and not args.demo_pick:
        raise UsageError("--seed goes with --demo-pick")
    environment()
    with tempfile.TemporaryDirectory(prefix="bb_robot_pick_") as directory:
        return _run(args, Path(directory))


def _run(args: argparse.Namespace, directory: Path) -> int:
    config, paths = demo_inputs(args, directory)
    plan = plan_bringup(args.file, config=config, scope=args.scope, resource_paths=paths, backend=args.backend)
    if args.demo:
        demo_points(plan.demo_joints, {})  # DemoError (exit 1) before anything starts if no demo fits
    if args.demo_cartesian:
        servo_chain(plan)  # UpError (exit 1) before anything starts if the servo is off
    setup = demo_setup(plan, args)
    _check_launch_installed()
    print(f"bb-robot up: {plan.summary}", flush=True)
    _add_view(plan.launch_arguments, args)
    if args.respawn:
        plan.launch_arguments["respawn"] = "true"
    if args.bus_port:
        if not plan.config.bus:
            raise UpError(f"--bus-port: {plan.config.path} has no /**/bus section (docs/buses.md)")
        plan.launch_arguments["bus_port"] = os.path.abspath(args.bus_port)
    plan.launch_arguments["planning"] = "false" if args.no_planning or not moveit_msgs_built() else "true"
    stop = threading.Event()
    start = time.monotonic()
    with _signals_to(stop):
        process = BringupProcess(plan.launch_arguments)
        print(f"  launch output: {process.log_path}", flush=True)
        from bb_robot.nodes.up_client import UpClient  # the node layer (rclpy)

        client = UpClient(plan.robots)
        run_ = _Run(plan, process, client, stop, start)
        code = EXIT_OK
        try:
            demo = args.demo or args.demo_cartesian or args.demo_plan or args.demo_pick
            if _bring_up(run_, args.timeout, arm=demo, view=bool(args.view or args.record)):
                code = _operate(run_, args, setup)
            if stop.is_set():
                run_.say("interrupted: shutting down")
        except StageFailed as failure:
            common.warn(f"the system did not come up: {failure}")
            code = EXIT_INPUT
        finally:
            if args.picture and any(v.positions for v in run_.views().values()):
                _picture(run_, args.picture)
            run_.say("stopping the launch (SIGINT)")
            left = process.stop()
            client.close()
            if left:
                common.warn(f"had to end processes the launch left running: {left}")
            run_.say(f"stopped; launch output in {process.log_path}")
            if run_.pick_line:
                print(f"pick demo {'succeeded' if code == EXIT_OK else 'failed'}: {run_.pick_line}", flush=True)
    return code


def _add_view(arguments: dict[str, str], args: argparse.Namespace) -> None:
    """The launch arguments of ``--view``, ``--port``, ``--host`` and ``--record``, and what to open.

    Raises:
        UsageError: a port out of range.
        UpError: the recording file exists already (a recording is never overwritten).
    """
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0-65535, got {args.port}")
    if args.view:
        arguments.update(view="true", view_host=args.host, view_port=str(args.port))
        layout = os.path.join(sys.prefix, "share", "bb_robot", "config", "foxglove", "bb_robot.json")
        where = f"open ws://{args.host}:{args.port}" if args.port else "a free port (--port 0), printed once it serves;"
        print(
            f"  view: {where} in Foxglove or Lichtblick (Open connection, Foxglove WebSocket); layout: {layout}",
            flush=True,
        )
    if args.record:
        record = os.path.abspath(args.record)
        if os.path.exists(record):
            raise UpError(f"--record {record}: the file exists already (a recording is never overwritten)")
        arguments["record"] = record
        print(f"  recording to {record}", flush=True)


def environment() -> None:
    """Make the environment what ``source scripts/env.sh`` makes it, where it is not set yet: this
    venv as the ament prefix, ROS traffic on this machine; and bb_robot's Fast DDS discovery profile."""
    prefix = sys.prefix
    index = os.path.join(prefix, "share", "ament_index", "resource_index", "packages", "bb_robot")
    paths = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    if os.path.isfile(index) and prefix not in paths:
        os.environ["AMENT_PREFIX_PATH"] = os.pathsep.join([prefix, *paths])
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    # Faster discovery among the processes that start together (Fast DDS only; see the file).
    if os.environ.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp") == "rmw_fastrtps_cpp":
        for share in share_directories():
            profile = share / "config" / DISCOVERY_PROFILE
            if profile.is_file():
                os.environ.setdefault("FASTDDS_DEFAULT_PROFILES_FILE", str(profile))
                break


__all__ = ["register", "run"]
