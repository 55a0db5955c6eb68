"""The SDF document model: an ``<sdf>`` file read into immutable values, includes expanded.

:func:`read_document` (or :func:`read_string`) returns an :class:`SdfDocument` holding
either a :class:`SdfWorld` or a root :class:`SdfModel`.  Every model, included or nested,
is an :class:`SdfModel` with its ``scoped_name`` (``a::b::c``), the file and line it was
read from, the SDF version of that file, its links, joints, frames, nested models and
plugins.  Poses are kept as written (:class:`PoseSpec`: a 4×4 transform and the
``relative_to`` frame name, ``""`` for the default); :mod:`bb_robot.sdf.frames` resolves
them.

This module reads files, expands includes and checks names; the values are defined in
:mod:`bb_robot.sdf.elements` (and importable from here), element values are read by
:mod:`bb_robot.sdf.values`, links, joints, frames and plugins by :mod:`bb_robot.sdf.parts`,
and merge-includes are spliced in by :mod:`bb_robot.sdf.merge`.

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
  is an :class:`~bb_robot.sdf.errors.InvalidValueError`.  An axis ``<xyz>`` is normalised (zero length is an
  error).  Joint limits keep SDF's defaults of the file's version (1.9 and older:
  lower -1e16, upper 1e16, effort -1, velocity -1; 1.10+: ±inf) as written.
* Names: duplicate siblings of one kind, and (1.7+) of different kinds, reserved names
  (``world``, ``__x__``) and (1.8+) names containing ``::`` are :class:`FrameError`\\ s,
  all of a model reported together.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bb_robot.sdf.elements import (
    JOINT_TYPES,
    PoseSpec,
    SdfAxis,
    SdfCollision,
    SdfDocument,
    SdfFrame,
    SdfInertial,
    SdfJoint,
    SdfLink,
    SdfMimic,
    SdfModel,
    SdfPlugin,
    SdfVisual,
    SdfWorld,
    Version,
    Where,
)
from bb_robot.sdf.errors import (
    FrameError,
    FrameProblem,
    IncludeError,
    SdfError,
    SdfFileError,
    SdfStructureError,
    SdfSyntaxError,
    UnsafeSdfError,
    UnsupportedSdfError,
    listing,
    where,
)
from bb_robot.sdf.merge import merge_parts, merged_proxy_name
from bb_robot.sdf.parts import read_frame, read_joint, read_link, read_plugin
from bb_robot.sdf.resources import SUPPORTED_VERSION, parse_version, resolve_include, search_directories
from bb_robot.sdf.values import ElementReader, child_elements, first_child
from bb_robot.xmlsafe import (
    DocumentTooLargeError,
    EmptyDocumentError,
    Node,
    UnsafeXmlError,
    XmlFileError,
    XmlSyntaxError,
    parse_xml,
)
from bb_robot.xmlsafe import read_document as read_bytes

#: Deepest chain of nested ``<include>`` files accepted.
MAX_INCLUDE_DEPTH = 32
#: The oldest SDFormat version read.
OLDEST_VERSION: tuple[int, int] = (1, 4)


@dataclass
class _Include:
    """What an ``<include>`` overrides."""

    name: str | None
    pose: PoseSpec | None
    static: bool | None
    placement_frame: str | None
    plugins: list[SdfPlugin] = field(default_factory=list)
    uri: str = ""


def _parse(data: bytes | str, source: str | None) -> Node:
    try:
        root = parse_xml(data, source)
    except UnsafeXmlError as error:
        raise UnsafeSdfError(error.problem, source=source, line=error.line, hint=error.hint) from None
    except XmlSyntaxError as error:
        raise SdfSyntaxError(error.problem, source=source, line=error.line, hint=error.hint) from None
    except (EmptyDocumentError, DocumentTooLargeError) as error:
        raise SdfFileError(
            error.problem, source=source, hint='Give an SDF file: <sdf version="1.9">...</sdf>.'
        ) from None
    assert root is not None
    return root


def _read_file(path: Path) -> bytes:
    try:
        return read_bytes(path)
    except XmlFileError as error:
        raise SdfFileError(error.problem, source=str(path), hint="Give the path of an .sdf or .world file.") from None
    except DocumentTooLargeError as error:
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
        self, reader: ElementReader, node: Node, element: str, name: str, problem: str, *, kind: FrameProblem, hint: str
    ) -> None:
        """Record a problem with the name of ``element`` ``name`` at ``node`` (reported with the others at the end)."""
        self.problems.append(
            FrameError(problem, kind=kind, source=reader.source, line=node.line, element=element, name=name, hint=hint)
        )

    def element_name(self, reader: ElementReader, node: Node, kind: str) -> str:
        """The name of a ``<link>``, ``<joint>`` or ``<frame>``, checked with :meth:`check_name`."""
        name = reader.name(node, kind)
        self.check_name(reader, node, kind, name)
        return name

    def check_name(self, reader: ElementReader, node: Node, kind: str, name: str) -> None:
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
    # -------------------------------------------------------------- includes
    def read_include(
        self, reader: ElementReader, node: Node, base_dir: Path | None, chain: tuple[Path, ...], *, prefix: str
    ) -> tuple[SdfModel | None, _Include, bool]:
        """Return the included model (``None`` for a light or actor), the overrides, and ``merge``."""
        uri_node = first_child(node, "uri")
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
        name_node = first_child(node, "name")
        pose_node = first_child(node, "pose")
        static_node = first_child(node, "static")
        placement_node = first_child(node, "placement_frame")
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
            plugins=[read_plugin(reader, p, True) for p in child_elements(node, "plugin")],
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
        model_nodes = child_elements(root, "model")
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
        sub_reader = ElementReader(str(path), version)
        model = self.model(
            sub_reader,
            model_nodes[0],
            prefix=prefix,
            base_dir=path.parent,
            chain=(*chain, path),
            overrides=overrides,
        )
        return model, overrides, merge

    # -------------------------------------------------------------- model
    def model(
        self,
        reader: ElementReader,
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
        static_node = first_child(node, "static")
        static = reader.boolean(static_node, owner) if static_node is not None else False
        pose = reader.pose(first_child(node, "pose"), node, owner)
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
                    links.append(read_link(reader, child, final, base_dir, self.warnings))
            elif tag == "joint":
                joint_name = self.element_name(reader, child, "joint")
                final = record("joint", joint_name, child)
                if final is not None:
                    joints.append(read_joint(reader, child, final, self.warnings))
            elif tag == "frame":
                frame_name = self.element_name(reader, child, "frame")
                final = record("frame", frame_name, child)
                if final is not None:
                    frames.append(read_frame(reader, child, final))
            elif tag == "model":
                nested = self.model(reader, child, prefix=scoped, base_dir=base_dir, chain=chain)
                if record("model", nested.name, child) is not None:
                    models.append(nested)
            elif tag == "include":
                included, _inc, merge = self.read_include(reader, child, base_dir, chain, prefix=scoped)
                if included is None:
                    continue
                if merge:
                    merged = merge_parts(included, scoped)
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
                plugins.append(read_plugin(reader, child))
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
    def world(self, reader: ElementReader, node: Node, base_dir: Path | None, chain: tuple[Path, ...]) -> SdfWorld:
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
                    merged = merge_parts(included, "")
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
                    frames.append(read_frame(reader, child, frame_name))
            elif child.tag == "joint":
                joint_name = self.element_name(reader, child, "joint")
                if record("joint", joint_name, child):
                    joints.append(read_joint(reader, child, joint_name, self.warnings))
            elif child.tag == "plugin":
                plugins.append(read_plugin(reader, child))
        return SdfWorld(
            name, tuple(models), tuple(frames), tuple(joints), tuple(plugins), reader.at(node), reader.version
        )

    # -------------------------------------------------------------- document
    def document(
        self, root: Node, version: Version, source: str | None, base_dir: Path | None, chain: tuple[Path, ...]
    ) -> SdfDocument:
        reader = ElementReader(source, version)
        worlds = child_elements(root, "world")
        models = child_elements(root, "model")
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


# ------------------------------------------------------------------------- entry points
def read_document(
    path: str | os.PathLike[str],
    *,
    resource_paths: Sequence[str | os.PathLike[str]] | None = None,
    environ: Mapping[str, str] | None = None,
) -> SdfDocument:
    """Read an SDF file (a ``<model>`` or a ``<world>``) and expand its includes.

    Args:
        path: The file.
        resource_paths: Directories searched for includes after the including file's
            directory and before ``GZ_SIM_RESOURCE_PATH`` and ``SDF_PATH``.
        environ: Where those variables are read (default ``os.environ``).

    Returns:
        The document, values as written.

    Raises:
        SdfError: A subclass naming file, line and element: ``SdfFileError``,
            ``SdfSyntaxError`` (``UnsafeSdfError``), ``SdfStructureError``,
            ``InvalidValueError``, ``IncludeError``, ``FrameError`` (names),
            ``UnsupportedSdfError``.
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
    """Read SDF text and expand its includes.

    Args:
        text: The document.
        base_dir: Where relative include URIs start (default: only the resource paths are searched).
        resource_paths: As for :func:`read_document`.
        environ: As for :func:`read_document`.
        source: Names the text in errors and warnings (``None``: ``<string>``).

    Returns:
        The document, values as written.

    Raises:
        SdfError: As :func:`read_document` does.
    """
    builder = _Builder(search_directories(resource_paths, environ))
    root = _parse(text, source)
    version = _sdf_version(root, source, builder.warnings)
    directory = Path(os.fspath(base_dir)).absolute() if base_dir is not None else None
    return builder.document(root, version, source, directory, ())


__all__ = [
    "JOINT_TYPES",
    "MAX_INCLUDE_DEPTH",
    "OLDEST_VERSION",
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
    "Version",
    "Where",
    "merged_proxy_name",
    "read_document",
    "read_string",
]
