"""The Cartesian servo: twist and pose streams followed inside the control loop.

- :mod:`~bb_robot.driver.servo.servo`: :class:`~bb_robot.driver.servo.servo.Servo`, its state
  and its cycle;
- :mod:`~bb_robot.driver.servo.chain`: the serial chain it moves (:func:`build_chain`) and its
  compiled cycle (:func:`load_kernel`);
- :mod:`~bb_robot.driver.servo.servo_inputs`: checked twists and poses, the frames they name,
  the servo's settings and parameters;
- :mod:`~bb_robot.driver.servo.servo_math`: one cycle's arithmetic, written once for numpy and
  numba; :mod:`~bb_robot.driver.servo._servo_numba` compiles it (``bb-robot kernels``).

May import: :mod:`~bb_robot.driver.cycle`, :mod:`~bb_robot.driver.state`,
:mod:`~bb_robot.driver.timing`, :mod:`~bb_robot.driver.backends`,
:mod:`~bb_robot.driver.commands`, :mod:`~bb_robot.driver.errors`; not
:mod:`~bb_robot.driver.guard` (a sibling), nor the core.  Others import from the named modules.
"""
