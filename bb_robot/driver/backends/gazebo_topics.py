"""Which gz-transport topics the gazebo backend uses, read from the SDF world's plugins.

The one place the backend reads topics out of a world: :mod:`bb_robot.gz.topics` does the reading
(gz-sim 8's naming rules); the backend imports its names from here only.
"""

from __future__ import annotations

import os
from pathlib import Path

from bb_robot.driver.backends.base import Backend
from bb_robot.driver.errors import BackendError
from bb_robot.gzsim.topics import (
    ACTUATORS,
    CLOCK,
    DOUBLE,
    FLOAT,
    JOINT_TRAJECTORY,
    MODEL,
    CommandTopic,
    GazeboTopics,
    TopicError,
    derive_topics,
    with_overrides,
)

__all__ = [
    "ACTUATORS",
    "CLOCK",
    "DOUBLE",
    "FLOAT",
    "JOINT_TRAJECTORY",
    "MODEL",
    "CommandTopic",
    "GazeboTopics",
    "load_topics",
]


def load_topics(backend: Backend) -> GazeboTopics:
    """The topics of ``backend``'s joints: from the SDF world (``gazebo.world_file`` or the model's
    file) or the explicit ``gazebo.*_topics``, with the overrides applied.

    Raises:
        BackendError: Neither gives the topics, or the world cannot be read.
    """
    path = backend.text_option("world_file") or (backend.context.model_source or "")
    overrides = {key: backend.list_option(f"{key}_topics") for key in ("position", "velocity", "effort")}
    joint_state = backend.list_option("joint_state_topics")
    clock = backend.text_option("clock_topic")
    if path and Path(path).suffix.lower() in (".sdf", ".world"):
        topics = _derive(backend, path)
    elif joint_state or any(overrides.values()):
        world = backend.text_option("world_name") or None
        topics = GazeboTopics(world, "", tuple(backend.joint_names), (), (), f"/world/{world}/clock" if world else None)
    else:
        raise BackendError(
            "the gazebo backend takes its topics from an SDF world: load the model from the world file "
            "(model parameter), set gazebo.world_file, or give gazebo.position_topics and "
            "gazebo.joint_state_topics"
            + (f" (the model came from {path})" if path else " (the model came from robot_description)")
        )
    try:
        return with_overrides(topics, joint_state=joint_state, clock=clock, **overrides)
    except TopicError as error:
        raise BackendError(f"gazebo topics: {error}") from None


def _derive(backend: Backend, path: str) -> GazeboTopics:
    from bb_robot.errors import BbRobotError
    from bb_robot.loading import load_file

    scope = backend.text_option("model_scope") or backend.context.model_scope
    dirs = list(backend.context.model_dirs)
    dirs.append(os.path.dirname(os.path.realpath(path)))
    try:
        result = load_file(path, scope=scope, resource_paths=dirs).sdf
    except BbRobotError as error:
        raise BackendError(f"gazebo: cannot read the world {path}: {error}") from None
    if result is None:
        raise BackendError(f"gazebo: cannot read the world {path}: it is URDF, not SDF")
    missing = [j for j in backend.joint_names if j not in result.scoped_names]
    if missing:
        raise BackendError(
            f"gazebo: the model '{result.source_scope}' of {path} has no joint {', '.join(missing)}; "
            "set gazebo.model_scope to the robot's model"
        )
    return derive_topics(
        result,
        backend.joint_names,
        world_name=backend.text_option("world_name") or None,
        model_name=backend.text_option("model_name") or None,
    )
