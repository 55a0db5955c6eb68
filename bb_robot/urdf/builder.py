"""Turn the URDF intermediate representation into the robot model.

:func:`build_robot` maps :class:`bb_robot.urdf.ir.Robot` onto
:class:`bb_robot.model.robot.Robot`:

- Joint axes are normalised; joints without an origin sit at the identity.
- A ``<mimic>`` on a fixed joint is dropped with a warning: a fixed joint does
  not move, whatever it claims to follow (urdfdom, KDL and Pinocchio ignore it
  too; real files such as example-robot-data's reduced Talos models have them).
- A joint whose parent is the undefined link ``world`` (the usual world
  anchor) keeps ``world`` as the root frame: a bare ``world`` link is added.
  With ``drop_world=True`` those joints are removed instead, with a warning,
  and their child becomes the root; a ``<link name="world"/>`` the file
  defines as its root is removed too.  Any other undefined link is an error.
- ``<safety_controller>`` soft limits become ``JointLimits.soft_lower`` /
  ``soft_upper``; a continuous joint has no position limits.
- Each simple transmission becomes an actuator of its joint.  A transmission
  without an actuator name gets ``<joint>_actuator``.  URDF expresses a
  reversed drive with a negative ``mechanicalReduction``: the sign stays in
  ``reduction`` and ``reversed`` is left unset.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from os import PathLike

from bb_robot.model.geometry import Origin, Vec3
from bb_robot.model.robot import (
    ActuatorInfo,
    Joint,
    JointLimits,
    Link,
    Robot,
    Transmission,
)
from bb_robot.urdf import ir

WORLD = "world"


def build_robot(doc: ir.Robot, *, drop_world: bool = False) -> Robot:
    """Return the validated robot model of a parsed URDF document.

    Warnings of the document are kept and the builder's own are added.
    Raises :class:`bb_robot.model.errors.InvalidRobot` listing every
    structural problem (cycles, several roots, undefined links, duplicate
    names, broken mimics).  A transmission on a joint the document does not
    define is skipped with a warning.
    """
    warnings = list(doc.warnings)
    defined = {link.name for link in doc.links}
    joints = doc.joints
    links = [_link(link) for link in doc.links]
    fixed_mimics = [j.name for j in joints if j.type == "fixed" and j.mimic is not None]
    if fixed_mimics:
        warnings.append(
            f"ignored the <mimic> of fixed joint(s) {', '.join(repr(n) for n in fixed_mimics)}: "
            "a fixed joint does not move"
        )
    anchored = [j.name for j in joints if j.parent == WORLD]
    # ``world`` anchors the tree when it is undefined, or defined as a link without a parent.
    world_anchor = WORLD not in defined or not any(j.child == WORLD for j in joints)
    if anchored and world_anchor:
        if drop_world:
            joints = [j for j in joints if j.parent != WORLD]
            links = [link for link in links if link.name != WORLD]
            warnings.append(
                f"dropped the world anchor joint(s) {', '.join(repr(n) for n in anchored)} "
                f"(drop_world=True): their child link is the root"
            )
        elif WORLD not in defined:
            links.insert(0, Link(name=WORLD))
    joint_names = {j.name for j in joints}
    # A transmission left over from a larger description (a cut-down arm keeps its
    # parent's transmissions) drives nothing here: skipped with a warning.
    dangling = [t for t in doc.transmissions.values() if t.joint not in joint_names]
    for t in dangling:
        warnings.append(
            f"skipped transmission '{t.name or t.joint}': it drives joint '{t.joint}', "
            "which this description does not define"
        )
    actuators = [
        ActuatorInfo(
            name=t.actuator or f"{t.joint}_actuator",
            joint=t.joint,
            transmission=Transmission(reduction=t.reduction, offset=t.offset),
        )
        for t in doc.transmissions.values()
        if t.joint in joint_names
    ]
    return Robot.assemble(
        doc.name,
        links,
        [_joint(j) for j in joints],
        actuators=actuators,
        warnings=warnings,
        source=doc.source,
    )


def load_urdf(
    path: str | PathLike[str],
    *,
    xacro_args: Mapping[str, str] | None = None,
    drop_world: bool = False,
) -> Robot:
    """Return the robot model of a URDF or xacro file.

    Raises the parser's typed errors (:mod:`bb_robot.urdf.errors`) or
    :class:`bb_robot.model.errors.InvalidRobot`.
    """
    from bb_robot.urdf.parser import parse_file

    return build_robot(parse_file(path, xacro_args=xacro_args), drop_world=drop_world)


def _link(link: ir.Link) -> Link:
    visuals = tuple(v for v in (link.visual, *link.extra_visuals) if v is not None)
    return Link(
        name=link.name,
        visuals=visuals,
        collisions=tuple(link.collisions),
        inertial=link.inertial,
    )


def _joint(joint: ir.Joint) -> Joint:
    return Joint(
        name=joint.name,
        type=joint.type,
        parent_link=joint.parent,
        child_link=joint.child,
        origin=joint.origin or Origin(),
        axis=_unit(joint) if joint.axis is not None and joint.type != "fixed" else (1.0, 0.0, 0.0),
        limits=_limits(joint),
        dynamics=joint.dynamics,
        mimic=joint.mimic if joint.type != "fixed" else None,
    )


def _unit(joint: ir.Joint) -> Vec3:
    """Return the joint's axis scaled to unit length (URDF does not require unit axes).

    An axis already of unit length to rounding is kept as written, so a model
    written out as URDF reads back bit for bit.
    """
    assert joint.axis is not None
    x, y, z = joint.axis
    norm = math.sqrt(x * x + y * y + z * z)
    if norm == 0.0:  # the parser rejects these; a hand-made IR may not
        raise ValueError(f"joint '{joint.name}' has a zero-length axis")
    if abs(norm - 1.0) <= _UNIT_TOLERANCE:
        return (x, y, z)
    return (x / norm, y / norm, z / norm)


# A few units in the last place of 1.0: what normalising an already-unit vector can move.
_UNIT_TOLERANCE = 8 * sys.float_info.epsilon


def _limits(joint: ir.Joint) -> JointLimits | None:
    limit, safety = joint.limit, joint.safety_controller
    if limit is None and safety is None:
        return None
    bounded = joint.type != "continuous"
    return JointLimits(
        lower=limit.lower if limit and bounded else None,
        upper=limit.upper if limit and bounded else None,
        velocity=limit.velocity if limit else None,
        effort=limit.effort if limit else None,
        soft_lower=safety.soft_lower_limit if safety and bounded else None,
        soft_upper=safety.soft_upper_limit if safety and bounded else None,
    )
