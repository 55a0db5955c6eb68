"""What the servo computes with: the serial chain it moves, and its cycle compiled by numba.

:func:`build_chain` finds the chain from the robot's root link to ``servo.tip`` and checks that the
driver drives every joint of it; :func:`load_kernel` loads the compiled cycle
(:mod:`bb_robot.driver.servo._servo_numba`), or gives ``None`` for the numpy path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bb_robot.driver.servo.servo_inputs import ServoError
from bb_robot.errors import BbRobotError
from bb_robot.model import compiled
from bb_robot.model.robot import Robot
from bb_robot.model.serial import SerialManipulator

__all__ = ["build_chain", "load_kernel"]


def load_kernel() -> Callable[..., None] | None:
    """The servo's compiled cycle (:func:`bb_robot.driver.servo._servo_numba.cycle`), or ``None``.

    ``None`` when ``BB_ROBOT_KERNEL=numpy`` is set, or numba is missing or fails to load (logged);
    the servo then takes the numpy path, which gives the same cycles.  A driver with the servo
    enabled loads numba even where the node leaves one configuration's kinematics to Python
    (:func:`bb_robot.model.compiled.default_mode`): the servo runs every cycle.
    """
    if compiled.mode() == "numpy":
        return None
    module = compiled.import_kernels(
        "bb_robot.driver.servo._servo_numba", "the servo's cycle", compiled.KERNEL_SECONDS["servo"]
    )
    kernel: Callable[..., None] | None = module.cycle if module is not None else None
    return kernel


def build_chain(robot: Robot, tip: str, joint_names: Sequence[str]) -> SerialManipulator:
    """The serial chain from the root link to ``tip`` (``""``: the single tool frame of the chain).

    Args:
        robot: the model.
        tip: ``servo.tip``.
        joint_names: the driven joints (every chain joint must be one).

    Returns:
        The chain.

    Raises:
        ServoError: no such link, the tree branches without a tip (naming the candidates), a
            chain joint is not driven, or the chain has no joint.
    """
    try:
        chain = SerialManipulator.from_robot(robot, tip or None, strict=False)
    except BbRobotError as error:
        what = f"servo.tip '{tip}'" if tip else "servo.tip is empty and the driven chain has no single tool frame"
        raise ServoError(f"{what}: {error}") from None
    missing = [name for name in chain.joint_names if name not in joint_names]
    if missing:
        raise ServoError(f"servo.tip '{chain.tip_link}': chain joints {missing} are not driven by this driver")
    if chain.dof == 0:
        raise ServoError(f"servo.tip '{chain.tip_link}': the chain from '{chain.base_link}' has no movable joint")
    return chain
