"""Helpers of the view node tests: a ROS package with a mesh and the view's URL.

(TF messages are composed with description_oracle's ``edges`` and ``compose``.)
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers.robot_files import CORPUS_DIR

#: The corpus's UR3e: real URDF whose visuals are package://ur_description/meshes/... files.
CORPUS = CORPUS_DIR
UR3E = CORPUS / "ur_description_ros2" / "ur3e.urdf"
MESH_URI = "package://ur_description/meshes/ur3e/visual/base.dae"


def make_mesh_package(prefix: Path) -> tuple[Path, bytes]:
    """An ament prefix holding package ``ur_description`` with the mesh :data:`MESH_URI` names.

    The corpus ships no meshes, so the file is made here: a small COLLADA document.
    Returns the package's share directory and the mesh's bytes.
    """
    (prefix / "share" / "ament_index" / "resource_index" / "packages").mkdir(parents=True)
    (prefix / "share" / "ament_index" / "resource_index" / "packages" / "ur_description").write_text("")
    share = prefix / "share" / "ur_description"
    mesh = share / "meshes" / "ur3e" / "visual" / "base.dae"
    mesh.parent.mkdir(parents=True)
    data = (
        b'<?xml version="1.0"?>\n<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">'
        b'<asset><unit meter="1"/><up_axis>Z_UP</up_axis></asset></COLLADA>\n'
    )
    mesh.write_bytes(data)
    (share / "package.xml").write_text('<package format="3"><name>ur_description</name></package>\n')
    return share, data


def view_url(log: str) -> str:
    """The ws:// URL the view node printed."""
    match = re.search(r"Foxglove: open (ws://\S+)", log)
    assert match, f"the view printed no URL:\n{log}"
    return match.group(1)
