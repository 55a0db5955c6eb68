"""Every QoS profile of bb_robot's topics, in one place (the tables in ``docs/nodes/*.md``).

All keep the last ``depth`` messages.
"""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy


def profile(
    depth: int,
    reliability: ReliabilityPolicy = ReliabilityPolicy.RELIABLE,
    durability: DurabilityPolicy = DurabilityPolicy.VOLATILE,
) -> QoSProfile:
    """A keep-last profile.

    Args:
        depth: The history depth.
        reliability: Reliable (the default) or best effort.
        durability: Volatile (the default) or transient local (latched).

    Returns:
        A new profile.
    """
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST, reliability=reliability, durability=durability)


#: Latched: ``robot_description``, ``/tf_static``, ``~/serial_manipulator``, ``~/arm_state``,
#: ``<robot>/get/joint_positions_min|max``, the actuators index.
LATCHED_QOS = profile(1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: Only the latest message counts, delivered reliably: ``<robot>/set/*`` and ``<robot>/get/joint_states``
#: (as sas_robot_driver), the actuator command topics.
LATEST_RELIABLE_QOS = profile(1)
#: Only the latest message counts, best effort (matches reliable and best-effort peers): actuator
#: feedback, and the servo bridge's command subscriptions.
LATEST_BEST_EFFORT_QOS = profile(1, reliability=ReliabilityPolicy.BEST_EFFORT)
#: ``~/joint_commands``, ``~/joint_trajectory``, ``joint_states``, ``/diagnostics``, ``~/tip_pose``.
DEFAULT_QOS = profile(10)
#: ``/tf``: what tf2 listeners request; also the description node's joint-state subscriptions.
TF_QOS = profile(100)
#: ROS ``/clock`` from a simulator: best effort, depth 1 (what nodes with ``use_sim_time`` subscribe with).
CLOCK_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
