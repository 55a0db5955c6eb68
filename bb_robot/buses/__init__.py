"""Serial servo buses without ROS: Feetech (protocol 0) and Dynamixel (Protocol 2.0).

- :mod:`~bb_robot.buses.packets`: the frame types and the :class:`~bb_robot.buses.packets.Codec`
  interface both protocols implement (:mod:`~bb_robot.buses.feetech`,
  :mod:`~bb_robot.buses.dynamixel`: checksum, CRC-16, byte stuffing, status error bits);
- :mod:`~bb_robot.buses.tables`: the control tables of the supported servo models;
- :mod:`~bb_robot.buses.transport`: :class:`~bb_robot.buses.transport.Bus`, transactions over a
  serial port (ping, read, write, one sync read and one sync write per cycle), with timeouts from
  the bytes expected, bounded retries and counters;
- :mod:`~bb_robot.buses.units` and :mod:`~bb_robot.buses.calibration`: ticks to SI units, LeRobot's
  calibration files, homing offsets that keep a joint's travel off the encoder's wrap point;
- the emulator (:mod:`~bb_robot.buses.emulator` and the ``emulator_*`` modules): servos on a
  pseudo-terminal, with motion, a timing model and fault injection.

docs/buses.md describes the protocols, units and the emulator. The package imports only
:mod:`bb_robot.errors` and :mod:`bb_robot.resources` of bb_robot (it sits beside
:mod:`bb_robot.model`), numpy and pyserial.
"""
