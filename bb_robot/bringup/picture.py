"""A drawing of a robot at one pose (``bb-robot up --picture out.png``): matplotlib, 3D.

Links are drawn as segments between the frames of consecutive joints, each moving joint's axis as
a short arrow, and the tip frame as three coloured axes (x red, y green, z blue).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from bb_robot.errors import BbRobotError
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Robot

#: Joint types drawn with their axis.
MOVING = ("revolute", "continuous", "prismatic")


class PictureError(BbRobotError):
    """The picture could not be drawn or written (the message names the file)."""


def draw_robot(robot: Robot, positions: Mapping[str, float], path: str | Path, tip: str | None = None) -> Path:
    """Draw ``robot`` at ``positions`` and write the picture to ``path`` (PNG, SVG or PDF by suffix).

    Args:
        robot: the model.
        positions: joint values by name (missing joints at 0; mimic joints follow).
        path: the file to write.
        tip: the link whose frame is drawn as the tip (default: the deepest leaf link).

    Returns:
        ``path`` as a :class:`Path`.

    Raises:
        PictureError: the file cannot be written.
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fk = ForwardKinematics(robot)
    driven = {name: value for name, value in positions.items() if name in robot.joints and not robot.joints[name].mimic}
    poses = fk.poses(driven)
    figure = plt.figure(figsize=(6, 6))
    axes = figure.add_subplot(projection="3d")
    origins = []
    for joint in robot.joints_in_order():
        parent = poses[joint.parent_link][:3, 3]
        child_pose = poses[joint.child_link]
        child = child_pose[:3, 3]
        origins += [parent, child]
        axes.plot(*zip(parent, child, strict=True), color="0.3", linewidth=3)
        axes.scatter(*child, color="black", s=12)
        if joint.type in MOVING:
            axis = child_pose[:3, :3] @ np.asarray(joint.axis, dtype=float)
            axes.quiver(*child, *(axis * 0.06), color="tab:orange", linewidth=1.5)
    tip = tip or max(robot.leaf_links(), key=lambda name: robot.depth_of(name))
    tip_pose = poses[tip]
    for column, colour in enumerate(("red", "green", "blue")):
        axes.quiver(*tip_pose[:3, 3], *(tip_pose[:3, column] * 0.08), color=colour, linewidth=2)
    points = np.array(origins or [np.zeros(3)])
    centre = (points.max(axis=0) + points.min(axis=0)) / 2
    radius = max(float((points.max(axis=0) - points.min(axis=0)).max()) / 2, 0.1) * 1.1
    axes.set_xlim(centre[0] - radius, centre[0] + radius)
    axes.set_ylim(centre[1] - radius, centre[1] + radius)
    axes.set_zlim(centre[2] - radius, centre[2] + radius)
    axes.set_xlabel("x (m)")
    axes.set_ylabel("y (m)")
    axes.set_zlabel("z (m)")
    items = [f"{name} {value:.2f}" for name, value in sorted(driven.items())]
    values = "\n".join(", ".join(items[i : i + 3]) for i in range(0, len(items), 3))
    axes.set_title(f"{robot.name}: tip '{tip}'\n{values}", fontsize=7)
    target = Path(path)
    try:
        figure.savefig(target, dpi=100)
    except (OSError, ValueError) as error:
        raise PictureError(f"cannot write the picture {target}: {error}") from None
    finally:
        plt.close(figure)
    return target
