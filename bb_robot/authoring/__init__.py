"""Describe robots in Python and get URDF (the authoring API), and import URDF or SDF
into Python source that rebuilds them with it.

    from bb_robot.authoring import Box, Inertial, Joint, Limit, Link, Origin, Robot, Visual

    body = Box((0.3, 0.2, 0.1))
    base = Link("base", visuals=[Visual(body, Origin.above(body))], inertial=Inertial.from_geometry(2.0, body))
    ...
    print(Robot("cart", links=[base, ...], joints=[...]).to_urdf())

See ``docs/authoring.md``.  The elements are in :mod:`bb_robot.authoring.elements`, the
importer in :mod:`bb_robot.authoring.importer`, the SDF world writer in
:mod:`bb_robot.authoring.sdf`, and the definitions of the bundled models in
:mod:`bb_robot.authoring.bundled`.
"""

from .elements import (
    POSITION_INTERFACE,
    WORLD,
    AuthoringError,
    Box,
    Collision,
    Cylinder,
    Dynamics,
    Geometry,
    Inertial,
    InertiaMatrix,
    Joint,
    Limit,
    Link,
    Material,
    Mesh,
    Mimic,
    Origin,
    Robot,
    SafetyController,
    Sphere,
    Transmission,
    Visual,
)
from .importer import import_sdf, import_urdf, python_source_for

__all__ = [
    "POSITION_INTERFACE",
    "WORLD",
    "AuthoringError",
    "Box",
    "Collision",
    "Cylinder",
    "Dynamics",
    "Geometry",
    "InertiaMatrix",
    "Inertial",
    "Joint",
    "Limit",
    "Link",
    "Material",
    "Mesh",
    "Mimic",
    "Origin",
    "Robot",
    "SafetyController",
    "Sphere",
    "Transmission",
    "Visual",
    "import_sdf",
    "import_urdf",
    "python_source_for",
]
