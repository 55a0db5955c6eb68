"""The driver publishes ``joint_states`` from a thread of its own, not from its executor.

A callback that takes long in the executor thread (a trajectory checked for collisions as its
goal arrives, a configure) must not hold the joint states back: on a slow 2-core host they paused
for 150 ms while the demo's goal was checked, when a timer of the executor published them
(issue 33; docs/nodes/driver.md).  Here the driver node runs in this process and its executor is
never spun at all: joint_states must still flow, at their rate, to a subscriber in another
executor.
"""

from __future__ import annotations

import uuid
from typing import Any

from helpers.nodes import TIMEOUT, Probe

from bb_robot.resources import bundled_model


def test_joint_states_flow_while_the_executor_never_spins(probe: Probe) -> None:
    from lifecycle_msgs.msg import State
    from rclpy.lifecycle import TransitionCallbackReturn
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState

    from bb_robot.nodes.driver import DriverNode

    namespace = f"/t{uuid.uuid4().hex[:10]}"
    stamps: list[int] = []

    def on_state(message: Any) -> None:
        stamps.append(message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec)

    probe.node.create_subscription(JointState, f"{namespace}/joint_states", on_state, 100)
    driver = DriverNode(
        context=probe.context,
        namespace=namespace,
        parameter_overrides=[
            Parameter("model", value=str(bundled_model())),
            Parameter("autostart", value=False),
            Parameter("publish_rate", value=100.0),
            # No real-time scheduling: activation would put the calling thread, this test process's
            # main thread, at real-time priority 1 for the rest of the session.
            Parameter("realtime_priority", value=0),
        ],
    )
    try:
        # The transitions run here, in this thread; nothing ever spins the driver's executor.
        assert driver.trigger_configure() == TransitionCallbackReturn.SUCCESS
        assert driver.trigger_activate() == TransitionCallbackReturn.SUCCESS
        assert driver._state_machine.current_state[0] == State.PRIMARY_STATE_ACTIVE
        assert probe.spin_until(lambda: len(set(stamps)) >= 50, TIMEOUT), f"{len(set(stamps))} joint states"
        assert sorted(stamps) == stamps and len(set(stamps)) == len(stamps)  # each sample once, in order
    finally:
        driver.shutdown()
        driver.destroy_node()
