"""The values an SDF document is read into: models, links, joints, frames, poses as written.

Every value is immutable.  Poses are kept as written (:class:`PoseSpec`: a 4×4 transform and
the ``relative_to`` frame name, ``""`` for the default); :mod:`bb_robot.sdf.frames` resolves
them.  :mod:`bb_robot.sdf.document` reads a file into these values.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bb_robot.model.geometry import Geometry, Inertia, Material, Vec3
from bb_robot.model.transforms import Matrix
from bb_robot.sdf.errors import where

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
        """Return the identity pose in the default frame, located at ``where_``."""
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
    """``friction``: ``<surface><friction><ode><mu>`` (``None`` when not written)."""

    name: str
    pose: PoseSpec
    geometry: Geometry | None
    where: Where
    friction: float | None = None


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
