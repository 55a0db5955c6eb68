"""The driver's safety state, and what it passes on to the node.

- :mod:`~bb_robot.driver.state.arming`: the arming state machine (disarmed, armed, error);
- :mod:`~bb_robot.driver.state.restarts`: whether this driver process is a respawn;
- :mod:`~bb_robot.driver.state.samples`: passing every new joint sample on to one listener;
- :mod:`~bb_robot.driver.state.snapshot`: the core's settings, the snapshot it publishes each
  cycle, its command latency.

May import: :mod:`~bb_robot.driver.backends`, :mod:`~bb_robot.driver.timing`,
:mod:`~bb_robot.driver.commands`, :mod:`~bb_robot.driver.errors`; not
:mod:`~bb_robot.driver.cycle` (a sibling), nor the rooms above (servo, guard, core).  Others
import from the named modules.
"""
