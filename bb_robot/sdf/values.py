"""Reading the values of SDF elements: numbers, booleans, poses, vectors, names, materials, shapes.

An :class:`ElementReader` knows the file (for errors) and its SDF version (for what older
versions meant).  Anything not a finite number, a wrong count, ``degrees`` with a
quaternion, an unknown rotation format is an :class:`~bb_robot.sdf.errors.InvalidValueError`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from bb_robot.model.geometry import Box, Color, Cylinder, Geometry, Material, Mesh, Sphere, Vec3
from bb_robot.model.transforms import Matrix, rpy_to_matrix
from bb_robot.sdf.elements import PoseSpec, Version, Where
from bb_robot.sdf.errors import InvalidValueError, SdfStructureError, where
from bb_robot.xmlsafe import Node

_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0"})


def first_child(node: Node, tag: str) -> Node | None:
    """The first child element ``tag`` of ``node``, or ``None``."""
    return next((c for c in node.children if c.tag == tag), None)


def child_elements(node: Node, tag: str) -> list[Node]:
    """Every child element ``tag`` of ``node``, in document order."""
    return [c for c in node.children if c.tag == tag]


class ElementReader:
    """Value parsing for one file: knows the source name for errors."""

    def __init__(self, source: str | None, version: Version) -> None:
        self.source = source
        self.version = version

    def at(self, node: Node) -> Where:
        """Where ``node`` was read: this file and its line."""
        return Where(self.source, node.line)

    def number(self, text: str, node: Node, owner: tuple[str, str], *, finite: bool = True) -> float:
        """Read ``text`` (of ``node``, which belongs to ``owner``: kind and name) as a number.

        Raises:
            InvalidValueError: Not a number, or (with ``finite``) NaN or infinite.
        """
        token = text.strip()
        try:
            value = float(token)
        except ValueError:
            raise InvalidValueError(
                f"<{node.tag}> value '{token}' is not a number",
                value=text,
                source=self.source,
                line=node.line,
                element=owner[0],
                name=owner[1],
                hint="Write a decimal number, e.g. 0.25.",
            ) from None
        if finite and not math.isfinite(value):
            raise InvalidValueError(
                f"<{node.tag}> value '{token}' is not a finite number",
                value=text,
                source=self.source,
                line=node.line,
                element=owner[0],
                name=owner[1],
                hint="Write a finite decimal number.",
            )
        return value

    def numbers(self, node: Node, counts: Sequence[int], owner: tuple[str, str]) -> list[float]:
        """Read the text of ``node`` as one of ``counts`` finite numbers.

        Raises:
            InvalidValueError: Another count, or a value that is not a finite number.
        """
        tokens = node.text.split()
        if len(tokens) not in counts:
            wanted = " or ".join(str(c) for c in counts)
            raise InvalidValueError(
                f"<{node.tag}> needs {wanted} numbers, got {len(tokens)} ('{node.text.strip()}')",
                value=node.text,
                source=self.source,
                line=node.line,
                element=owner[0],
                name=owner[1],
                hint=f"Write {wanted} decimal numbers separated by spaces.",
            )
        return [self.number(t, node, owner) for t in tokens]

    def child_number(self, node: Node, tag: str, default: float, owner: tuple[str, str], *, finite: bool) -> float:
        """Read the child element ``tag`` of ``node`` as a number; ``default`` when it is absent or empty."""
        element = first_child(node, tag)
        if element is None or not element.text.strip():
            return default
        return self.number(element.text, element, owner, finite=finite)

    def boolean(self, node: Node, owner: tuple[str, str], text: str | None = None) -> bool:
        """Read ``text`` (default: the text of ``node``) as ``true``/``1`` or ``false``/``0``.

        Raises:
            InvalidValueError: Anything else.
        """
        value = (node.text if text is None else text).strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise InvalidValueError(
            f"<{node.tag}> value '{value}' is not a boolean",
            value=value,
            source=self.source,
            line=node.line,
            element=owner[0],
            name=owner[1],
            hint="Write true or false.",
        )

    def pose(self, node: Node | None, owner_node: Node, owner: tuple[str, str]) -> PoseSpec:
        """Read a ``<pose>`` element (``None``: identity in the default frame)."""
        if node is None:
            return PoseSpec.identity(self.at(owner_node))
        relative_to = node.attrib.get("relative_to", "")
        if self.version < (1, 7) and node.attrib.get("frame"):
            relative_to = relative_to or node.attrib["frame"]
        fmt = node.attrib.get("rotation_format", "euler_rpy").strip()
        degrees = self.boolean(node, owner, node.attrib["degrees"]) if "degrees" in node.attrib else False
        if fmt not in ("euler_rpy", "quat_xyzw"):
            raise InvalidValueError(
                f'<pose rotation_format="{fmt}"> is not a rotation format',
                value=fmt,
                source=self.source,
                line=node.line,
                element=owner[0],
                name=owner[1],
                hint='Use rotation_format="euler_rpy" (6 numbers) or "quat_xyzw" (7 numbers).',
            )
        if fmt == "quat_xyzw" and degrees:
            raise InvalidValueError(
                '<pose degrees="true"> does not apply to rotation_format="quat_xyzw"',
                value="true",
                source=self.source,
                line=node.line,
                element=owner[0],
                name=owner[1],
                hint='Remove degrees="true" (a quaternion has no angles).',
            )
        transform = np.eye(4)
        if node.text.strip():
            values = self.numbers(node, (7,) if fmt == "quat_xyzw" else (6,), owner)
            transform[:3, 3] = values[:3]
            if fmt == "quat_xyzw":
                transform[:3, :3] = self.quaternion(values[3:], node, owner)
            else:
                angles = [math.radians(a) for a in values[3:]] if degrees else values[3:]
                transform[:3, :3] = rpy_to_matrix(angles)
        transform.setflags(write=False)
        return PoseSpec(transform, relative_to, self.at(node))

    def quaternion(self, xyzw: Sequence[float], node: Node, owner: tuple[str, str]) -> Matrix:
        """The rotation matrix of the quaternion ``x y z w`` (normalised).

        Raises:
            InvalidValueError: The quaternion has zero length.
        """
        x, y, z, w = xyzw
        norm = math.sqrt(x * x + y * y + z * z + w * w)
        if norm == 0.0:
            raise InvalidValueError(
                "<pose> quaternion has zero length",
                value=node.text,
                source=self.source,
                line=node.line,
                element=owner[0],
                name=owner[1],
                hint="Write a unit quaternion x y z w, e.g. 0 0 0 1.",
            )
        x, y, z, w = x / norm, y / norm, z / norm, w / norm
        return np.array(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
            ]
        )

    def vector(self, node: Node, owner: tuple[str, str]) -> Vec3:
        """Read the text of ``node`` as 3 finite numbers."""
        x, y, z = self.numbers(node, (3,), owner)
        return (x, y, z)

    def name(self, node: Node, kind: str) -> str:
        """The ``name`` attribute of the ``kind`` element ``node``, stripped.

        Raises:
            SdfStructureError: It is missing or blank.
        """
        value = node.attrib.get("name")
        if value is None or not value.strip():
            raise SdfStructureError(
                f"a <{kind}> needs a name attribute",
                source=self.source,
                line=node.line,
                element=kind,
                hint=f'Write <{kind} name="...">.',
            )
        return value.strip()


def read_material(reader: ElementReader, node: Node | None, owner: tuple[str, str]) -> Material | None:
    """The colour of a ``<material>``; ``None`` without ``<diffuse>``/``<ambient>`` (a Gazebo
    ``<script>`` or ``<pbr>`` material has nothing the robot model or URDF can hold)."""
    if node is None:
        return None
    for tag in ("diffuse", "ambient"):
        element = first_child(node, tag)
        if element is not None and element.text.strip():
            values = reader.numbers(element, (3, 4), owner)
            alpha = values[3] if len(values) == 4 else 1.0
            return Material(color=Color(values[0], values[1], values[2], alpha))
    return None


def read_geometry(
    reader: ElementReader, node: Node | None, owner: tuple[str, str], warnings: list[str]
) -> Geometry | None:
    """Read the shape of a ``<geometry>`` (box, cylinder, sphere, mesh).

    Args:
        reader: The file's reader.
        node: The ``<geometry>`` element, or ``None`` when there is none (a warning).
        owner: The visual or collision, for messages.
        warnings: What is skipped is appended here (an unsupported shape, a ``<submesh>``).

    Returns:
        The geometry, or ``None`` when it is missing, empty or not supported.

    Raises:
        SdfStructureError: A ``<mesh>`` without ``<uri>``.
        InvalidValueError: A size, radius, length or scale that is not a finite number.
    """
    if node is None:
        warnings.append(f"{reader.source}: {owner[0]} '{owner[1]}' has no <geometry>; kept without one")
        return None
    shapes = [c for c in node.children if c.tag != "empty"]
    if not shapes:
        return None
    shape = shapes[0]
    if shape.tag == "box":
        size = first_child(shape, "size")
        x, y, z = reader.vector(size, owner) if size is not None else (1.0, 1.0, 1.0)
        return Box((x, y, z))
    if shape.tag == "cylinder":
        return Cylinder(
            reader.child_number(shape, "radius", 1.0, owner, finite=True),
            reader.child_number(shape, "length", 1.0, owner, finite=True),
        )
    if shape.tag == "sphere":
        return Sphere(reader.child_number(shape, "radius", 1.0, owner, finite=True))
    if shape.tag == "mesh":
        uri = first_child(shape, "uri")
        if uri is None or not uri.text.strip():
            raise SdfStructureError(
                "<mesh> needs a <uri>",
                source=reader.source,
                line=shape.line,
                element=owner[0],
                name=owner[1],
                hint="Write <uri>model://my_model/meshes/part.dae</uri>.",
            )
        scale_node = first_child(shape, "scale")
        scale: Vec3 = reader.vector(scale_node, owner) if scale_node is not None else (1.0, 1.0, 1.0)
        if first_child(shape, "submesh") is not None:
            warnings.append(
                f"{where(reader.source, shape.line)}: {owner[0]} '{owner[1]}': <submesh> is not kept "
                "(the whole mesh is used)"
            )
        uniform = scale[0] == scale[1] == scale[2]
        return Mesh(uri.text.strip(), scale[0], None if uniform else scale)
    warnings.append(
        f"{where(reader.source, shape.line)}: {owner[0]} '{owner[1]}': <{shape.tag}> geometry is not supported "
        "(box, cylinder, sphere, mesh are); kept without geometry"
    )
    return None
