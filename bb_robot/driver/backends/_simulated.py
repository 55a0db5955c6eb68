"""What the simulating backends (``sim``, ``mujoco``) share: their start positions and the gap
between two reads that is not simulated."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bb_robot.common.parameters import configure_parameter
from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.errors import BackendError

INITIAL_POSITIONS = configure_parameter(
    "initial_positions",
    [],
    "Start positions of the simulated joints, in the driver's joint order. Empty: each joint at 0, "
    "or at the nearest end of its command range when 0 lies outside it.",
    "double_array",
)

#: A busy host stalls the control loop for tenths of a second (0.1 to 0.5 s seen on 2 cores under
#: load); a real arm goes on following its last command meanwhile, so the simulators integrate such
#: gaps.  Left out of the simulation: a loop that was stopped (SIGSTOP, a debugger), seconds long.
MAX_GAP = configure_parameter(
    "max_gap",
    1.0,
    "A time between two reads longer than this (seconds) is not integrated: the loop was stopped. "
    "Shorter stalls of a busy host are integrated, as a real arm moves on while its driver is late.",
    "double",
)


def start_positions(
    values: Sequence[float], limits: JointLimitTable, names: Sequence[str], backend: str
) -> npt.NDArray[np.float64]:
    """The joints' start positions from ``<backend>.initial_positions`` (see :data:`INITIAL_POSITIONS`).

    Args:
        values: The parameter's values (empty: the default).
        limits: The driver's limits; the positions are clamped into the command range.
        names: The driven joints, in order.
        backend: The backend's name, for messages.

    Returns:
        One position per joint.

    Raises:
        BackendError: the number of values is not the number of joints, or one is not finite.
    """
    n = len(names)
    if values:
        if len(values) != n:
            raise BackendError(
                f"{backend}.initial_positions has {len(values)} values for {n} joints ({', '.join(names)})"
            )
        start = np.array(values, dtype=np.float64)
        if not np.isfinite(start).all():
            raise BackendError(f"{backend}.initial_positions holds a non-finite value")
    else:
        start = np.zeros(n)
    return np.clip(start, limits.command_lower, limits.command_upper)
