"""``bb-robot kernels``: compile every numba kernel bb_robot uses, now, into numba's cache.

bb_robot's hot paths are compiled by numba (:data:`KERNELS`): the kinematics (every frame, the
Jacobian), inverse kinematics, the servo's cycle, the collision model's placement, the collision
guard's approach path and the planner's sphere check.  numba compiles a kernel the first time a
process needs it and caches the result on disk beside the module, so only the first use waits: up
to half a minute per kernel.
``scripts/setup`` (through
``scripts/install_package``) runs this command for each venv, for the installed copy and for the
source tree, so that no user command waits; a ``colcon build`` install can run it once too.

:data:`KERNELS` is the one list of them: ``test/cli/test_kernels.py`` fails when a ``_*_numba.py``
module is missing from it, or when a cached kernel of a listed module is left uncompiled here.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bb_robot.cli import common
from bb_robot.collision.model import placement_kernel
from bb_robot.driver.commands.limits import approach_kernel
from bb_robot.driver.servo.chain import load_kernel
from bb_robot.loading.load import load_file
from bb_robot.model import compiled
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.serial import SerialManipulator
from bb_robot.planning.rrt import search_kernel
from bb_robot.planning.validity import edge_kernel
from bb_robot.resources import bundled_model


@dataclass(frozen=True)
class Kernel:
    """One module of numba kernels and how to make it compile all of them.

    Attributes:
        module: The module's full name (``bb_robot.model._ik_numba``).
        what: What it computes, for messages.
        warm: Runs the code that uses every kernel of the module (compiling or loading it).
    """

    module: str
    what: str
    warm: Callable[[], None]


@functools.cache
def _bundled_chain() -> SerialManipulator:
    return SerialManipulator.from_urdf(bundled_model(), tip="tcp")


def _warm_frames() -> None:
    chain = _bundled_chain()
    q = np.ascontiguousarray(np.linspace(-0.2, 0.2, chain.dof))
    chain.forward(q)  # one configuration, every frame
    chain.end_effector_pose(q)  # one configuration, one frame
    chain.jacobian(q)
    fk = ForwardKinematics(load_file(bundled_model()).robot)
    batch = np.zeros((compiled.MIN_BATCH, len(fk.joint_names)))
    fk.compute(batch)  # configurations one after the other
    fk.compute(batch[0])


def _warm_ik() -> None:
    chain = _bundled_chain()
    chain.inverse(chain.end_effector_pose(np.ascontiguousarray(np.full(chain.dof, 0.3))))


def _warm_servo() -> None:
    load_kernel()  # compiled (or loaded) at import: its one signature


def _warm_placement() -> None:
    placement_kernel()  # compiled (or loaded) at import: its one signature


def _warm_approach() -> None:
    approach_kernel()  # compiled (or loaded) at import: its one signature


def _warm_plan() -> None:
    edge_kernel()  # edge_free compiled (or loaded) at import: its one signature


def _warm_search() -> None:
    search_kernel()  # connect_steps compiled (or loaded) at import: its one signature


#: Every module of numba kernels, in the order they depend on each other.
KERNELS = (
    Kernel("bb_robot.model._frames_numba", "the kinematics (frames and Jacobians)", _warm_frames),
    Kernel("bb_robot.model._ik_numba", "inverse kinematics", _warm_ik),
    Kernel("bb_robot.driver.servo._servo_numba", "the servo's cycle", _warm_servo),
    Kernel("bb_robot.collision._placement_numba", "the collision placement step", _warm_placement),
    Kernel("bb_robot.driver.commands._approach_numba", "the collision guard's approach path", _warm_approach),
    Kernel("bb_robot.planning._plan_numba", "the planner's sphere check", _warm_plan),
    Kernel("bb_robot.planning._rrt_numba", "the planner's search loop", _warm_search),
)


def compile_all(report: Callable[[str], None] = print) -> dict[str, float]:
    """Compile (or load from numba's cache) every kernel of :data:`KERNELS`.

    Args:
        report: Called with one line per module as it is done.

    Returns:
        Seconds per module.
    """
    compiled.choose("auto")  # compiled code even for one configuration: every kernel runs
    times: dict[str, float] = {}
    for kernel in KERNELS:
        started = time.perf_counter()
        kernel.warm()
        times[kernel.module] = time.perf_counter() - started
        report(f"{kernel.what}: {times[kernel.module]:.1f} s ({kernel.module})")
    return times


def run(args: argparse.Namespace) -> int:
    if (
        compiled.import_kernels(
            "bb_robot.model._frames_numba", "the kinematics kernels", compiled.KERNEL_SECONDS["frames"]
        )
        is None
    ):
        print("bb-robot kernels: numba is not installed or fails to load: bb_robot uses its numpy paths")
        return common.EXIT_INPUT
    where = Path(compiled.__file__).parents[1]
    print(f"bb-robot kernels: compiling bb_robot's numba kernels into numba's cache ({where})")
    total = sum(compile_all(lambda line: print(f"  {line}")).values())
    print(f"bb-robot kernels: done in {total:.1f} s")
    return common.EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "kernels",
        help="compile bb_robot's numba kernels now (scripts/setup does it at install)",
        description="Compile every numba kernel bb_robot uses (kinematics, inverse kinematics, the servo's "
        "cycle, collision placement, the guard's approach path, the planner's sphere check) into numba's cache, "
        "so that no later command waits for a compile.",
    )
    parser.set_defaults(handler=run)
