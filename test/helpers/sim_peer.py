"""The C++ stand-in for a Gazebo world (``test/gz/peer/gz_sim_peer.cc``), for the gazebo backend's tests and
benchmark: JointPositionController + JointStatePublisher of the seed's UR3e world, over ign-transport 11.

:func:`build_sim_peer` compiles it once (like ``gz_peer``); :func:`ur3e_peer_args` gives the arguments
for the UR3e world's six joints with the topics the seed's working configuration uses.  For tests:
:func:`sim_peer_or_skip` (the binary, or a skip saying why not) and :func:`world_peers` (starts world
peers in a partition, stops them at the end), the one world-peer fixture of the backend's and the
driver node's tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from helpers.cpp_peer import Peer, PeerUnavailable, build_peer
from helpers.robot_files import CORPUS_DIR
from helpers.robots import UR3E_JOINTS

SIM_PEER_SOURCE = Path(__file__).resolve().parents[1] / "gz" / "peer" / "gz_sim_peer.cc"
CACHE_DIR = Path(__file__).resolve().parents[2] / ".venv" / "cache" / "gz_peer"
UR3E_WORLD = CORPUS_DIR / "sas_robot_driver_gazebo" / "sdf" / "ur3e_world.sdf"
UR3E_STATE_TOPIC = "/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state"
#: ur3e.sdf's position limits, as Gazebo reports them (wrist_3_joint: -inf, inf).
UR3E_LIMITS = {
    "shoulder_pan_joint": (-math.tau, math.tau),
    "shoulder_lift_joint": (-math.tau, math.tau),
    "elbow_joint": (-math.pi, math.pi),
    "wrist_1_joint": (-math.tau, math.tau),
    "wrist_2_joint": (-math.tau, math.tau),
    "wrist_3_joint": (-math.inf, math.inf),
}


def build_sim_peer(cache_dir: Path = CACHE_DIR) -> Path:
    return build_peer(cache_dir, SIM_PEER_SOURCE)


def ur3e_command_topic(joint: str) -> str:
    return f"/model/ur3e/joint/{joint}/0/cmd_pos"


def ur3e_driver_parameters(partition: str, rate: float, **overrides: Any) -> dict[str, Any]:
    """The driver node's parameters for the seed's UR3e world against this peer: the gazebo backend
    on the world file, active and armed, no watchdog, loopback only; ``overrides`` replace keys
    (``gazebo`` entries are merged)."""
    gazebo = {"partition": partition, "ip": "127.0.0.1", **overrides.pop("gazebo", {})}
    return {
        "backend": "gazebo",
        "model": str(UR3E_WORLD),
        "robot_name": "ur3e",
        "autostart": True,
        "auto_arm": True,
        "command_timeout": 0.0,
        "rate": rate,
        # The world's collision meshes are not in the shared corpus (config/worlds/ur3e_world.yaml).
        "collision.check": False,
        **overrides,
        "gazebo": gazebo,
    }


def ur3e_peer_args(
    *,
    rate: float = 250.0,
    max_velocity: float = 2.0,
    initial: Sequence[float] | None = None,
    limits: dict[str, tuple[float, float]] | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """Arguments of ``gz_sim_peer`` playing the UR3e world (``extra``: options such as ``--clock T``)."""
    table = {**UR3E_LIMITS, **(limits or {})}
    start = list(initial) if initial is not None else [0.0] * len(UR3E_JOINTS)
    specs = [
        f"{joint},{ur3e_command_topic(joint)},{table[joint][0]!r},{table[joint][1]!r},{start[i]!r}"
        for i, joint in enumerate(UR3E_JOINTS)
    ]
    return [UR3E_STATE_TOPIC, "ur3e", f"{rate:g}", f"{max_velocity:g}", *extra, *specs]


def start_sim_peer(binary: Path, partition: str, args: Sequence[str]) -> Peer:
    peer = Peer(binary, args, partition)
    assert peer.wait_line("READY", 15.0), f"the C++ world peer did not start: {peer.lines}"
    return peer


#: Starts a world peer: ``start(*gz_sim_peer arguments, partition_override=None)`` (no arguments:
#: :func:`ur3e_peer_args`).
WorldPeers = Callable[..., Peer]


def sim_peer_or_skip(*, need_world: bool = False) -> Path:
    """The compiled world peer; skips the test (saying why) when it cannot be built, or with
    ``need_world`` when the seed's world is absent."""
    if need_world and not UR3E_WORLD.is_file():
        pytest.skip(f"no seed world at {UR3E_WORLD}")
    try:
        return build_sim_peer()
    except PeerUnavailable as error:
        pytest.skip(str(error))


@contextmanager
def world_peers(binary: Path, partition: str) -> Iterator[WorldPeers]:
    """Starts C++ world peers in ``partition`` (or a ``partition_override``); stops them at the end."""
    started: list[Peer] = []

    def start(*args: str, partition_override: str | None = None) -> Peer:
        peer = start_sim_peer(binary, partition_override or partition, list(args) or ur3e_peer_args())
        started.append(peer)
        return peer

    try:
        yield start
    finally:
        for peer in started:
            peer.stop()
