"""Examples shipped with bb_robot: :mod:`~bb_robot.examples.servo_bridge`, a simulated servo bridge
for the driver's ``actuators`` backend (and the template for a real one)."""
