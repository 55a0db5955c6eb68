"""The interface packages ``scripts/build_interfaces`` compiles into this venv, message by message.

Run in both venvs (the Jazzy profile takes every ``test/nodes/test_*.py``).  Every message type of
each package (messages, service requests, responses and events, action goals, results, feedback and
the messages of an action's services and topics), each field set to a value other than its default
(:mod:`helpers.interface_samples`), goes through rclpy's serialisation and back unchanged.  That
passes only when the generated C structs, the Python extension's conversions and the Fast DDS
typesupport agree field by field, however the build compiled them (unoptimised, one translation unit
for several messages: docs/distributions.md, "How they are compiled").
"""

from __future__ import annotations

import importlib.util

import pytest
from helpers.interface_samples import filled, message_types

#: The packages scripts/build_interfaces builds (interfaces/, MoveIt's archives, composition_interfaces),
#: and how many message types each has at the pinned release.
BUILT = {
    "tf2_msgs": 15,
    "control_msgs": 23,
    "composition_interfaces": 9,
    "moveit_msgs": 203,
    "octomap_msgs": 8,
    "object_recognition_msgs": 19,
}


@pytest.mark.parametrize("package", sorted(BUILT))
def test_every_message_type_round_trips_with_every_field_set(package: str) -> None:
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not built in this venv: run scripts/setup")
    from rclpy.serialization import deserialize_message, serialize_message

    types = list(message_types(package))
    assert len(types) == BUILT[package], [name for name, _ in types]
    for name, cls in types:
        message = filled(cls)
        if cls.get_fields_and_field_types():
            assert message != cls(), f"{name}: the sample equals the default message"
        back = deserialize_message(serialize_message(message), cls)
        assert back == message, f"{name}: changed in the round trip:\n{message}\n{back}"
