"""gz.msgs10 message classes: where they come from, that they are protobuf's fast implementation,
and that generated modules are read without being executed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from bb_robot.gz import messages as gz_messages
from bb_robot.gz.messages import (
    GzMessages,
    GzMessagesUnavailable,
    UnknownMessageType,
    dependency_order,
    file_protos_from,
    load_messages,
    serialized_descriptors,
    write_descriptor_set,
)


def _file(name: str, package: str, message: str, deps: tuple[str, ...] = ()) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name=name, package=package, syntax="proto3")
    proto.dependency.extend(deps)
    proto.message_type.add(name=message).field.add(
        name="data",
        number=1,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
    )
    return proto


def _old_style_module(proto: descriptor_pb2.FileDescriptorProto) -> str:
    """A stand-in for a generated *_pb2.py that must never run (it raises if imported)."""
    return textwrap.dedent(
        f"""\
        raise RuntimeError("executed")
        DESCRIPTOR = _descriptor.FileDescriptor(
          name={proto.name!r},
          serialized_pb={proto.SerializeToString()!r},
        )
        """
    )


def test_fast_classes_for_harmonic_types(messages: GzMessages) -> None:
    assert messages.source.implementation != "python", messages.source
    model_class = messages.message_class("gz.msgs.Model")
    assert model_class.DESCRIPTOR.full_name == "gz.msgs.Model"
    model = model_class(name="ur3e")
    joint = model.joint.add(name="shoulder_pan_joint")
    joint.axis1.position = 0.5
    assert model_class.FromString(model.SerializeToString()) == model
    for name in (
        "gz.msgs.Double",
        "gz.msgs.Actuators",
        "gz.msgs.JointTrajectory",
        "gz.msgs.Clock",
        "gz.msgs.Pose_V",
        "gz.msgs.Float",
        "gz.msgs.Discovery",
    ):
        assert messages.has(name), name
    assert not messages.has("gz.msgs.JointState")  # joint state travels as gz.msgs.Model
    with pytest.raises(UnknownMessageType):
        messages.message_class("ignition.msgs.Double")
    assert messages.message_class("gz.msgs.Double") is messages.message_class("gz.msgs.Double")


def test_descriptors_are_read_from_module_text_without_running_it(tmp_path: Path) -> None:
    base = _file("gz/msgs/base.proto", "gz.msgs", "Base")
    user = _file("gz/msgs/user.proto", "gz.msgs", "User", ("gz/msgs/base.proto", "google/protobuf/any.proto"))
    (tmp_path / "user_pb2.py").write_text(_old_style_module(user))
    (tmp_path / "base_pb2.py").write_text(
        "raise RuntimeError('executed')\n_builder = None\n"
        f"DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile({base.SerializeToString()!r})\n"
    )
    assert serialized_descriptors((tmp_path / "user_pb2.py").read_text()) == [user.SerializeToString()]
    protos = file_protos_from(tmp_path)
    assert sorted(p.name for p in protos) == ["gz/msgs/base.proto", "gz/msgs/user.proto"]
    ordered = [p.name for p in dependency_order(protos)]
    assert ordered.index("google/protobuf/any.proto") < ordered.index("gz/msgs/user.proto")
    assert ordered.index("gz/msgs/base.proto") < ordered.index("gz/msgs/user.proto")
    loaded = GzMessages.from_path(tmp_path)
    assert loaded.new("gz.msgs.User", data=2.0).data == 2.0
    # The same through a descriptor set file, as scripts/setup writes it.
    assert write_descriptor_set(protos, tmp_path / "set" / "x.desc") == 3
    assert GzMessages.from_path(tmp_path / "set" / "x.desc").has("gz.msgs.Base")


def test_missing_dependency_is_an_error() -> None:
    with pytest.raises(ValueError, match="missing"):
        dependency_order([_file("gz/msgs/a.proto", "gz.msgs", "A", ("gz/msgs/nowhere.proto",))])


def test_source_order_and_the_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_descriptor_set([_file("gz/msgs/only.proto", "gz.msgs", "Only")], tmp_path / "only.desc")
    monkeypatch.setenv(gz_messages.ENV_VARIABLE, str(tmp_path / "only.desc"))
    loaded = load_messages(("descriptor set",))
    assert loaded.source.kind == "descriptor set" and loaded.has("gz.msgs.Only")
    monkeypatch.setenv(gz_messages.ENV_VARIABLE, str(tmp_path / "absent.desc"))
    with pytest.raises(GzMessagesUnavailable, match="absent.desc"):
        load_messages(("descriptor set",))


def test_no_gz_package_is_imported_or_installed(messages: GzMessages) -> None:
    """Loading the messages leaves no ``gz`` package behind that could shadow a real Gazebo's."""
    code = (
        "import sys; from bb_robot.gz.messages import load_messages; "
        "m = load_messages(('descriptor set', 'distribution')); m.message_class('gz.msgs.Model'); "
        "print(sorted(k for k in sys.modules if k == 'gz' or k.startswith('gz.')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.stdout.strip() == "[]"
