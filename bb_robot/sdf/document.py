"""The SDF document model: an ``<sdf>`` file read into immutable values, includes expanded.

:func:`read_document` (or :func:`read_string`) returns an :class:`SdfDocument` holding
either a :class:`SdfWorld` or a root :class:`SdfModel`.  Every model, included or nested,
is an :class:`SdfModel` with its ``scoped_name`` (``a::b::c``), the file and line it was
read from, the SDF version of that file, its links, joints, frames, nested models and
plugins.  Poses are kept as written (:class:`PoseSpec`: a 4×4 transform and the
``relative_to`` frame name, ``""`` for the default); :mod:`bb_robot.sdf.frames` resolves
them.

Reading rules
-------------
* XML goes through the project's safe expat loader: a DOCTYPE, entity or notation
  declaration is refused (:class:`UnsafeSdfError`); nothing is expanded or fetched.
* ``<sdf version>`` is required; SDFormat 1.4 to 1.12 is read.  Like libsdformat, every
  file is read against the newest specification after converting what older versions
  meant: for SDF 1.4 an axis is expressed in the parent model frame; for 1.5 and 1.6
  ``<use_parent_model_frame>true`` means ``expressed_in="__model__"`` and
  ``<pose frame="F">`` means ``relative_to="F"``; before 1.7 a link, joint or frame whose
  name collides with an earlier sibling of another kind is renamed ``name_link``,
  ``name_joint``, ``name_frame`` (with a warning), as libsdformat does.
* ``<include>``: the URI is resolved by :mod:`bb_robot.sdf.resources`; the included file's
  ``<model>`` takes the include's ``<name>``, ``<pose>`` (with its ``relative_to``,
  ``degrees`` and ``rotation_format``, which replace the model's own), ``<static>`` and
  ``<placement_frame>`` (which requires ``<pose>``); the include's ``<plugin>`` elements
  are appended to the model's plugins (``from_include=True``).  ``merge="true"`` splices
  the model's links, joints, frames, nested models and plugins into the including model
  through the proxy frame ``_merged__<name>__model__``, as libsdformat does.  Included
  ``<light>``/``<actor>`` files and ``<experimental:params>`` are skipped with a warning.
  Include cycles (a file including itself, directly or not) are an
  :class:`IncludeError` naming the chain of files; so is nesting deeper than
  :data:`MAX_INCLUDE_DEPTH`.
* Values: ``<pose>`` has 6 numbers (``euler_rpy``, radians unless ``degrees="true"``) or
  7 (``rotation_format="quat_xyzw"``, normalised); empty means identity; anything not a
  finite number, a wrong count, ``degrees`` with a quaternion, an unknown rotation format
  is an :class:`InvalidValueError`.  An axis ``<xyz>`` is normalised (zero length is an
  error).  Joint limits keep SDF's defaults of the file's version (1.9 and older:
  lower -1e16, upper 1e16, effort -1, velocity -1; 1.10+: ±inf) as written.
* Names: duplicate siblings of one kind, and (1.7+) of different kinds, reserved names
  (``world``, ``__x__``) and (1.8+) names containing ``::`` are :class:`FrameError`\\ s,
  all of a model reported together.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from bb_robot.model.geometry import Box, Color, Cylinder, Geometry, Inertia, Material, Mesh, Sphere, Vec3
from bb_robot.model.transforms import Matrix, rpy_to_matrix
from bb_robot.sdf.errors import (
    FrameError,
    FrameProblem,
    IncludeError,
    InvalidValueError,
    SdfError,
    SdfFileError,
    SdfStructureError,
    SdfSyntaxError,
    UnsafeSdfError,
    UnsupportedSdfError,
    listing,
    where,
)
from bb_robot.sdf.resources import SUPPORTED_VERSION, parse_version, resolve_include, search_directories
from bb_robot.urdf import errors as urdf_errors
from bb_robot.urdf.xml_safe import Node, parse_xml
from bb_robot.urdf.xml_safe import read_document as read_bytes

#: Deepest chain of nested ``<include>`` files accepted.
MAX_INCLUDE_DEPTH = 32
#: The oldest SDFormat version read.
OLDEST_VERSION: tuple[int, int] = (1, 4)

Version = tuple[int, int]

JOINT_TYPES: tuple[str, ...] = (
    "revolute",
    "continuous",
    "prismatic",
    "fixed",
    "ball",
    "universal",
    "revolute2",
    "screw",
    "gearbox",
)


# ----------------------------------------------------------------------------- values
@dataclass(frozen=True)
class Where:
    """The file (``None`` for a string) and 1-based line an element was read from."""

    source: str | None
    line: int | None

    def __str__(self) -> str:
        return where(self.source, self.line)


_IDENTITY = np.eye(4)
_IDENTITY.setflags(write=False)


@dataclass(frozen=True, eq=False)
class PoseSpec:
    """A ``<pose>`` as written: ``transform`` (4×4, read-only) in the frame ``relative_to``.

    ``relative_to == ""`` means the element's default frame (see
    :mod:`bb_robot.sdf.frames`).  ``where`` is the ``<pose>`` element, or its owner when
    there is none.
    """

    transform: Matrix
    relative_to: str
    where: Where

    @classmethod
    def identity(cls, where_: Where) -> PoseSpec:
        return cls(_IDENTITY, "", where_)


@dataclass(frozen=True)
class SdfMimic:
    """SDF 1.11 ``<mimic>``: follower = multiplier · (leader − reference) + offset."""

    joint: str
    axis: str = "axis"
    multiplier: float = 1.0
    offset: float = 0.0
    reference: float = 0.0


@dataclass(frozen=True)
class SdfAxis:
    """A joint ``<axis>``/``<axis2>``: unit ``xyz`` in ``expressed_in`` (``""``: the joint frame),
    limits and dynamics as written (the file version's defaults where absent)."""

    xyz: Vec3
    expressed_in: str
    lower: float
    upper: float
    effort: float
    velocity: float
    damping: float = 0.0
    friction: float = 0.0
    spring_reference: float = 0.0
    spring_stiffness: float = 0.0
    mimic: SdfMimic | None = None
    where: Where = Where(None, None)


@dataclass(frozen=True, eq=False)
class SdfVisual:
    name: str
    pose: PoseSpec
    geometry: Geometry | None
    material: Material | None
    where: Where


@dataclass(frozen=True, eq=False)
class SdfCollision:
    name: str
    pose: PoseSpec
    geometry: Geometry | None
    where: Where


@dataclass(frozen=True, eq=False)
class SdfInertial:
    """``pose`` is in the link frame (SDF has no ``relative_to`` for inertials)."""

    pose: PoseSpec
    mass: float
    inertia: Inertia


@dataclass(frozen=True, eq=False)
class SdfLink:
    name: str
    pose: PoseSpec
    visuals: tuple[SdfVisual, ...]
    collisions: tuple[SdfCollision, ...]
    inertial: SdfInertial | None
    where: Where
    directory: Path | None = None
    """The directory of the file the link was written in: where its relative mesh URIs start."""


@dataclass(frozen=True, eq=False)
class SdfJoint:
    name: str
    type: str
    parent: str
    child: str
    pose: PoseSpec
    axis: SdfAxis | None
    axis2: SdfAxis | None
    where: Where


@dataclass(frozen=True, eq=False)
class SdfFrame:
    """``attached_to == ""`` means the enclosing model (or world) frame."""

    name: str
    attached_to: str
    pose: PoseSpec
    where: Where


@dataclass(frozen=True)
class SdfPlugin:
    """A ``<plugin>``: ``xml`` is its inner XML as text; ``from_include`` when it was written in
    the ``<include>`` that brought its model in."""

    name: str
    filename: str
    xml: str
    where: Where
    from_include: bool = False


@dataclass(frozen=True, eq=False)
class SdfModel:
    """One ``<model>`` (nested or included ones too), its content as written.

    ``scoped_name`` is ``a::b::c`` from the top of the document (a model file's root
    model is its own name); ``version`` is the SDF version of the file it was read from;
    ``directory`` that file's directory (where its relative URIs start); ``uri`` the
    ``<include><uri>`` that brought it in, if any.
    """

    name: str
    scoped_name: str
    version: Version
    static: bool
    pose: PoseSpec
    canonical_link: str
    placement_frame: str
    links: tuple[SdfLink, ...]
    joints: tuple[SdfJoint, ...]
    frames: tuple[SdfFrame, ...]
    models: tuple[SdfModel, ...]
    plugins: tuple[SdfPlugin, ...]
    where: Where
    directory: Path | None = None
    uri: str | None = None

    def walk(self) -> Iterator[SdfModel]:
        """Yield this model and every model nested in it, depth first, in document order."""
        stack = [self]
        while stack:
            model = stack.pop()
            yield model
            stack.extend(reversed(model.models))

    @property
    def depth(self) -> int:
        """Nesting depth: 0 for a root model or a model directly in a world."""
        return self.scoped_name.count("::")


@dataclass(frozen=True, eq=False)
class SdfWorld:
    name: str
    models: tuple[SdfModel, ...]
    frames: tuple[SdfFrame, ...]
    joints: tuple[SdfJoint, ...]
    plugins: tuple[SdfPlugin, ...]
    where: Where
    version: Version


@dataclass(frozen=True, eq=False)
class SdfDocument:
    """An SDF file with its includes expanded: a ``world`` or a root ``model`` (the other ``None``).

    ``files`` lists every file read (the document first); ``warnings`` what was skipped
    or converted, each ``file:line: ...``; ``resource_paths`` the directories searched
    for includes (besides each including file's own).
    """

    path: str | None
    version: Version
    world: SdfWorld | None
    model: SdfModel | None
    warnings: tuple[str, ...]
    files: tuple[str, ...]
    resource_paths: tuple[Path, ...] = ()
    warning_scopes: tuple[str, ...] = ()
    """For each warning, the scoped name of the innermost model it came from (``""``: the file)."""

    def warnings_for(self, scope: str) -> tuple[str, ...]:
        """The warnings of the file itself and of model ``scope`` and the models nested in it."""
        scopes = self.warning_scopes or ("",) * len(self.warnings)
        return tuple(
            text
            for text, where_ in zip(self.warnings, scopes, strict=False)
            if not where_ or where_ == scope or where_.startswith(scope + "::")
        )

    @property
    def top_models(self) -> tuple[SdfModel, ...]:
        """The world's models, or the root model."""
        if self.world is not None:
            return self.world.models
        return (self.model,) if self.model is not None else ()

    def models(self) -> list[SdfModel]:
        """Every model of the document, depth first, in document order."""
        return [m for top in self.top_models for m in top.walk()]

    def find_model(self, scoped_name: str) -> SdfModel | None:
        """Return the model with this scoped name, or ``None``."""
        return next((m for m in self.models() if m.scoped_name == scoped_name), None)


# ----------------------------------------------------------------------- value parsing
_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0"})


def _child(node: Node, tag: str) -> Node | None:
    return next((c for c in node.children if c.tag == tag), None)


def _children(node: Node, tag: str) -> list[Node]:
    return [c for c in node.children if c.tag == tag]


class _Reader:
    """Value parsing for one file: knows the source name for errors."""

    def __init__(self, source: str | None, version: Version) -> None:
        self.source = source
        self.version = version

    def at(self, node: Node) -> Where:
        return Where(self.source, node.line)

    def number(self, text: str, node: Node, owner: tuple[str, str], *, finite: bool = True) -> float:
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
        element = _child(node, tag)
        if element is None or not element.text.strip():
            return default
        return self.number(element.text, element, owner, finite=finite)

    def boolean(self, node: Node, owner: tuple[str, str], text: str | None = None) -> bool:
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
        x, y, z = self.numbers(node, (3,), owner)
        return (x, y, z)

    def name(self, node: Node, kind: str) -> str:
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


# --------------------------------------------------------------------------- geometry
def _material(reader: _Reader, node: Node | None, owner: tuple[str, str]) -> Material | None:
    """The colour of a ``<material>``; ``None`` without ``<diffuse>``/``<ambient>`` (a Gazebo
    ``<script>`` or ``<pbr>`` material has nothing the robot model or URDF can hold)."""
    if node is None:
        return None
    for tag in ("diffuse", "ambient"):
        element = _child(node, tag)
        if element is not None and element.text.strip():
            values = reader.numbers(element, (3, 4), owner)
            alpha = values[3] if len(values) == 4 else 1.0
            return Material(color=Color(values[0], values[1], values[2], alpha))
    return None


def _geometry(reader: _Reader, node: Node | None, owner: tuple[str, str], warnings: list[str]) -> Geometry | None:
    if node is None:
        warnings.append(f"{reader.source}: {owner[0]} '{owner[1]}' has no <geometry>; kept without one")
        return None
    shapes = [c for c in node.children if c.tag != "empty"]
    if not shapes:
        return None
    shape = shapes[0]
    if shape.tag == "box":
        size = _child(shape, "size")
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
        uri = _child(shape, "uri")
        if uri is None or not uri.text.strip():
            raise SdfStructureError(
                "<mesh> needs a <uri>",
                source=reader.source,
                line=shape.line,
                element=owner[0],
                name=owner[1],
                hint="Write <uri>model://my_model/meshes/part.dae</uri>.",
            )
        scale_node = _child(shape, "scale")
        scale: Vec3 = reader.vector(scale_node, owner) if scale_node is not None else (1.0, 1.0, 1.0)
        if _child(shape, "submesh") is not None:
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


# --------------------------------------------------------------------------- builder
@dataclass
class _Include:
    """What an ``<include>`` overrides."""

    name: str | None
    pose: PoseSpec | None
    static: bool | None
    placement_frame: str | None
    plugins: list[SdfPlugin] = field(default_factory=list)
    uri: str = ""


def _inner_xml(node: Node) -> str:
    """Return the XML inside ``node`` as text (its own text first, then its children)."""
    parts: list[str] = []
    if node.text.strip():
        parts.append(escape(node.text.strip()))
    for child in node.children:
        parts.append(_outer_xml(child))
    return "".join(parts)


def _outer_xml(node: Node) -> str:
    attributes = "".join(f" {key}={quoteattr(value)}" for key, value in node.attrib.items())
    inner = _inner_xml(node)
    if not inner:
        return f"<{node.tag}{attributes}/>"
    return f"<{node.tag}{attributes}>{inner}</{node.tag}>"


_UNSAFE = (urdf_errors.UnsafeXmlError,)


def _parse(data: bytes | str, source: str | None) -> Node:
    try:
        root = parse_xml(data, source)
    except urdf_errors.UnsafeXmlError as error:
        raise UnsafeSdfError(
            error.problem,
            source=source,
            line=error.line,
            hint="Remove the <!DOCTYPE ...> block and write the values out in full.",
        ) from None
    except urdf_errors.XmlSyntaxError as error:
        raise SdfSyntaxError(
            error.problem,
            source=source,
            line=error.line,
            hint="Fix the XML at that position (a tag not closed, a stray '<' or '&', a truncated file).",
        ) from None
    except (urdf_errors.EmptyDocumentError, urdf_errors.DocumentTooLargeError) as error:
        raise SdfFileError(
            error.problem, source=source, hint='Give an SDF file: <sdf version="1.9">...</sdf>.'
        ) from None
    assert root is not None
    return root


def _read_file(path: Path) -> bytes:
    try:
        return read_bytes(path)
    except urdf_errors.UrdfFileError as error:
        raise SdfFileError(error.problem, source=str(path), hint="Give the path of an .sdf or .world file.") from None
    except urdf_errors.DocumentTooLargeError as error:
        raise SdfFileError(error.problem, source=str(path)) from None


def _sdf_version(root: Node, source: str | None, warnings: list[str]) -> Version:
    if root.tag != "sdf":
        raise SdfSyntaxError(
            f"the root element is <{root.tag}>, not <sdf>",
            source=source,
            line=root.line,
            element=root.tag,
            hint='An SDF file starts with <sdf version="1.9"> (a URDF goes to the URDF loader).',
        )
    text = root.attrib.get("version", "")
    version = parse_version(text)
    if version is None:
        raise SdfStructureError(
            "<sdf> has no version attribute" if not text else f'<sdf version="{text}"> is not a version',
            source=source,
            line=root.line,
            element="sdf",
            hint='Write the SDFormat version the file follows, e.g. <sdf version="1.9">.',
        )
    if version < OLDEST_VERSION:
        raise UnsupportedSdfError(
            f"SDFormat {text} is older than 1.4, which this loader does not read",
            source=source,
            line=root.line,
            element="sdf",
            hint="Convert it first: `gz sdf -p file.sdf > new.sdf` prints it as the newest version.",
        )
    if version > SUPPORTED_VERSION:
        warnings.append(
            f"{where(source, root.line)}: SDFormat {text} is newer than {SUPPORTED_VERSION[0]}.{SUPPORTED_VERSION[1]}; "
            "read as that version"
        )
    return version


def _reserved(name: str) -> bool:
    return name == "world" or (len(name) >= 4 and name.startswith("__") and name.endswith("__"))


class _Builder:
    """Builds the document model of one file, expanding its includes."""

    def __init__(self, directories: Sequence[Path]) -> None:
        self.directories = tuple(directories)
        self.warnings: list[str] = []
        self.files: list[str] = []
        self.problems: list[FrameError] = []
        self._ranges: list[tuple[str, int, int]] = []
        self._cache: dict[Path, tuple[Node, Version]] = {}

    # -------------------------------------------------------------- files
    def load(self, path: Path) -> tuple[Node, Version]:
        cached = self._cache.get(path)
        if cached is not None:
            return cached
        root = _parse(_read_file(path), str(path))
        version = _sdf_version(root, str(path), self.warnings)
        self._cache[path] = (root, version)
        if str(path) not in self.files:
            self.files.append(str(path))
        return root, version

    # -------------------------------------------------------------- names
    def name_problem(
        self, reader: _Reader, node: Node, element: str, name: str, problem: str, *, kind: FrameProblem, hint: str
    ) -> None:
        """Record a problem with the name of ``element`` ``name`` at ``node`` (reported with the others at the end)."""
        self.problems.append(
            FrameError(problem, kind=kind, source=reader.source, line=node.line, element=element, name=name, hint=hint)
        )

    def element_name(self, reader: _Reader, node: Node, kind: str) -> str:
        """The name of a ``<link>``, ``<joint>`` or ``<frame>``, checked with :meth:`check_name`."""
        name = reader.name(node, kind)
        self.check_name(reader, node, kind, name)
        return name

    def check_name(self, reader: _Reader, node: Node, kind: str, name: str) -> None:
        if _reserved(name):
            self.name_problem(
                reader,
                node,
                kind,
                name,
                f"the name '{name}' is reserved (world, and names that start and end with '__')",
                kind="reserved_name",
                hint="Rename it.",
            )
        if "::" in name and reader.version >= (1, 8):
            self.name_problem(
                reader,
                node,
                kind,
                name,
                "names may not contain '::' (SDFormat 1.8+ uses it to name nested frames)",
                kind="reserved_name",
                hint="Rename it, or nest a <model> instead.",
            )

    # -------------------------------------------------------------- plugins
    @staticmethod
    def plugin(reader: _Reader, node: Node, from_include: bool = False) -> SdfPlugin:
        return SdfPlugin(
            name=node.attrib.get("name", ""),
            filename=node.attrib.get("filename", ""),
            xml=_inner_xml(node),
            where=reader.at(node),
            from_include=from_include,
        )

    # -------------------------------------------------------------- includes
    def read_include(
        self, reader: _Reader, node: Node, base_dir: Path | None, chain: tuple[Path, ...], *, prefix: str
    ) -> tuple[SdfModel | None, _Include, bool]:
        """Return the included model (``None`` for a light or actor), the overrides, and ``merge``."""
        uri_node = _child(node, "uri")
        if uri_node is None:
            raise SdfStructureError(
                "an <include> needs a <uri>",
                source=reader.source,
                line=node.line,
                element="include",
                hint="Write <uri>model://my_robot</uri> inside it.",
            )
        uri = uri_node.text.strip()
        resolved = resolve_include(uri, base_dir, self.directories, source=reader.source, line=uri_node.line)
        self.warnings.extend(resolved.warnings)
        path = resolved.path
        if path in chain:
            cycle = [*chain[chain.index(path) :], path]
            raise IncludeError(
                "includes itself: " + " -> ".join(str(p) for p in cycle),
                kind="cycle",
                uri=uri,
                chain=[str(p) for p in cycle],
                source=reader.source,
                line=uri_node.line,
                hint="Remove the <include> that closes the loop.",
            )
        if len(chain) >= MAX_INCLUDE_DEPTH:
            raise IncludeError(
                f"includes are nested deeper than {MAX_INCLUDE_DEPTH} files",
                kind="depth",
                uri=uri,
                chain=[str(p) for p in (*chain, path)],
                source=reader.source,
                line=uri_node.line,
            )
        owner = ("include", uri)
        name_node = _child(node, "name")
        pose_node = _child(node, "pose")
        static_node = _child(node, "static")
        placement_node = _child(node, "placement_frame")
        if placement_node is not None and pose_node is None:
            raise FrameError(
                "<placement_frame> needs a <pose> in the same <include>",
                kind="placement_frame",
                source=reader.source,
                line=placement_node.line,
                element="include",
                name=uri,
                hint="Add the <pose> the placement frame should have.",
            )
        overrides = _Include(
            name=name_node.text.strip() if name_node is not None and name_node.text.strip() else None,
            pose=reader.pose(pose_node, node, owner) if pose_node is not None else None,
            static=reader.boolean(static_node, owner) if static_node is not None else None,
            placement_frame=placement_node.text.strip() if placement_node is not None else None,
            plugins=[self.plugin(reader, p, True) for p in _children(node, "plugin")],
            uri=uri,
        )
        for child in node.children:
            if child.tag.startswith("experimental:"):
                self.warnings.append(
                    f"{where(reader.source, child.line)}: <include> '{uri}': <{child.tag}> is not supported; "
                    "the included model is used as written"
                )
        merge = reader.boolean(node, owner, node.attrib["merge"]) if "merge" in node.attrib else False
        root, version = self.load(path)
        model_nodes = _children(root, "model")
        if not model_nodes:
            other = next((c for c in root.children if c.tag in ("light", "actor")), None)
            if other is not None and not merge:
                self.warnings.append(
                    f"{where(reader.source, node.line)}: <include> '{uri}' brings in a <{other.tag}>, "
                    "which is skipped (only models are kept)"
                )
                return None, overrides, merge
            raise IncludeError(
                f"{path} holds no <model>",
                kind="no_model",
                uri=uri,
                source=reader.source,
                line=uri_node.line,
                hint="Include a file whose <sdf> holds one <model>.",
            )
        if len(model_nodes) > 1:
            self.warnings.append(f"{path}: holds {len(model_nodes)} <model>s; the include uses the first")
        sub_reader = _Reader(str(path), version)
        model = self.model(
            sub_reader,
            model_nodes[0],
            prefix=prefix,
            base_dir=path.parent,
            chain=(*chain, path),
            overrides=overrides,
        )
        return model, overrides, merge

    # -------------------------------------------------------------- elements
    def link(self, reader: _Reader, node: Node, name: str, base_dir: Path | None) -> SdfLink:
        owner = ("link", name)
        visuals = []
        for v in _children(node, "visual"):
            vname = reader.name(v, "visual")
            vowner = ("visual", f"{name}/{vname}")
            visuals.append(
                SdfVisual(
                    vname,
                    reader.pose(_child(v, "pose"), v, vowner),
                    _geometry(reader, _child(v, "geometry"), vowner, self.warnings),
                    _material(reader, _child(v, "material"), vowner),
                    reader.at(v),
                )
            )
        collisions = []
        for c in _children(node, "collision"):
            cname = reader.name(c, "collision")
            cowner = ("collision", f"{name}/{cname}")
            collisions.append(
                SdfCollision(
                    cname,
                    reader.pose(_child(c, "pose"), c, cowner),
                    _geometry(reader, _child(c, "geometry"), cowner, self.warnings),
                    reader.at(c),
                )
            )
        inertial = None
        inertial_node = _child(node, "inertial")
        if inertial_node is not None:
            ipose = reader.pose(_child(inertial_node, "pose"), inertial_node, owner)
            if ipose.relative_to:
                self.warnings.append(
                    f"{ipose.where}: link '{name}' <inertial><pose relative_to>: inertial poses are always in "
                    "the link frame; relative_to is ignored"
                )
                ipose = replace(ipose, relative_to="")
            inertia_node = _child(inertial_node, "inertia")
            values: dict[str, float] = {}
            for key in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"):
                default = 1.0 if key in ("ixx", "iyy", "izz") else 0.0  # SDF's defaults
                values[key] = (
                    default
                    if inertia_node is None
                    else reader.child_number(inertia_node, key, default, owner, finite=True)
                )
            inertial = SdfInertial(
                ipose,
                reader.child_number(inertial_node, "mass", 1.0, owner, finite=True),
                Inertia(**values),
            )
        return SdfLink(
            name,
            reader.pose(_child(node, "pose"), node, owner),
            tuple(visuals),
            tuple(collisions),
            inertial,
            reader.at(node),
            base_dir,
        )

    def axis(self, reader: _Reader, node: Node | None, joint: str, which: str) -> SdfAxis | None:
        if node is None:
            return None
        owner = ("joint", joint)
        xyz_node = _child(node, "xyz")
        xyz: Vec3 = (0.0, 0.0, 1.0)
        expressed_in = ""
        if xyz_node is not None:
            xyz = reader.vector(xyz_node, owner)
            expressed_in = xyz_node.attrib.get("expressed_in", "").strip()
        norm = math.sqrt(sum(c * c for c in xyz))
        if norm == 0.0:
            raise InvalidValueError(
                f"<{which}><xyz> has zero length",
                value=xyz_node.text if xyz_node is not None else "",
                source=reader.source,
                line=xyz_node.line if xyz_node is not None else node.line,
                element="joint",
                name=joint,
                hint="Give the direction of the joint axis, e.g. <xyz>0 0 1</xyz>.",
            )
        xyz = (xyz[0] / norm, xyz[1] / norm, xyz[2] / norm)
        parent_frame = _child(node, "use_parent_model_frame")
        if reader.version < (1, 5):
            expressed_in = "__model__"
        elif parent_frame is not None:
            if reader.version < (1, 7):
                if reader.boolean(parent_frame, owner):
                    expressed_in = "__model__"
            else:
                self.warnings.append(
                    f"{where(reader.source, parent_frame.line)}: joint '{joint}': <use_parent_model_frame> is not "
                    'SDFormat 1.7+; ignored (write <xyz expressed_in="__model__">)'
                )
        unbounded = math.inf if reader.version >= (1, 10) else 1e16
        unlimited = math.inf if reader.version >= (1, 10) else -1.0
        limit = _child(node, "limit")
        dynamics = _child(node, "dynamics")
        mimic = None
        mimic_node = _child(node, "mimic")
        if mimic_node is not None:
            leader = mimic_node.attrib.get("joint", "").strip()
            if not leader:
                raise SdfStructureError(
                    "<mimic> needs a joint attribute naming the leader joint",
                    source=reader.source,
                    line=mimic_node.line,
                    element="joint",
                    name=joint,
                    hint='Write <mimic joint="leader_joint">.',
                )
            mimic = SdfMimic(
                leader,
                mimic_node.attrib.get("axis", "axis").strip() or "axis",
                reader.child_number(mimic_node, "multiplier", 1.0, owner, finite=True),
                reader.child_number(mimic_node, "offset", 0.0, owner, finite=True),
                reader.child_number(mimic_node, "reference", 0.0, owner, finite=True),
            )

        def lim(tag: str, default: float) -> float:
            if limit is None:
                return default
            return reader.child_number(limit, tag, default, owner, finite=False)

        def dyn(tag: str) -> float:
            return 0.0 if dynamics is None else reader.child_number(dynamics, tag, 0.0, owner, finite=True)

        return SdfAxis(
            xyz=xyz,
            expressed_in=expressed_in,
            lower=lim("lower", -unbounded),
            upper=lim("upper", unbounded),
            effort=lim("effort", unlimited),
            velocity=lim("velocity", unlimited),
            damping=dyn("damping"),
            friction=dyn("friction"),
            spring_reference=dyn("spring_reference"),
            spring_stiffness=dyn("spring_stiffness"),
            mimic=mimic,
            where=reader.at(node),
        )

    def joint(self, reader: _Reader, node: Node, name: str) -> SdfJoint:
        jtype = node.attrib.get("type", "").strip().lower()
        if not jtype:
            raise SdfStructureError(
                "a <joint> needs a type attribute",
                source=reader.source,
                line=node.line,
                element="joint",
                name=name,
                hint=f'Write type="...", one of {", ".join(JOINT_TYPES)}.',
            )
        if jtype not in JOINT_TYPES:
            raise InvalidValueError(
                f"unknown joint type '{jtype}'",
                value=jtype,
                source=reader.source,
                line=node.line,
                element="joint",
                name=name,
                hint=f"Use one of {', '.join(JOINT_TYPES)}.",
            )
        ends = {}
        for tag in ("parent", "child"):
            element = _child(node, tag)
            if element is None or not element.text.strip():
                raise SdfStructureError(
                    f"a <joint> needs a <{tag}>",
                    source=reader.source,
                    line=node.line,
                    element="joint",
                    name=name,
                    hint=f"Write <{tag}>link_name</{tag}>.",
                )
            ends[tag] = element.text.strip()
        return SdfJoint(
            name=name,
            type=jtype,
            parent=ends["parent"],
            child=ends["child"],
            pose=reader.pose(_child(node, "pose"), node, ("joint", name)),
            axis=self.axis(reader, _child(node, "axis"), name, "axis"),
            axis2=self.axis(reader, _child(node, "axis2"), name, "axis2"),
            where=reader.at(node),
        )

    def frame(self, reader: _Reader, node: Node, name: str) -> SdfFrame:
        return SdfFrame(
            name,
            node.attrib.get("attached_to", "").strip(),
            reader.pose(_child(node, "pose"), node, ("frame", name)),
            reader.at(node),
        )

    # -------------------------------------------------------------- model
    def model(
        self,
        reader: _Reader,
        node: Node,
        *,
        prefix: str,
        base_dir: Path | None,
        chain: tuple[Path, ...],
        overrides: _Include | None = None,
    ) -> SdfModel:
        written_name = reader.name(node, "model")
        name = overrides.name if overrides is not None and overrides.name else written_name
        self.check_name(reader, node, "model", name)
        scoped = f"{prefix}::{name}" if prefix else name
        owner = ("model", scoped)
        first_warning = len(self.warnings)
        static_node = _child(node, "static")
        static = reader.boolean(static_node, owner) if static_node is not None else False
        pose = reader.pose(_child(node, "pose"), node, owner)
        placement = node.attrib.get("placement_frame", "").strip()
        plugins: list[SdfPlugin] = []
        if overrides is not None:
            if overrides.static is not None:
                static = overrides.static
            if overrides.pose is not None:
                pose = overrides.pose
            if overrides.placement_frame is not None:
                placement = overrides.placement_frame

        links: list[SdfLink] = []
        joints: list[SdfJoint] = []
        frames: list[SdfFrame] = []
        models: list[SdfModel] = []
        seen: dict[str, dict[str, int]] = {"model": {}, "link": {}, "joint": {}, "frame": {}}
        implicit: dict[str, tuple[str, int]] = {}  # name -> (kind, line) of earlier siblings

        def record(kind: str, element_name: str, element_node: Node) -> str | None:
            """Check sibling names; return the name to use (renamed before 1.7) or None to skip."""
            same = seen[kind]
            if element_name in same:
                self.name_problem(
                    reader,
                    element_node,
                    kind,
                    element_name,
                    f"a {kind} named '{element_name}' already exists in model '{scoped}' (line {same[element_name]})",
                    kind="duplicate_name",
                    hint="Give each link, joint, frame and nested model of a model its own name.",
                )
                return None
            same[element_name] = element_node.line
            final = element_name
            if element_name in implicit and kind != "model":
                other_kind, other_line = implicit[element_name]
                if reader.version < (1, 7):
                    final = f"{element_name}_{kind}"
                    counter = 0
                    while final in implicit:
                        final = f"{element_name}_{kind}{counter}"
                        counter += 1
                    self.warnings.append(
                        f"{where(reader.source, element_node.line)}: {kind} '{element_name}' in model '{scoped}' "
                        f"has the name of a {other_kind} (line {other_line}); renamed '{final}' as libsdformat does "
                        "for SDF before 1.7"
                    )
                else:
                    self.name_problem(
                        reader,
                        element_node,
                        kind,
                        element_name,
                        f"the {kind} name '{element_name}' is also the name of a {other_kind} (line {other_line}) "
                        f"in model '{scoped}'",
                        kind="duplicate_name",
                        hint="Links, joints, frames and nested models share one namespace per model: rename one.",
                    )
            implicit.setdefault(final, (kind, element_node.line))
            return final

        for child in node.children:
            tag = child.tag
            if tag == "link":
                link_name = self.element_name(reader, child, "link")
                final = record("link", link_name, child)
                if final is not None:
                    links.append(self.link(reader, child, final, base_dir))
            elif tag == "joint":
                joint_name = self.element_name(reader, child, "joint")
                final = record("joint", joint_name, child)
                if final is not None:
                    joints.append(self.joint(reader, child, final))
            elif tag == "frame":
                frame_name = self.element_name(reader, child, "frame")
                final = record("frame", frame_name, child)
                if final is not None:
                    frames.append(self.frame(reader, child, final))
            elif tag == "model":
                nested = self.model(reader, child, prefix=scoped, base_dir=base_dir, chain=chain)
                if record("model", nested.name, child) is not None:
                    models.append(nested)
            elif tag == "include":
                included, _inc, merge = self.read_include(reader, child, base_dir, chain, prefix=scoped)
                if included is None:
                    continue
                if merge:
                    merged = _merge_parts(included, scoped)
                    for part in merged.links:
                        if record("link", part.name, child) is not None:
                            links.append(part)
                    for frame in merged.frames:
                        if record("frame", frame.name, child) is not None:
                            frames.append(frame)
                    for joint in merged.joints:
                        if record("joint", joint.name, child) is not None:
                            joints.append(joint)
                    for sub in merged.models:
                        if record("model", sub.name, child) is not None:
                            models.append(sub)
                    plugins.extend(merged.plugins)
                elif record("model", included.name, child) is not None:
                    models.append(included)
            elif tag == "plugin":
                plugins.append(self.plugin(reader, child))
        if overrides is not None:
            plugins.extend(overrides.plugins)
        self._ranges.append((scoped, first_warning, len(self.warnings)))
        return SdfModel(
            name=name,
            scoped_name=scoped,
            version=reader.version,
            static=static,
            pose=pose,
            canonical_link=node.attrib.get("canonical_link", "").strip(),
            placement_frame=placement,
            links=tuple(links),
            joints=tuple(joints),
            frames=tuple(frames),
            models=tuple(models),
            plugins=tuple(plugins),
            where=reader.at(node),
            directory=base_dir,
            uri=overrides.uri if overrides is not None else None,
        )

    # -------------------------------------------------------------- world
    def world(self, reader: _Reader, node: Node, base_dir: Path | None, chain: tuple[Path, ...]) -> SdfWorld:
        name = reader.name(node, "world")
        models: list[SdfModel] = []
        frames: list[SdfFrame] = []
        joints: list[SdfJoint] = []
        plugins: list[SdfPlugin] = []
        names: dict[str, tuple[str, int]] = {}

        def record(kind: str, element_name: str, element_node: Node) -> bool:
            if element_name in names:
                other_kind, other_line = names[element_name]
                self.name_problem(
                    reader,
                    element_node,
                    kind,
                    element_name,
                    f"the name '{element_name}' is already used by a {other_kind} (line {other_line}) "
                    f"in world '{name}'",
                    kind="duplicate_name",
                    hint="Give each model, frame and joint of a world its own name (an <include> takes <name>).",
                )
                return False
            names[element_name] = (kind, element_node.line)
            return True

        for child in node.children:
            if child.tag == "model":
                model = self.model(reader, child, prefix="", base_dir=base_dir, chain=chain)
                if record("model", model.name, child):
                    models.append(model)
            elif child.tag == "include":
                included, _inc, merge = self.read_include(reader, child, base_dir, chain, prefix="")
                if included is None:
                    continue
                if merge:
                    if included.links:
                        raise UnsupportedSdfError(
                            "a merge-include into a <world> cannot bring links (libsdformat refuses it too)",
                            source=reader.source,
                            line=child.line,
                            element="include",
                            name=included.name,
                            hint='Remove merge="true".',
                        )
                    merged = _merge_parts(included, "")
                    for frame in merged.frames:
                        if record("frame", frame.name, child):
                            frames.append(frame)
                    for joint in merged.joints:
                        if record("joint", joint.name, child):
                            joints.append(joint)
                    for sub in merged.models:
                        if record("model", sub.name, child):
                            models.append(sub)
                    plugins.extend(merged.plugins)
                elif record("model", included.name, child):
                    models.append(included)
            elif child.tag == "frame":
                frame_name = self.element_name(reader, child, "frame")
                if record("frame", frame_name, child):
                    frames.append(self.frame(reader, child, frame_name))
            elif child.tag == "joint":
                joint_name = self.element_name(reader, child, "joint")
                if record("joint", joint_name, child):
                    joints.append(self.joint(reader, child, joint_name))
            elif child.tag == "plugin":
                plugins.append(self.plugin(reader, child))
        return SdfWorld(
            name, tuple(models), tuple(frames), tuple(joints), tuple(plugins), reader.at(node), reader.version
        )

    # -------------------------------------------------------------- document
    def document(
        self, root: Node, version: Version, source: str | None, base_dir: Path | None, chain: tuple[Path, ...]
    ) -> SdfDocument:
        reader = _Reader(source, version)
        worlds = _children(root, "world")
        models = _children(root, "model")
        if worlds and models or len(worlds) > 1 or len(models) > 1:
            raise SdfStructureError(
                f"<sdf> holds {len(worlds)} <world> and {len(models)} <model> elements; one of either is allowed",
                source=source,
                line=root.line,
                element="sdf",
                hint="Put the models in one <world>, or nest them in one <model>.",
            )
        world = self.world(reader, worlds[0], base_dir, chain) if worlds else None
        model = self.model(reader, models[0], prefix="", base_dir=base_dir, chain=chain) if models else None
        if world is None and model is None:
            found = [c.tag for c in root.children]
            raise SdfStructureError(
                "<sdf> holds no <world> and no <model>" + (f" (it holds {listing(found)})" if found else ""),
                source=source,
                line=root.line,
                element="sdf",
                hint="Load a file with a <model> or <world>.",
            )
        if self.problems:
            raise FrameError.combine(self.problems)
        return SdfDocument(
            path=source,
            version=version,
            world=world,
            model=model,
            warnings=tuple(self.warnings),
            files=tuple(self.files),
            resource_paths=self.directories,
            warning_scopes=self.warning_scopes(),
        )

    def warning_scopes(self) -> tuple[str, ...]:
        scopes: list[str | None] = [None] * len(self.warnings)
        for scope, start, end in self._ranges:  # nested models finish first: the innermost wins
            for index in range(start, end):
                if scopes[index] is None:
                    scopes[index] = scope
        return tuple(s or "" for s in scopes)


def _rescope(model: SdfModel, prefix: str) -> SdfModel:
    """Return ``model`` (built with its own name as scope) with every scoped name under ``prefix``."""
    scoped = f"{prefix}::{model.name}" if prefix else model.name
    if scoped == model.scoped_name:
        return model
    return replace(model, scoped_name=scoped, models=tuple(_rescope(m, scoped) for m in model.models))


@dataclass(frozen=True)
class _Merged:
    links: tuple[SdfLink, ...]
    joints: tuple[SdfJoint, ...]
    frames: tuple[SdfFrame, ...]
    models: tuple[SdfModel, ...]
    plugins: tuple[SdfPlugin, ...]


def merged_proxy_name(model_name: str) -> str:
    """The proxy frame a merge-include adds for the merged model's frame (libsdformat's name)."""
    return f"_merged__{model_name}__model__"


def _merge_parts(model: SdfModel, parent_scope: str) -> _Merged:
    """Return the content of a merge-included ``model`` rewritten for its parent, with the proxy frame."""
    from bb_robot.sdf.frames import canonical_link_name, pose_in_model_with_placement

    proxy = merged_proxy_name(model.name)
    canonical = canonical_link_name(model) or ""
    transform = model.pose.transform
    if model.placement_frame:
        transform = pose_in_model_with_placement(model, model.pose.transform)
    relative_to = model.pose.relative_to or ("__model__" if parent_scope else "world")
    frame = SdfFrame(proxy, canonical, PoseSpec(transform, relative_to, model.pose.where), model.where)

    def to_proxy(name: str, if_empty: bool) -> str:
        return proxy if name == "__model__" or (if_empty and not name) else name

    links = tuple(
        replace(link, pose=replace(link.pose, relative_to=to_proxy(link.pose.relative_to, True)))
        for link in model.links
    )
    frames = tuple(
        replace(
            f,
            attached_to=to_proxy(f.attached_to, True),
            pose=replace(f.pose, relative_to=to_proxy(f.pose.relative_to, False)),
        )
        for f in model.frames
    )

    def axis(a: SdfAxis | None) -> SdfAxis | None:
        return None if a is None else replace(a, expressed_in=to_proxy(a.expressed_in, False))

    joints = tuple(
        replace(
            j,
            parent=to_proxy(j.parent, False),
            child=to_proxy(j.child, False),
            pose=replace(j.pose, relative_to=to_proxy(j.pose.relative_to, False)),
            axis=axis(j.axis),
            axis2=axis(j.axis2),
        )
        for j in model.joints
    )
    models = tuple(
        _rescope(replace(m, pose=replace(m.pose, relative_to=to_proxy(m.pose.relative_to, True))), parent_scope)
        for m in model.models
    )
    return _Merged(links, joints, (frame, *frames), models, model.plugins)


# ------------------------------------------------------------------------- entry points
def read_document(
    path: str | os.PathLike[str],
    *,
    resource_paths: Sequence[str | os.PathLike[str]] | None = None,
    environ: Mapping[str, str] | None = None,
) -> SdfDocument:
    """Read an SDF file (a ``<model>`` or a ``<world>``) and expand its includes.

    ``resource_paths`` are searched for includes after the including file's directory
    and before ``GZ_SIM_RESOURCE_PATH`` and ``SDF_PATH`` (from ``environ``, default
    ``os.environ``).  Raises an :class:`~bb_robot.sdf.errors.SdfError` subclass.
    """
    file = Path(os.fspath(path)).absolute()
    builder = _Builder(search_directories(resource_paths, environ))
    root, version = builder.load(file)
    return builder.document(root, version, str(file), file.parent, (file.resolve(),))


def read_string(
    text: str | bytes,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    resource_paths: Sequence[str | os.PathLike[str]] | None = None,
    environ: Mapping[str, str] | None = None,
    source: str | None = None,
) -> SdfDocument:
    """Read SDF text; relative include URIs start at ``base_dir`` (default: only the resource paths)."""
    builder = _Builder(search_directories(resource_paths, environ))
    root = _parse(text, source)
    version = _sdf_version(root, source, builder.warnings)
    directory = Path(os.fspath(base_dir)).absolute() if base_dir is not None else None
    return builder.document(root, version, source, directory, ())


__all__ = [
    "JOINT_TYPES",
    "MAX_INCLUDE_DEPTH",
    "PoseSpec",
    "SdfAxis",
    "SdfCollision",
    "SdfDocument",
    "SdfError",
    "SdfFrame",
    "SdfInertial",
    "SdfJoint",
    "SdfLink",
    "SdfMimic",
    "SdfModel",
    "SdfPlugin",
    "SdfVisual",
    "SdfWorld",
    "Where",
    "read_document",
    "read_string",
]
