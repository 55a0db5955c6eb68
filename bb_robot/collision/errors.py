"""The collision package's errors: each names the file, link, pair or element concerned."""

from __future__ import annotations

from bb_robot.errors import BbRobotError


class CollisionError(BbRobotError):
    """Base class of the collision package's errors."""


class CollisionUnavailable(CollisionError):
    """coal (the collision library) cannot be imported while collision checking is asked for."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(
            f"collision checking needs the 'coal' package ({reason}); install it (scripts/setup does) "
            "or turn checking off explicitly (collision.check: false)"
        )


class MeshUnreadable(CollisionError):
    """A link's collision mesh cannot be found or read.

    Args:
        link: the link whose ``<collision>`` names the mesh.
        uri: the mesh as written in the description.
        reason: why it cannot be used (not found, the reader's message).
    """

    def __init__(self, link: str, uri: str, reason: str) -> None:
        self.link = link
        self.uri = uri
        self.reason = reason
        super().__init__(f"link '{link}': collision mesh '{uri}' cannot be used: {reason}")


class SrdfError(CollisionError):
    """An SRDF file that cannot be read or does not fit the robot.

    Args:
        path: the file (or ``<string>``).
        reason: what is wrong, naming the element or link.
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class WorldError(CollisionError):
    """A collision world (YAML obstacles, SDF world) that cannot be used; the message names the file and entry."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


class SceneError(CollisionError):
    """A run-time change of a scene that is refused or malformed; the message names the object, link or pair."""
