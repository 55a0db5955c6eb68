"""SDFormat (Gazebo) models and worlds: reading, pose frame semantics, conversion to the robot model.

Layers, each usable on its own (pure Python and numpy):

* :mod:`~bb_robot.sdf.resources` — where include and mesh URIs point (``model://``,
  ``GZ_SIM_RESOURCE_PATH``, ``SDF_PATH``; never the network, never the current directory);
* :mod:`~bb_robot.sdf.document` — the file read into immutable values, includes expanded
  (:func:`read_document`);
* :mod:`~bb_robot.sdf.frames` — SDFormat 1.7+ pose frame semantics: every link, joint,
  frame and model pose resolved (:func:`resolve`, :func:`resolved_poses`);
* :mod:`~bb_robot.sdf.convert` — choosing the kinematic model and converting it to a
  :class:`~bb_robot.model.robot.Robot`;
* :mod:`~bb_robot.sdf.loader` — the entry points :func:`load_from_file`,
  :func:`load_from_sdf_file`, :func:`load_from_model`, and the loaded robot as URDF
  (:func:`sdf_to_urdf`, ``SdfLoadResult.to_urdf``; written by :mod:`bb_robot.loading.sdf_urdf`,
  above ``sdf/`` and ``urdf/``, through a hook).

Every failure is an :class:`SdfError` naming the file, line, element and name involved.
``docs/sdf.md`` describes what is supported and the decisions taken.
"""

from .convert import ConvertedModel, candidates, convert_model, select_model
from .document import SdfDocument, SdfModel, SdfWorld, read_document, read_string
from .errors import (
    FrameError,
    IncludeError,
    InvalidValueError,
    ScopeError,
    SdfError,
    SdfFileError,
    SdfStructureError,
    SdfSyntaxError,
    UnsafeSdfError,
    UnsupportedSdfError,
)
from .frames import FrameGraph, ResolvedModel, resolve, resolved_poses, world_poses
from .loader import SdfLoadResult, WorldInfo, load_from_file, load_from_model, load_from_sdf_file, sdf_to_urdf

__all__ = [
    "ConvertedModel",
    "FrameError",
    "FrameGraph",
    "IncludeError",
    "InvalidValueError",
    "ResolvedModel",
    "ScopeError",
    "SdfDocument",
    "SdfError",
    "SdfFileError",
    "SdfLoadResult",
    "SdfModel",
    "SdfStructureError",
    "SdfSyntaxError",
    "SdfWorld",
    "UnsafeSdfError",
    "UnsupportedSdfError",
    "WorldInfo",
    "candidates",
    "convert_model",
    "load_from_file",
    "load_from_model",
    "load_from_sdf_file",
    "read_document",
    "read_string",
    "resolve",
    "resolved_poses",
    "sdf_to_urdf",
    "select_model",
    "world_poses",
]
