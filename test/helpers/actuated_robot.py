"""A small robot for the tests of the driver's ``actuators`` backend (the real URDFs in the corpus
declare no transmissions; the bundled bb_arm has reductions but no offsets).

Its transmissions cover what the backend must get right: a reduction with an offset, a reversed
drive (negative ``mechanicalReduction``), a joint without a transmission (configured in the
tests: name, reduction, offset, ``reversed``), a prismatic joint, a mimic joint (no actuator),
and link and joint names that are not ROS name tokens (``-``, ``.``, a leading digit).
"""

from __future__ import annotations

ACTUATED_URDF = """<?xml version="1.0"?>
<robot name="actuated">
  <link name="base-plate"/><link name="l1"/><link name="2nd.link"/><link name="l3"/><link name="l4"/><link name="l5"/>
  <joint name="shoulder" type="revolute"><parent link="base-plate"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="10" velocity="1.5"/></joint>
  <joint name="elbow-joint" type="revolute"><parent link="l1"/><child link="2nd.link"/><axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="1.5" effort="8" velocity="2"/></joint>
  <joint name="wrist" type="continuous"><parent link="2nd.link"/><child link="l3"/><axis xyz="1 0 0"/>
    <limit effort="5" velocity="3"/></joint>
  <joint name="slide" type="prismatic"><parent link="l3"/><child link="l4"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.05" effort="40" velocity="0.1"/></joint>
  <joint name="slide_mimic" type="prismatic"><parent link="l4"/><child link="l5"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.05" effort="40" velocity="0.1"/><mimic joint="slide" multiplier="1" offset="0"/></joint>
  <transmission name="shoulder_transmission">
    <type>transmission_interface/SimpleTransmission</type>
    <joint name="shoulder"><offset>0.2</offset></joint>
    <actuator name="shoulder_motor"><mechanicalReduction>10</mechanicalReduction></actuator>
  </transmission>
  <transmission name="elbow_transmission">
    <type>transmission_interface/SimpleTransmission</type>
    <joint name="elbow-joint"/>
    <actuator name="elbow motor"><mechanicalReduction>-4</mechanicalReduction></actuator>
  </transmission>
  <transmission name="slide_transmission">
    <type>transmission_interface/SimpleTransmission</type>
    <joint name="slide"><offset>0.01</offset></joint>
    <actuator name="slide_motor"><mechanicalReduction>100</mechanicalReduction></actuator>
  </transmission>
</robot>
"""
#: The driven joints, in order (slide_mimic is a mimic joint: no actuator).
JOINTS = ("shoulder", "elbow-joint", "wrist", "slide")
#: What the tests configure for the wrist, which has no transmission.
WRIST_CONFIG = {"actuator": "wrist_servo", "reduction": 3.0, "offset": -0.5, "reversed": True}
#: Per joint: actuator name, the reduction applied (reversed flips the sign) and the offset.
EXPECTED = {
    "shoulder": ("shoulder_motor", 10.0, 0.2),
    "elbow-joint": ("elbow motor", -4.0, 0.0),
    "wrist": ("wrist_servo", -3.0, -0.5),
    "slide": ("slide_motor", 100.0, 0.01),
}
