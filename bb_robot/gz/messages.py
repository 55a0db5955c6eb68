"""Gazebo Harmonic message classes (``gz.msgs10``) without Gazebo and without protobuf's slow fallback.

Where the classes come from, in this order (:func:`default_messages` picks the first that works):

1. ``module`` — a real, importable ``gz.msgs10`` (a machine with Gazebo Harmonic's Python modules).
   A ``gz.msgs10`` that belongs to PyPI's ``gazebo-py-bindings`` is not imported: its old-style
   generated code fails with protobuf >= 4.21 (``Descriptors cannot be created directly``) unless the
   whole process uses the ~70x slower pure-Python protobuf.
2. ``descriptor set`` — the file (or directory of ``*.desc`` files / ``*_pb2.py`` files) named by
   ``BB_ROBOT_GZ_MSGS``, else ``<sys.prefix>/share/bb_robot/gz_msgs10/gz_msgs10.desc``, which ``scripts/setup``
   writes from the ``gazebo-py-bindings`` wheel (downloaded, never installed: the wheel ships a
   regular ``gz/__init__.py`` package that would shadow a real Gazebo's ``gz`` namespace, and pins
   ``protobuf~=3.20``).
3. ``distribution`` — an installed ``gazebo-py-bindings``, read from its files without importing it.

For 2 and 3 the serialized ``FileDescriptorProto`` of each generated module is read from its source
text (``ast``, nothing executed), the files go into a private :class:`DescriptorPool` in dependency
order (protobuf's own well-known types from protobuf itself), and classes are made with
``message_factory.GetMessageClass``: the fast (upb) implementation on every protobuf >= 4.22.

``python -m bb_robot.gz build-set WHEEL_OR_DIR OUTPUT.desc`` writes a descriptor set (what
``scripts/setup`` does).
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import os
import re
import sys
import threading
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.internal import api_implementation
from google.protobuf.message import Message

from bb_robot.errors import BbRobotError

ENV_VARIABLE = "BB_ROBOT_GZ_MSGS"
DISTRIBUTION = "gazebo-py-bindings"
# Where scripts/setup puts the descriptor set it extracts from the gazebo-py-bindings wheel.
# Its directory holds nothing else, so it can serve as ign-transport's IGN_DESCRIPTOR_PATH too.
INSTALLED_SET = Path(sys.prefix) / "share" / "bb_robot" / "gz_msgs10" / "gz_msgs10.desc"
PACKAGE_DIR = "gz/msgs10/"
MODULE_PACKAGE = "gz.msgs10"


class GzMessagesError(BbRobotError):
    """Base of the errors of the gz.msgs10 message classes."""


class GzMessagesUnavailable(GzMessagesError, RuntimeError):
    """No source of gz.msgs10 message classes was found (the message says which were tried)."""


class UnknownMessageType(GzMessagesError, KeyError):
    """A message type name that the loaded gz.msgs10 descriptors do not define.

    Args:
        type_name: The type asked for (``gz.msgs.Foo``).
    """

    def __init__(self, type_name: str) -> None:
        super().__init__(type_name)
        self.type_name = type_name

    def __str__(self) -> str:
        return f"unknown message type {self.type_name!r}: the loaded gz.msgs10 descriptors do not define it"


class DescriptorSetError(GzMessagesError, ValueError):
    """Descriptors that cannot be loaded in dependency order, or an unknown source of them."""


def protobuf_implementation() -> str:
    """``upb``, ``cpp`` or ``python`` (the slow one)."""
    return str(api_implementation.Type())


# ------------------------------------------------------------------------- reading generated modules


def serialized_descriptors(source: str) -> list[bytes]:
    """The serialized ``FileDescriptorProto`` in the text of a generated ``*_pb2.py`` module.

    Old-style modules pass it as ``serialized_pb=b'...'`` to ``FileDescriptor``; new-style ones
    call ``AddSerializedFile(b'...')``. The text is parsed, never executed.
    """
    found: list[bytes] = []
    for node in ast.walk(ast.parse(source)):
        value: ast.expr | None = None
        if isinstance(node, ast.keyword) and node.arg == "serialized_pb":
            value = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "AddSerializedFile"
            and node.args
        ):
            value = node.args[0]
        if value is not None:
            data = ast.literal_eval(value)
            if isinstance(data, bytes):
                found.append(data)
    return found


def _file_protos(blobs: Iterable[bytes]) -> list[descriptor_pb2.FileDescriptorProto]:
    protos = []
    for blob in blobs:
        proto = descriptor_pb2.FileDescriptorProto()
        proto.ParseFromString(blob)
        protos.append(proto)
    return protos


def _pb2_sources_in_zip(path: Path) -> Iterator[str]:
    with zipfile.ZipFile(path) as archive:
        for name in sorted(archive.namelist()):
            if name.startswith(PACKAGE_DIR) and name.endswith("_pb2.py"):
                yield archive.read(name).decode("utf-8")


def _pb2_sources_in_dir(path: Path) -> Iterator[str]:
    for file in sorted(path.glob("*_pb2.py")):
        yield file.read_text(encoding="utf-8")


def file_protos_from(path: Path) -> list[descriptor_pb2.FileDescriptorProto]:
    """Every gz.msgs ``FileDescriptorProto`` in a wheel, a directory or a descriptor set file.

    ``path`` is a ``gazebo-py-bindings`` wheel (``.whl``), a directory holding ``*_pb2.py`` modules
    (``.../gz/msgs10``) or ``*.desc`` files, or a ``FileDescriptorSet`` file.
    """
    path = Path(path)
    if path.is_dir():
        descs = sorted(path.glob("*.desc"))
        if descs:
            return [proto for desc in descs for proto in _read_set(desc)]
        return _file_protos(blob for text in _pb2_sources_in_dir(path) for blob in serialized_descriptors(text))
    if path.suffix == ".whl" or zipfile.is_zipfile(path):
        return _file_protos(blob for text in _pb2_sources_in_zip(path) for blob in serialized_descriptors(text))
    return _read_set(path)


def _read_set(path: Path) -> list[descriptor_pb2.FileDescriptorProto]:
    file_set = descriptor_pb2.FileDescriptorSet()
    file_set.ParseFromString(Path(path).read_bytes())
    return list(file_set.file)


def _well_known(name: str) -> descriptor_pb2.FileDescriptorProto:
    """The ``FileDescriptorProto`` of one of protobuf's own files (``google/protobuf/*.proto``)."""
    module = "google.protobuf." + Path(name).stem + "_pb2"
    importlib.import_module(module)
    proto = descriptor_pb2.FileDescriptorProto()
    descriptor_pool.Default().FindFileByName(name).CopyToProto(proto)
    return proto


def dependency_order(
    protos: Iterable[descriptor_pb2.FileDescriptorProto],
) -> list[descriptor_pb2.FileDescriptorProto]:
    """``protos`` with every file after its dependencies, protobuf's own files added as needed.

    Raises :class:`DescriptorSetError` (a ``ValueError``) for a dependency that is neither given
    nor one of protobuf's files.
    """
    by_name = {proto.name: proto for proto in protos}
    ordered: list[descriptor_pb2.FileDescriptorProto] = []
    done: set[str] = set()

    def visit(name: str, chain: tuple[str, ...]) -> None:
        if name in done:
            return
        if name in chain:
            raise DescriptorSetError(f"import cycle: {' -> '.join((*chain, name))}")
        proto = by_name.get(name)
        if proto is None:
            if not name.startswith("google/protobuf/"):
                raise DescriptorSetError(f"{chain[-1] if chain else '?'} imports {name}, which is missing")
            proto = _well_known(name)
        for dependency in proto.dependency:
            visit(dependency, (*chain, name))
        done.add(name)
        ordered.append(proto)

    for name in sorted(by_name):
        visit(name, ())
    return ordered


def write_descriptor_set(protos: Iterable[descriptor_pb2.FileDescriptorProto], output: Path) -> int:
    """Write ``protos`` (dependency-ordered, well-known types included) as a ``FileDescriptorSet``.

    The file also serves ign-transport's ``IGN_DESCRIPTOR_PATH`` (a directory of ``*.desc`` files) so
    its tools know the ``gz.msgs.*`` types. Returns the number of files written.
    """
    file_set = descriptor_pb2.FileDescriptorSet()
    file_set.file.extend(dependency_order(protos))
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + f".{os.getpid()}.partial")
    partial.write_bytes(file_set.SerializeToString())
    os.replace(partial, output)
    return len(file_set.file)


# ----------------------------------------------------------------------------------- the registry


@dataclass(frozen=True)
class MessagesSource:
    """Where a :class:`GzMessages` took its classes from."""

    kind: str  # "module", "descriptor set", "distribution" or "given"
    location: str
    implementation: str  # protobuf's: "upb", "cpp" or "python"

    def __str__(self) -> str:
        return f"{self.kind} {self.location} (protobuf {self.implementation})"


class GzMessages:
    """Message classes by full type name (``gz.msgs.Model``), built once and cached (thread-safe)."""

    def __init__(self, pool: descriptor_pool.DescriptorPool | None, source: MessagesSource, module: str = "") -> None:
        self._pool = pool
        self._module = module
        self.source = source
        self._classes: dict[str, type[Message]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_file_protos(
        cls, protos: Iterable[descriptor_pb2.FileDescriptorProto], source: MessagesSource
    ) -> GzMessages:
        pool = descriptor_pool.DescriptorPool()
        for proto in dependency_order(protos):
            pool.Add(proto)
        return cls(pool, source)

    @classmethod
    def from_path(cls, path: Path | str, kind: str = "descriptor set") -> GzMessages:
        """Classes from a wheel, a directory or a descriptor set (see :func:`file_protos_from`)."""
        protos = file_protos_from(Path(path))
        if not protos:
            raise GzMessagesUnavailable(f"{path} holds no gz.msgs descriptors")
        return cls.from_file_protos(protos, MessagesSource(kind, str(path), protobuf_implementation()))

    def message_class(self, type_name: str) -> type[Message]:
        """The class of ``type_name`` (``gz.msgs.Double``); :class:`UnknownMessageType` if undefined."""
        cached = self._classes.get(type_name)
        if cached is not None:
            return cached
        with self._lock:
            cached = self._classes.get(type_name)
            if cached is None:
                cached = self._load(type_name)
                self._classes[type_name] = cached
            return cached

    def new(self, type_name: str, **fields: Any) -> Message:
        """A new message of ``type_name`` with ``fields`` set."""
        return self.message_class(type_name)(**fields)

    def parse(self, type_name: str, data: bytes) -> Message:
        message = self.message_class(type_name)()
        message.ParseFromString(data)
        return message

    def has(self, type_name: str) -> bool:
        try:
            self.message_class(type_name)
        except UnknownMessageType:
            return False
        return True

    def _load(self, type_name: str) -> type[Message]:
        if self._pool is not None:
            try:
                descriptor = self._pool.FindMessageTypeByName(type_name)
            except KeyError:
                raise UnknownMessageType(type_name) from None
            return message_factory.GetMessageClass(descriptor)
        return _class_from_module(self._module, type_name)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _class_from_module(package: str, type_name: str) -> type[Message]:
    """A class of a real generated ``gz.msgs10``: its module guessed from the name, else all imported."""
    parts = type_name.split(".")
    if len(parts) < 3 or ".".join(parts[:2]) != "gz.msgs":
        raise UnknownMessageType(type_name)
    top, nested = parts[2], parts[3:]
    candidates = [f"{package}.{_snake(top)}_pb2"]
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            candidates += [f"{package}.{p.stem}" for p in sorted(Path(location).glob("*_pb2.py"))]
    for module_name in dict.fromkeys(candidates):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        found: Any = getattr(module, top, None)
        for part in nested:
            found = getattr(found, part, None)
        if isinstance(found, type) and issubclass(found, Message):
            return found
    raise UnknownMessageType(type_name)


# ------------------------------------------------------------------------------------- choosing


def _distribution_msgs_dir() -> Path | None:
    """The ``gz/msgs10`` directory of an installed ``gazebo-py-bindings`` (found, not imported)."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if str(file).replace("\\", "/").endswith(PACKAGE_DIR + "__init__.py"):
            return Path(str(dist.locate_file(file))).parent
    return None


def _real_module_available(bindings_dir: Path | None) -> str | None:
    """The location of an importable gz.msgs10 that is not gazebo-py-bindings', else ``None``."""
    try:
        spec = importlib.util.find_spec(MODULE_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    locations = [Path(location).resolve() for location in spec.submodule_search_locations]
    if bindings_dir is not None and bindings_dir.resolve() in locations:
        return None
    try:
        importlib.import_module(MODULE_PACKAGE + ".double_pb2")
    except Exception:  # a broken or incompatible install: not usable
        return None
    return str(locations[0])


def load_messages(sources: Sequence[str] = ("module", "descriptor set", "distribution")) -> GzMessages:
    """The first working source of gz.msgs10 classes among ``sources`` (see the module's docstring)."""
    tried: list[str] = []
    bindings_dir = _distribution_msgs_dir()
    for kind in sources:
        if kind == "module":
            location = _real_module_available(bindings_dir)
            if location is not None:
                return GzMessages(None, MessagesSource("module", location, protobuf_implementation()), MODULE_PACKAGE)
            tried.append("an importable gz.msgs10 (Gazebo Harmonic's Python modules): none")
        elif kind == "descriptor set":
            configured = os.environ.get(ENV_VARIABLE)
            path = Path(configured) if configured else INSTALLED_SET
            if path.exists():
                return GzMessages.from_path(path)
            tried.append(f"{path}{' (' + ENV_VARIABLE + ')' if configured else ''}: missing")
        elif kind == "distribution":
            if bindings_dir is not None:
                return GzMessages.from_path(bindings_dir, "distribution")
            tried.append(f"an installed {DISTRIBUTION}: none")
        else:
            raise DescriptorSetError(f"unknown gz.msgs source {kind!r}")
    raise GzMessagesUnavailable(
        "no gz.msgs10 message classes; tried " + "; ".join(tried) + ". Run scripts/setup (it extracts them from "
        f"PyPI's {DISTRIBUTION}), set {ENV_VARIABLE} to a descriptor set, or install Gazebo Harmonic"
    )


_default: GzMessages | None = None
_default_lock = threading.Lock()


def default_messages() -> GzMessages:
    """The process-wide :class:`GzMessages` (from :func:`load_messages`, loaded on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = load_messages()
        return _default


def message_class(type_name: str) -> type[Message]:
    """Shortcut: ``default_messages().message_class(type_name)``."""
    return default_messages().message_class(type_name)
