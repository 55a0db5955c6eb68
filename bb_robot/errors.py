"""The root of every error bb_robot raises on purpose.

Each error is a typed value carrying the context a user needs to act on it
(which file, robot, link, joint or element) and a message that says what to
do instead.  Catch :class:`BbRobotError` to handle all of them.
"""

from __future__ import annotations


class BbRobotError(Exception):
    """Base class of bb_robot's own errors; ``str(error)`` is a full sentence for the user."""
