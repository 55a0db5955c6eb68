"""What ``bb-robot up``'s planning demos (``--demo-plan``, ``--demo-pick``) need before anything starts:
their parameter file (and, for a seeded pick, the world written for the seed), and their goal and judge,
checked while nothing runs yet, so that a demo that cannot run exits 1 at once (docs/bringup.md)."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

from bb_robot.cli import common
from bb_robot.cli.up_inputs import BringupPlan, UpError
from bb_robot.cli.up_pick import DEMO_CONFIG as PICK_CONFIG
from bb_robot.cli.up_pick import PickSetup, pick_setup, seeded_config
from bb_robot.cli.up_plan import DEMO_CONFIG as PLAN_CONFIG
from bb_robot.cli.up_plan import PlanSetup, plan_setup

__all__ = ["PICK_CONFIG", "PLAN_CONFIG", "demo_inputs", "demo_setup", "moveit_msgs_built"]


def demo_inputs(args: argparse.Namespace, directory: Path) -> tuple[str | None, list[str]]:
    """The parameter file and the resource paths of ``bb-robot up ARGS``.

    Without a robot file, ``--demo-plan`` and ``--demo-pick`` bring their own scene's file unless
    ``--config`` names one; ``--seed`` writes the pick world of that seed (and a file that uses it) into
    ``directory``, which joins the resource paths.

    Args:
        args: ``bb-robot up``'s options.
        directory: where a seeded pick world goes (it must outlive the run).

    Returns:
        The parameter file (``None``: none) and the resource paths.
    """
    config, paths = args.config, list(args.resource_path)
    if not args.file and args.demo_plan:
        config = config or PLAN_CONFIG
    elif not args.file and args.demo_pick:
        config = config or PICK_CONFIG
        if args.seed is not None:
            config = str(seeded_config(config, args.seed, directory))
            paths.append(str(directory))
    return config, paths


def demo_setup(plan: BringupPlan, args: argparse.Namespace) -> PlanSetup | PickSetup | None:
    """``--demo-plan``'s goal and judge, or ``--demo-pick``'s spots and gripper (``None``: neither asked).

    Raises:
        UpError: planning left out (``--no-planning``, no moveit_msgs); no world with a post (the plan
            demo) or with a cube and a wall (the pick demo); a pick with several robots or a namespace.
    """
    if not (args.demo_plan or args.demo_pick):
        return None
    option = "--demo-plan" if args.demo_plan else "--demo-pick"
    if args.no_planning or importlib.util.find_spec("moveit_msgs") is None:
        why = "--no-planning" if args.no_planning else "moveit_msgs is not built (scripts/setup builds it)"
        raise UpError(f"{option} needs the move_group node: {why}")
    if args.demo_plan:
        return plan_setup(plan)
    if len(plan.robots) != 1 or plan.robots[0]:
        raise UpError("--demo-pick runs one robot without a namespace; the parameter file has several")
    return pick_setup(plan)


def moveit_msgs_built() -> bool:
    """Whether moveit_msgs imports (scripts/setup builds it); without it, up runs without move_group (and says so)."""
    if importlib.util.find_spec("moveit_msgs") is not None:
        return True
    common.warn("moveit_msgs is not built (scripts/setup builds it): starting without the move_group node")
    return False
