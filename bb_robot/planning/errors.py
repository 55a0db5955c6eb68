"""The errors of :mod:`bb_robot.planning`: one family, :class:`PlanningError`.

Two kinds of use:

- *raised* for a request that cannot be asked (a NaN, an unknown joint, an empty goal, a scaling
  factor outside [0, 1]): the caller's mistake, named with what to change;
- *returned* in :attr:`bb_robot.planning.plan.PlanResult.error` when a well-formed request has no
  plan: the start or the goal in collision (naming the pair), no inverse-kinematics solution, the
  time or iteration limit reached.  A failed plan is never an approximate one.
"""

from __future__ import annotations

from bb_robot.errors import BbRobotError


class PlanningError(BbRobotError):
    """A planning request that cannot be asked, or the reason a plan was not found."""


class InvalidRequest(PlanningError):
    """A malformed request: a non-finite value, an unknown joint or link, an empty goal, a bad option."""


def _nearness(pair: tuple[str, str], distance: float) -> str:
    """``'a' and 'b' come 1.2 mm apart``, or ``... overlap by 4.8 mm`` for a penetration (distance < 0)."""
    if distance < 0:
        return f"'{pair[0]}' and '{pair[1]}' overlap by {-distance * 1000:.1f} mm"
    return f"'{pair[0]}' and '{pair[1]}' come {distance * 1000:.1f} mm apart"


class StartInCollision(PlanningError):
    """The start configuration is in collision (or nearer than the clearance).

    Attributes:
        pair: the two links (or link and obstacle) found too near.
        distance: their distance in metres (0 or less for contact: minus the penetration depth where
            the check measures it).
    """

    def __init__(self, pair: tuple[str, str], distance: float, clearance: float) -> None:
        self.pair, self.distance = pair, distance
        super().__init__(
            f"the start configuration is in collision: {_nearness(pair, distance)} "
            f"(clearance {clearance * 1000:g} mm); move the arm out first or lower the clearance"
        )


class GoalInCollision(PlanningError):
    """Every goal configuration is in collision (or nearer than the clearance).

    Attributes:
        pair: the pair found too near at the first goal configuration.
        distance: their distance in metres (negative: minus the penetration depth).
    """

    def __init__(self, pair: tuple[str, str], distance: float, clearance: float, count: int = 1) -> None:
        self.pair, self.distance = pair, distance
        which = "the goal configuration is" if count == 1 else f"all {count} goal configurations are"
        super().__init__(
            f"{which} in collision: {_nearness(pair, distance)} "
            f"(clearance {clearance * 1000:g} mm); choose another goal or lower the clearance"
        )


class NoIkSolution(PlanningError):
    """No configuration reaches the pose goal within its tolerances and the joint limits."""


class PlanningTimeout(PlanningError):
    """The search ended without a path: its iteration limit or the timeout was reached.

    Attributes:
        iterations: the iterations made.
        seconds: the time spent.
    """

    def __init__(self, reason: str, iterations: int, seconds: float) -> None:
        self.iterations, self.seconds = iterations, seconds
        super().__init__(
            f"no path found: {reason} after {iterations} iterations ({seconds:.3f} s); "
            "raise timeout or max_iterations, try another seed, or check that the goal is reachable"
        )


class PathCheckFailed(PlanningError):
    """The last check of the final path (:func:`bb_robot.planning.exact.final_check`) refused it: nothing is returned.

    Attributes:
        pair: the pair found too near.
        distance: their distance in metres.
    """

    def __init__(self, pair: tuple[str, str], distance: float, clearance: float) -> None:
        self.pair, self.distance = pair, distance
        super().__init__(
            f"the final path failed the exact check: '{pair[0]}' and '{pair[1]}' come {distance * 1000:.3f} mm "
            f"apart (clearance {clearance * 1000:g} mm); please report it with the scene and the seed"
        )
