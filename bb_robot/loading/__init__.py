"""The one loading path: a file (or URDF text) to a robot model.

The format rule (:mod:`~bb_robot.loading.formats`): the root element decides. ``<robot>`` is
URDF, or xacro when the file name ends in ``.xacro`` or an element uses the xacro namespace;
``<sdf>`` is an SDF model or world.  The file's extension decides only when there is no
``<robot>`` or ``<sdf>`` root (``.sdf``/``.world`` SDF, ``.xacro`` xacro, else URDF).

* :func:`load_file` — URDF, xacro or SDF file → :class:`LoadedModel`;
* :func:`load_text` — URDF text → :class:`LoadedModel`;
* :func:`detect_format`, :func:`format_from`, :func:`root_element` — the rule itself;
* :func:`read_urdf` — a URDF or xacro file parsed, not built (for reports on the document);
* :func:`load_sdf`, :func:`loaded_sdf`, :func:`root_placement` — the SDF half;
* :func:`sdf_to_urdf` — an SDF result written as URDF (``SdfLoadResult.to_urdf``).

Every caller loads through here: the command line (:mod:`bb_robot.cli.common`), the description
node (:mod:`bb_robot.description.sources`, which adds ``model_dirs``), the driver
(:mod:`bb_robot.driver.model`), the Gazebo backend and ``SerialManipulator.from_urdf``.
Importing this package registers the hooks of :mod:`bb_robot.hooks` that ``model/`` and ``sdf/``
call (``SerialManipulator.from_urdf``, ``SdfLoadResult.to_urdf``).  Errors derive from
:class:`LoadError` (a :class:`~bb_robot.errors.BbRobotError`) and name the file, or are the
format loaders' own typed errors.
"""

from bb_robot.loading.formats import (
    SNIFF_BYTES,
    Format,
    LoadError,
    ModelFileError,
    detect_format,
    format_from,
    read_head,
    root_element,
    uses_xacro,
)
from bb_robot.loading.load import (
    TEXT_SOURCE,
    ScopeNotApplicableError,
    UrdfDocument,
    load_file,
    load_sdf,
    load_text,
    load_urdf_robot,
    loaded_sdf,
    read_urdf,
    root_placement,
)
from bb_robot.loading.model import Kind, LoadedModel, RootPlacement
from bb_robot.loading.sdf_urdf import sdf_to_urdf
from bb_robot.model.serial import URDF_LOADER
from bb_robot.sdf.loader import SDF_TO_URDF

URDF_LOADER.register(load_urdf_robot)
SDF_TO_URDF.register(sdf_to_urdf)

__all__ = [
    "SNIFF_BYTES",
    "TEXT_SOURCE",
    "Format",
    "Kind",
    "LoadError",
    "LoadedModel",
    "ModelFileError",
    "RootPlacement",
    "ScopeNotApplicableError",
    "UrdfDocument",
    "detect_format",
    "format_from",
    "load_file",
    "load_sdf",
    "load_text",
    "load_urdf_robot",
    "loaded_sdf",
    "read_head",
    "read_urdf",
    "root_element",
    "root_placement",
    "sdf_to_urdf",
    "uses_xacro",
]
