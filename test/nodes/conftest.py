"""Fixtures of the node tests: real processes over real DDS.

- Every test session picks a random ``ROS_DOMAIN_ID`` (0–101; ``BB_ROBOT_TEST_DOMAIN_ID``
  chooses one) before anything initialises ROS, so that test runs on the same machine at the
  same time do not hear each other; traffic stays on this host
  (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``), ROS logs go to a temporary directory, and a
  Fast DDS profile makes new participants announce themselves more often at start-up.
- ``start_node`` runs a node as a subprocess (a :class:`helpers.nodes.NodeProcess`), stopped after
  the test with SIGINT, then SIGTERM, never SIGKILL.
- ``probe`` is an rclpy node in the test process (a :class:`helpers.nodes.Probe`).

The tests import those classes, ``TIMEOUT`` and the ``StartNode`` type from ``helpers.nodes``
(test files never import from conftest).
"""

from __future__ import annotations

import os
import random
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DOMAIN_ID = int(os.environ.get("BB_ROBOT_TEST_DOMAIN_ID", random.SystemRandom().randint(0, 101)))
os.environ["ROS_DOMAIN_ID"] = str(DOMAIN_ID)
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_LOG_DIR"] = tempfile.mkdtemp(prefix="bb_robot_ros_log_")
# Fast DDS announces a new participant 5 times, 100 ms apart, then every 3 s.  Here a freshly
# started node was usually found only at that 3 s announcement (measured: 3.5 s from start in
# most runs, 0.6 s in the others), which made every test wait.  Twenty initial announcements
# make discovery take about a second; nothing the node does depends on it.
_PROFILE = Path(os.environ["ROS_LOG_DIR"]) / "fastdds_test_profile.xml"
_PROFILE.write_text(
    """<?xml version="1.0" encoding="UTF-8" ?>
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <participant profile_name="bb_robot_tests" is_default_profile="true">
    <rtps><builtin><discovery_config>
      <initialAnnouncements><count>20</count><period><nanosec>100000000</nanosec></period></initialAnnouncements>
    </discovery_config></builtin></rtps>
  </participant>
</profiles>
"""
)
os.environ.setdefault("FASTDDS_DEFAULT_PROFILES_FILE", str(_PROFILE))

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed: run scripts/setup")

# Imported after the environment above is set, like every node test.
from helpers.nodes import NodeProcess, Probe, StartNode  # noqa: E402


def pytest_report_header() -> str:
    return f"node tests: ROS_DOMAIN_ID={DOMAIN_ID}"


@pytest.fixture
def start_node(tmp_path: Path) -> Iterator[StartNode]:
    """``start_node(parameters, namespace=None, args=(), **options)`` → a running :class:`NodeProcess`
    (``options``: ``module``, ``node``, ``pythonpath``, ``python``, ``environment``, see :class:`NodeProcess`)."""
    started: list[NodeProcess] = []

    def start(
        parameters: dict[str, Any], namespace: str | None = None, args: tuple[str, ...] = (), **options: Any
    ) -> NodeProcess:
        namespace = namespace or f"/t{uuid.uuid4().hex[:10]}"
        node = NodeProcess(namespace, parameters, tmp_path, args, **options)
        started.append(node)
        return node

    yield start
    for node in started:
        status = node.stop()
        assert status is not None, f"{node.name} did not stop on SIGINT/SIGTERM"


@pytest.fixture(scope="session")
def ros_context() -> Iterator[Any]:
    context = rclpy.context.Context()
    rclpy.init(context=context)
    yield context
    rclpy.shutdown(context=context)


@pytest.fixture
def probe(ros_context: Any) -> Iterator[Probe]:
    p = Probe(ros_context)
    yield p
    p.destroy()
