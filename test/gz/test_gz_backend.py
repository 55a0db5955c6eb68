"""The driver's gazebo backend without ROS, against the C++ world peer (``peer/gz_sim_peer.cc``, the
real ign-transport 11 playing the seed UR3e world's JointPositionController + JointStatePublisher)
and against this project's own transport playing Gazebo (message layouts of Actuators and
JointTrajectory).  Loopback only, a partition per test."""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.gz_helpers import LOOPBACK, Inbox, TransportFactory, wait_until
from helpers.sim_peer import (
    UR3E_STATE_TOPIC,
    UR3E_WORLD,
    WorldPeers,
    sim_peer_or_skip,
    ur3e_peer_args,
    world_peers,
)

from bb_robot.driver.backends.base import BackendCommand, BackendContext, HealthLevel
from bb_robot.driver.backends.gazebo import GazeboBackend
from bb_robot.driver.commands import limits as L
from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.errors import BackendError
from bb_robot.driver.model import driven_joints, load_model_file
from bb_robot.gz.messages import GzMessages

TIMEOUT = 10.0
#: A stand-in for gz.transport13's binding, for machines without Gazebo Harmonic.
STANDIN = Path(__file__).resolve().parent / "standin"


class ListLogger:
    """A logger that keeps ``(level, text)``."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def _add(self, level: str, message: str) -> None:
        self.lines.append((level, message))
        logging.getLogger("test.gazebo").log(getattr(logging, level.upper()), message)

    def debug(self, message: str) -> None:
        self._add("debug", message)

    def info(self, message: str) -> None:
        self._add("info", message)

    def warning(self, message: str) -> None:
        self._add("warning", message)

    def error(self, message: str) -> None:
        self._add("error", message)

    def has(self, text: str, level: str | None = None) -> bool:
        return any(text in line and (level is None or lvl == level) for lvl, line in list(self.lines))


@pytest.fixture(scope="session")
def sim_peer_binary() -> Path:
    return sim_peer_or_skip()


@pytest.fixture(name="world_peers")
def world_peers_fixture(sim_peer_binary: Path, partition: str) -> Iterator[WorldPeers]:
    with world_peers(sim_peer_binary, partition) as start:
        yield start


@pytest.fixture(scope="module")
def ur3e() -> Any:
    if not UR3E_WORLD.is_file():
        pytest.skip(f"no seed world at {UR3E_WORLD}")
    return load_model_file(str(UR3E_WORLD), [])


@pytest.fixture
def make_backend(ur3e: Any, partition: str) -> Iterator[Callable[..., tuple[GazeboBackend, ListLogger]]]:
    made: list[GazeboBackend] = []

    def make(source: str | None = None, robot: Any = None, **options: Any) -> tuple[GazeboBackend, ListLogger]:
        robot = robot if robot is not None else ur3e.robot
        joints = driven_joints(robot)
        logger = ListLogger()
        options.setdefault("partition", partition)
        options.setdefault("ip", LOOPBACK)
        options.setdefault("wait_at_configure", 0.2)
        context = BackendContext(
            robot,
            joints,
            L.from_robot(robot, joints),
            500.0,
            logger,
            options,
            model_source=source if source is not None else ur3e.source,
        )
        backend = GazeboBackend(context)
        made.append(backend)
        return backend, logger

    yield make
    for backend in made:
        backend.disconnect()


def command(mode: CommandMode, positions: list[float] | float, n: int = 6) -> BackendCommand:
    values = np.broadcast_to(np.asarray(positions, dtype=float), (n,)).copy()
    nan = np.full(n, np.nan)
    if mode in (CommandMode.POSITION, CommandMode.HOLD):
        return BackendCommand(np.full(n, int(mode), np.int8), values, np.zeros(n), np.zeros(n), nan)
    if mode == CommandMode.VELOCITY:
        return BackendCommand(np.full(n, int(mode), np.int8), nan, values, nan, nan)
    return BackendCommand(np.full(n, int(mode), np.int8), nan, nan, nan, values)


def drive(backend: GazeboBackend, cmd: BackendCommand, until: Callable[[], bool], timeout: float = TIMEOUT) -> bool:
    """Write ``cmd`` at 200 Hz until ``until()`` (the loop re-sends the latest command every cycle)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        backend.write(cmd, time.monotonic_ns())
        if until():
            return True
        time.sleep(0.005)
    return until()


def positions(backend: GazeboBackend) -> np.ndarray:
    return backend.read(time.monotonic_ns()).positions


# ------------------------------------------------------------------ the C++ world peer
def test_closed_loop_on_the_seed_world(make_backend: Any, world_peers: Any) -> None:
    peer = world_peers(*ur3e_peer_args(initial=[0.1] * 6, extra=["--extra-joint", "ghost_joint"]))
    backend, log = make_backend()
    backend.connect(TIMEOUT)
    assert backend.capabilities.modes == frozenset({CommandMode.POSITION})
    assert wait_until(lambda: bool((backend.read(0).stamps > 0).all()), TIMEOUT), log.lines
    np.testing.assert_allclose(positions(backend), 0.1, atol=1e-9)
    target = [0.5, -0.4, 0.3, -0.2, 0.6, -0.3]
    assert drive(backend, command(CommandMode.POSITION, target), lambda: np.allclose(positions(backend), target))
    # The C++ side received gz.msgs.Double on the seed's topics (its CMD lines name each joint).
    assert peer.wait_for(lambda lines: sum(line.startswith("CMD ") for line in lines) == 6, TIMEOUT), peer.lines
    sample = backend.read(time.monotonic_ns())
    assert sample.efforts is not None and (sample.stamps > 0).all()
    health = backend.health()
    assert health.connected and health.message == "connected to Gazebo", health
    assert "ghost_joint" in health.values["ignored joints"]  # a joint the robot lacks: ignored
    assert log.has("connected: joint states of 6 joints")
    assert not log.has("position limits")  # the peer reports the model's own limits
    assert UR3E_STATE_TOPIC in health.values["joint state topics"]


def test_joint_states_are_passed_on_as_they_arrive(make_backend: Any, world_peers: Any) -> None:
    world_peers(*ur3e_peer_args(initial=[0.1] * 6))
    backend, log = make_backend()
    samples: list[tuple[Any, str]] = []
    assert backend.watch_samples(lambda sample: samples.append((sample, threading.current_thread().name)))
    backend.connect(TIMEOUT)
    assert wait_until(lambda: len(samples) >= 5, TIMEOUT), log.lines
    received = list(samples)
    # From the transport's thread, one per gz.msgs.Model message, each newer than the one before.
    assert all(thread != threading.current_thread().name for _, thread in received)
    stamps = [sample.stamp_ns for sample, _ in received]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    last = received[-1][0]
    assert (last.stamps > 0).all()
    np.testing.assert_allclose(last.positions, 0.1, atol=1e-9)
    backend.watch_samples(None)

    def handled() -> int:
        return int(backend.health().values["joint state messages"])

    # A message being handled when the listener went away may still land.  Messages are handled one
    # after the other (the transport's one data thread), each counted before it reads the listener:
    # once one more than now has been counted, none that saw the listener is still in hand.
    gone = handled()
    assert wait_until(lambda: handled() > gone, TIMEOUT), log.lines
    count = len(samples)
    assert wait_until(lambda: handled() > gone + 50, TIMEOUT), log.lines  # 50 more handled: none passed on
    assert len(samples) == count


def test_waits_for_gazebo_then_reconnects_after_a_restart(make_backend: Any, world_peers: Any) -> None:
    backend, log = make_backend(silence_timeout=0.5)
    backend.connect(TIMEOUT)  # nothing running: configure goes on, and says why it waits
    assert log.has("waiting for Gazebo: no joint state yet on " + UR3E_STATE_TOPIC, "warning")
    health = backend.health()  # a warning, not a lost connection: the driver keeps running
    assert health.connected and health.level == HealthLevel.WARN and "waiting" in health.message
    # Held before any state: nothing to hold, nothing sent.
    backend.write(command(CommandMode.HOLD, math.nan), time.monotonic_ns())
    assert backend.health().values["commands sent"] == "0"
    peer = world_peers(*ur3e_peer_args(initial=[0.2] * 6))
    assert wait_until(lambda: log.has("gazebo: connected"), TIMEOUT), log.lines
    target = [0.3, 0.25, 0.2, 0.15, 0.1, 0.05]
    assert drive(backend, command(CommandMode.POSITION, target), lambda: np.allclose(positions(backend), target))
    peer.stop()  # Gazebo goes away (BYE)...
    assert wait_until(lambda: log.has("no joint state from Gazebo"), TIMEOUT), log.lines
    assert "waiting" in backend.health().message
    restarted = world_peers(*ur3e_peer_args(initial=[0.0] * 6))  # ...and comes back with the arm at 0
    # The latest command keeps being sent: the restarted world gets it and the arm returns to it.
    assert drive(backend, command(CommandMode.POSITION, target), lambda: np.allclose(positions(backend), target))
    assert restarted.wait_line("CMD shoulder_pan_joint 0.300000", TIMEOUT), restarted.lines
    assert wait_until(lambda: sum("gazebo: connected" in line for _, line in log.lines) >= 2, TIMEOUT), log.lines
    assert backend.health().message == "connected to Gazebo"


def test_a_crashed_gazebo_is_noticed_by_silence(make_backend: Any, world_peers: Any) -> None:
    peer = world_peers()
    backend, log = make_backend(silence_timeout=0.5)
    backend.connect(TIMEOUT)
    assert wait_until(lambda: backend.health().connected, TIMEOUT)
    peer.kill()  # no BYE
    assert wait_until(lambda: log.has("no joint state from Gazebo for 0.5 s"), TIMEOUT), log.lines
    assert backend.health().connected  # a warning by default...


def test_fault_on_disconnect_reports_a_lost_connection(make_backend: Any) -> None:
    backend, _ = make_backend(fault_on_disconnect=True)
    backend.connect(TIMEOUT)
    health = backend.health()  # ...or a lost connection (the driver goes to error until reset)
    assert not health.connected and "waiting" in health.message


def test_wrong_partition_is_diagnosed(make_backend: Any, world_peers: Any, partition: str) -> None:
    world_peers(*ur3e_peer_args(), partition_override=partition + "_sim")
    backend, log = make_backend(wait_at_configure=3.0)
    backend.connect(TIMEOUT)
    # The built-in transport sees the simulator's discovery traffic in the other partition.
    assert wait_until(
        lambda: any(f"'{partition}_sim'" in p and "joint_state" in p for p in backend.transport.problems()), TIMEOUT
    )
    assert wait_until(lambda: "transport problems" in backend.health().values, TIMEOUT)
    assert f"'{partition}_sim'" in backend.health().values["transport problems"]
    assert log.has(f"partition '{partition}_sim'"), log.lines  # logged by the transport as a warning
    assert "waiting" in backend.health().message


def test_type_name_mismatch_is_diagnosed(make_backend: Any, world_peers: Any) -> None:
    world_peers(*ur3e_peer_args(extra=["--type-prefix", "ignition.msgs"]))  # a Fortress-style peer
    backend, log = make_backend(wait_at_configure=3.0)
    backend.connect(TIMEOUT)
    assert wait_until(lambda: any("ignition.msgs.Model" in p for p in backend.transport.problems()), TIMEOUT)
    assert "waiting" in backend.health().message


def test_limits_reported_by_gazebo_are_checked(make_backend: Any, world_peers: Any) -> None:
    world_peers(*ur3e_peer_args(limits={"elbow_joint": (-1.0, 1.0)}))
    backend, log = make_backend()
    backend.connect(TIMEOUT)
    assert wait_until(lambda: log.has("position limits of elbow_joint are [-1, 1]"), TIMEOUT), log.lines
    assert log.has("will not be reached")
    assert not log.has("position limits of shoulder_pan_joint")


def test_require_gazebo_fails_configure_with_the_diagnosis(make_backend: Any) -> None:
    backend, _ = make_backend(require_gazebo=True)
    with pytest.raises(BackendError, match="no joint state within 0.5 s.*is Gazebo running"):
        backend.connect(0.5)


def test_configuration_errors(make_backend: Any, tmp_path: Path) -> None:
    urdf, _ = make_backend(source=str(tmp_path / "arm.urdf"))
    with pytest.raises(BackendError, match="topics from an SDF world"):
        urdf.connect(1.0)
    bad, _ = make_backend(
        position_topics=["nojoint=/x"], joint_state_topics=["/js"], world_file=str(tmp_path / "x.txt")
    )
    with pytest.raises(BackendError, match="not a driven joint"):
        bad.connect(1.0)
    # Without plugins: no controller and no state for the joints.
    world = tmp_path / "bare.sdf"
    world.write_text('<sdf version="1.11"><world name="w"><include><uri>ur3e.sdf</uri></include></world></sdf>')
    (tmp_path / "ur3e.sdf").write_text((UR3E_WORLD.parent / "ur3e.sdf").read_text())
    bare, _ = make_backend(world_file=str(world))
    with pytest.raises(BackendError, match="shoulder_pan_joint has no controller.*no JointStatePublisher"):
        bare.connect(1.0)


# ------------------------------------------------------------------ message layouts (our transport as Gazebo)
ACT_ARM = """<?xml version="1.0"?>
<sdf version="1.9"><world name="w"><model name="arm">
  <link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/>
  <joint name="j1" type="revolute"><parent>base</parent><child>l1</child>
    <axis><xyz>0 0 1</xyz><limit><lower>-2</lower><upper>2</upper></limit></axis></joint>
  <joint name="j2" type="revolute"><parent>l1</parent><child>l2</child>
    <axis><xyz>0 1 0</xyz><limit><lower>-2</lower><upper>2</upper></limit></axis></joint>
  <joint name="j3" type="revolute"><parent>l2</parent><child>l3</child>
    <axis><xyz>0 1 0</xyz><limit><lower>-2</lower><upper>2</upper></limit></axis></joint>
  {plugins}
  <plugin filename="gz-sim-joint-state-publisher-system" name="gz::sim::systems::JointStatePublisher"/>
</model></world></sdf>
"""


def _jpc(joint: str, body: str) -> str:
    return (
        '<plugin filename="gz-sim-joint-position-controller-system" name="gz::sim::systems::JointPositionController">'
        f"<joint_name>{joint}</joint_name>{body}</plugin>"
    )


class FakeGazebo:
    """Our own transport publishing the arm's joint state at 100 Hz (in a thread), as Gazebo would:
    every joint at position 0, with the message's number (1, 2, ...) as its force, so that a test can
    tell which message a reader took last.

    Its publisher does not re-send its latest message when a subscriber's filter arrives (the
    built-in transport's ``resend_latest``, on by default, for late joiners): that re-send goes to
    every subscriber of the topic, so a subscriber connecting again after :meth:`stop` would hand
    the backend the last message a second time, as a fresh arrival. Under the slow host one did, 8 ms
    after a test had read its state (a reconnect after a discovery silence, by its timing)."""

    def __init__(self, transport_factory: TransportFactory, messages: GzMessages, joints: list[str]) -> None:
        self.gz = transport_factory()
        self._publisher = self.gz.advertise("/world/w/model/arm/joint_state", "gz.msgs.Model", resend_latest=False)
        self._messages, self._joints = messages, joints
        #: The number of the last message published.
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            number = self.sent + 1
            model = self._messages.new("gz.msgs.Model", name="arm")
            for joint in self._joints:
                axis = model.joint.add(name=joint).axis1
                axis.position, axis.force = 0.0, float(number)
            self._publisher.publish(model)
            self.sent = number

    def stop(self) -> int:
        """Stop publishing; returns the number of the last message published."""
        self._stop.set()
        self._thread.join()
        return self.sent


def _arm_backend(make_backend: Any, path: Path, **options: Any) -> tuple[GazeboBackend, ListLogger]:
    loaded = load_model_file(str(path), [])
    return make_backend(source=loaded.source, robot=loaded.robot, **options)


def test_actuators_and_trajectory_messages(
    make_backend: Any, transport_factory: TransportFactory, messages: GzMessages, tmp_path: Path
) -> None:
    plugins = (
        _jpc("j1", "<use_actuator_msg>true</use_actuator_msg><actuator_number>2</actuator_number>")
        + _jpc("j2", "<use_actuator_msg>true</use_actuator_msg><actuator_number>0</actuator_number>")
        + '<plugin filename="gz-sim-joint-trajectory-controller-system" '
        'name="gz::sim::systems::JointTrajectoryController"><joint_name>j3</joint_name></plugin>'
    )
    world = tmp_path / "arm.sdf"
    world.write_text(ACT_ARM.format(plugins=plugins))
    fake = FakeGazebo(transport_factory, messages, ["j1", "j2", "j3"])
    gz = fake.gz
    actuators, trajectories = Inbox(), Inbox()
    gz.subscribe("/actuators", "gz.msgs.Actuators", actuators)
    gz.subscribe("/model/arm/joint_trajectory", "gz.msgs.JointTrajectory", trajectories)
    try:
        backend, log = _arm_backend(make_backend, world, wait_at_configure=3.0)
        backend.connect(TIMEOUT)
        assert log.has("/actuators (gz.msgs.Actuators): the driver sends position[1] as 0"), log.lines
        cmd = command(CommandMode.POSITION, [0.5, -0.25, 0.75], n=3)
        assert drive(backend, cmd, lambda: bool(actuators.values()) and bool(trajectories.values()))
    finally:
        fake.stop()
    act = actuators.values()[-1]
    assert list(act.position) == [-0.25, 0.0, 0.5] and list(act.velocity) == []
    traj = trajectories.values()[-1]
    assert list(traj.joint_names) == ["j3"]
    assert [list(p.positions) for p in traj.points] == [[0.75]]


def test_malformed_joint_states_are_reported_and_change_nothing(
    make_backend: Any, transport_factory: TransportFactory, messages: GzMessages, tmp_path: Path
) -> None:
    world = tmp_path / "arm.sdf"
    world.write_text(ACT_ARM.format(plugins=_jpc("j1", "") + _jpc("j2", "") + _jpc("j3", "")))
    fake = FakeGazebo(transport_factory, messages, ["j1", "j2", "j3"])
    gz = fake.gz
    try:
        backend, log = _arm_backend(make_backend, world, wait_at_configure=3.0)
        backend.connect(TIMEOUT)
        assert wait_until(lambda: bool((backend.read(0).stamps > 0).all()), TIMEOUT), log.lines
        last = fake.stop()
        # The last valid message may still be on its way: `before` is the state once the backend has
        # taken it (its number is every joint's force), not whatever it holds when the fake stops.
        assert wait_until(lambda: bool((backend.read(0).efforts == last).all()), TIMEOUT), (
            f"message {last} not taken: forces {backend.read(0).efforts}",
            log.lines,
        )
        before = backend.read(0)
        publisher = gz.advertise("/world/w/model/arm/joint_state", "gz.msgs.Model")
        bad = messages.new("gz.msgs.Model", name="arm")
        bad.joint.add(name="j2").axis1.position = math.nan
        bad.joint.add(name="j3").axis1.velocity = math.inf
        publisher.publish_raw(b"\xff\xff\xff not protobuf")
        publisher.publish(bad)
        assert wait_until(lambda: log.has("ignoring the state of joint 'j3'"), TIMEOUT), log.lines
        assert log.has("ignoring the state of joint 'j2' in /world/w/model/arm/joint_state: not finite", "warning")
        assert log.has("/world/w/model/arm/joint_state: cannot decode a gz.msgs.Model"), log.lines
        after = backend.read(0)
        np.testing.assert_array_equal(after.positions, before.positions)
        np.testing.assert_array_equal(after.efforts, before.efforts)
        np.testing.assert_array_equal(after.stamps, before.stamps)
    finally:
        fake.stop()


def test_command_rate_limits_resending_unchanged_commands(
    make_backend: Any, transport_factory: TransportFactory, messages: GzMessages, tmp_path: Path
) -> None:
    world = tmp_path / "arm.sdf"
    world.write_text(ACT_ARM.format(plugins=_jpc("j1", "") + _jpc("j2", "") + _jpc("j3", "")))
    backend, _ = _arm_backend(make_backend, world, command_rate=10.0)
    backend.connect(0.1)
    start = time.monotonic_ns()
    cmd = command(CommandMode.POSITION, [0.1, 0.2, 0.3], n=3)
    for k in range(100):  # 1 s of a 100 Hz loop
        backend.write(cmd, start + k * 10_000_000)
    assert int(backend.health().values["commands sent"]) == 3 * 10
    changed = command(CommandMode.POSITION, [0.1, 0.2, 0.35], n=3)
    backend.write(changed, start + 955_000_000)  # a change goes out at once (only the changed joint)
    assert int(backend.health().values["commands sent"]) == 3 * 10 + 1


@pytest.fixture
def official_binding(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """gz.transport13's binding: the real one where Gazebo Harmonic is installed, else the stand-in
    of ``standin/gz/transport13/_transport.py`` (the binding's interface over the built-in client)."""
    from bb_robot.gz import official

    monkeypatch.setenv("GZ_IP", LOOPBACK)  # the official transport takes no ip option: GZ_IP it is
    if official.available() is None:
        yield "real"
        return
    saved = {name: module for name, module in sys.modules.items() if name == "gz" or name.startswith("gz.")}
    for name in saved:
        del sys.modules[name]
    monkeypatch.syspath_prepend(str(STANDIN))
    yield "stand-in"
    for name in [name for name in sys.modules if name == "gz" or name.startswith("gz.")]:
        del sys.modules[name]
    sys.modules.update(saved)


def test_the_official_transport_drives_the_seed_world(
    make_backend: Any, world_peers: Any, official_binding: str
) -> None:
    peer = world_peers(*ur3e_peer_args(initial=[0.1] * 6))
    backend, log = make_backend(gz_transport="official")
    backend.connect(TIMEOUT)
    assert backend.transport.implementation == "official"
    assert wait_until(lambda: bool((backend.read(0).stamps > 0).all()), TIMEOUT), log.lines
    np.testing.assert_allclose(positions(backend), 0.1, atol=1e-9)
    target = [0.5, -0.4, 0.3, -0.2, 0.6, -0.3]
    assert drive(backend, command(CommandMode.POSITION, target), lambda: np.allclose(positions(backend), target))
    assert peer.wait_for(lambda lines: sum(line.startswith("CMD ") for line in lines) == 6, TIMEOUT), peer.lines
    health = backend.health()
    assert health.connected and health.message == "connected to Gazebo", health
    assert health.values["gz transport"].startswith("official, partition")


def test_the_official_transport_adapter(world_peers: Any, official_binding: str, partition: str) -> None:
    from bb_robot.gz.api import create_transport

    world_peers(*ur3e_peer_args(initial=[0.25] * 6))
    log = ListLogger()
    transport = create_transport("official", partition=partition, logger=log)
    try:
        messages = transport.messages
        states: list[Any] = []
        transport.subscribe(UR3E_STATE_TOPIC, "gz.msgs.Model", lambda message, info: states.append((message, info)))
        assert wait_until(lambda: bool(states), TIMEOUT)
        message, info = states[-1]
        assert {joint.name for joint in message.joint} >= {"shoulder_pan_joint", "wrist_3_joint"}
        assert info.topic == UR3E_STATE_TOPIC and info.partition == partition and info.type_name == "gz.msgs.Model"
        assert UR3E_STATE_TOPIC in transport.topic_list()
        assert transport.publishers(UR3E_STATE_TOPIC) == [("gz.msgs.Model", "")]
        # A callback that raises is reported, never raised into gz-transport's thread.
        transport.subscribe(UR3E_STATE_TOPIC, "gz.msgs.Model", lambda message, info: 1 / 0)
        assert wait_until(lambda: log.has("a message was not handled: ZeroDivisionError"), TIMEOUT), log.lines
        publisher = transport.advertise("/bb_robot/official_probe", "gz.msgs.Double")
        assert transport.advertise("/bb_robot/official_probe", "gz.msgs.Double") is publisher
        with pytest.raises(ValueError, match="already advertised as gz.msgs.Double"):
            transport.advertise("/bb_robot/official_probe", "gz.msgs.Float")
        with pytest.raises(TypeError, match="advertised as gz.msgs.Double, not gz.msgs.Float"):
            publisher.publish(messages.new("gz.msgs.Float"))
        with pytest.raises(ValueError, match="needs a concrete type"):
            transport.subscribe("/any", "google.protobuf.Message", lambda message, info: None)
        assert "cannot be diagnosed" in transport.diagnostics().format()
    finally:
        transport.close()


def test_an_unknown_transport_is_refused(make_backend: Any) -> None:
    unknown, _ = make_backend(gz_transport="zenoh")
    with pytest.raises(BackendError, match="unknown gz transport 'zenoh'"):
        unknown.connect(1.0)
