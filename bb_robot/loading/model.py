"""The loaded-model value: what every loader of :mod:`bb_robot.loading` returns."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from bb_robot.loading.formats import LoadError
from bb_robot.model.robot import Robot

if TYPE_CHECKING:
    from bb_robot.model.transforms import Matrix
    from bb_robot.sdf.loader import SdfLoadResult

#: Where a model came from: a URDF, xacro or SDF file, or URDF text (``"string"``).
Kind = Literal["urdf", "xacro", "sdf", "string"]


@dataclass(frozen=True, eq=False)
class RootPlacement:
    """A static transform that places the robot's root link: ``parent`` → root link.

    Used for a model loaded from an SDF world: ``parent`` is the world frame, ``pose`` the root
    link's pose in it (4×4).
    """

    parent: str
    pose: Matrix


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A robot model loaded from a file or from text.

    Attributes:
        robot: the validated model (URDF convention, whatever the format).
        text: the document as read for URDF (the file's bytes), xacro (the expanded text) and
            URDF text (the text itself); ``None`` for SDF, whose URDF is written on demand.
        kind: ``"urdf"``, ``"xacro"``, ``"sdf"`` (a file) or ``"string"`` (text).
        source: the file's path as given, or the label of the text.
        placement: for a model of an SDF world, where its root link sits in the world; else ``None``.
        scope: the selected SDF model's scoped name (``""`` for URDF).
        warnings: every warning of the load.
        sdf: the SDF loader's full result (``None`` for URDF and xacro).
    """

    robot: Robot
    text: str | bytes | None
    kind: Kind
    source: str
    placement: RootPlacement | None = None
    scope: str = ""
    warnings: tuple[str, ...] = ()
    sdf: SdfLoadResult | None = None

    @property
    def format(self) -> Literal["urdf", "sdf"]:
        """The description language: ``"sdf"``, or ``"urdf"`` (URDF, xacro and text)."""
        return "sdf" if self.kind == "sdf" else "urdf"

    @cached_property
    def description(self) -> str:
        """The model as URDF text, to publish as ``robot_description``.

        URDF and xacro: the text itself, never a re-serialisation; SDF: the robot written as
        URDF (:meth:`~bb_robot.sdf.loader.SdfLoadResult.to_urdf`, mesh URIs as written).

        Raises:
            LoadError: a URDF file that is not UTF-8 text.
        """
        if isinstance(self.text, str):
            return self.text
        if isinstance(self.text, bytes):
            try:
                return self.text.decode("utf-8-sig")
            except UnicodeDecodeError as error:
                raise LoadError(f"{self.source}: not UTF-8 text ({error.reason} at byte {error.start})") from None
        if self.sdf is None:
            raise LoadError(f"{self.source}: a loaded model without text or SDF result has no URDF")
        return self.sdf.to_urdf()
