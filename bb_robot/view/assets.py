"""Mesh files for the Foxglove asset service, only from the model's resource directories.

Foxglove's 3D panel asks the server for each mesh a URDF names (``package://``,
``model://``, ``file://`` or an absolute path).  :class:`AssetResolver` answers with the file's
bytes when it resolves, by the description node's rules
(:func:`bb_robot.description.sources.resolve_model_path`), to a file inside one of the
directories it was given; anything else — a path outside them, ``..`` or a symbolic link
leading out, a missing file, another scheme — is refused with :class:`AssetError`, whose
message the client receives.  The server is unauthenticated, so this is what keeps a client
from reading the machine's other files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bb_robot.description.sources import PackageShare, ament_package_share, resolve_model_path
from bb_robot.errors import BbRobotError

#: The URI forms served; others (``http://``, relative paths) are refused.
SCHEMES = ("package://", "model://", "file://", "/")
#: The largest file served (bytes): meshes are a few MB; this bounds what a client can make the view read.
MAX_ASSET_BYTES = 256 * 1024 * 1024


class AssetError(BbRobotError):
    """An asset is refused or cannot be read; the message names the URI and why."""


class AssetResolver:
    """Resolves asset URIs to files inside ``directories`` and reads them."""

    def __init__(self, directories: Sequence[str], *, package_share: PackageShare = ament_package_share) -> None:
        """
        Args:
            directories: the resource directories files may come from (the model's
                ``model_dirs`` and the share directories of the packages its meshes are in).
            package_share: the share directory of a ROS package (default: the ament index).
        """
        self.directories = tuple(directories)
        self._package_share = package_share

    def resolve(self, uri: str) -> Path:
        """The real path of the file ``uri`` names.

        Raises:
            AssetError: another scheme, outside every directory, or no such file.
        """
        if not uri.startswith(SCHEMES):
            raise AssetError(f"asset '{uri}': only {', '.join(SCHEMES[:3])} URIs and absolute paths are served")
        try:
            return resolve_model_path(uri, self.directories, package_share=self._package_share)
        except BbRobotError as error:
            raise AssetError(f"asset refused: {error}") from None

    def fetch(self, uri: str) -> bytes:
        """The bytes of the file ``uri`` names (see :meth:`resolve`).

        Raises:
            AssetError: refused (see :meth:`resolve`), too large, or unreadable.
        """
        path = self.resolve(uri)
        try:
            size = path.stat().st_size
            if size > MAX_ASSET_BYTES:
                raise AssetError(f"asset '{uri}': {path} has {size} bytes, more than the {MAX_ASSET_BYTES} served")
            return path.read_bytes()
        except OSError as error:
            raise AssetError(f"asset '{uri}': cannot read {path}: {error.strerror}") from None
