"""Names of the robots many tests use, written down once.

bb_arm (``models/bb_arm.urdf``) names its arm joints and links as Universal Robots do, so
``UR3E_JOINTS`` and ``UR3E_LINKS`` are both the UR3e's (the corpus files, the Gazebo world) and
bb_arm's arm.
"""

from __future__ import annotations

#: UR's six arm joints, base to wrist: the UR3e's, and bb_arm's arm.
UR3E_JOINTS = (
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
)

#: UR's arm links, base_link to wrist_3_link (the links the six arm joints connect): the UR3e's, and bb_arm's arm.
UR3E_LINKS = (
    "base_link",
    "shoulder_link",
    "upper_arm_link",
    "forearm_link",
    "wrist_1_link",
    "wrist_2_link",
    "wrist_3_link",
)

#: bb_arm's links in ``models/bb_arm.urdf``'s order: the arm, the tool flange, the gripper, the tool centre point.
BB_ARM_LINKS = (*UR3E_LINKS, "tool0", "gripper_base", "left_finger", "right_finger", "tcp")
