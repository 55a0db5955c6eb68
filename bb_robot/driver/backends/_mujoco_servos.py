"""The ``mujoco`` backend's joint servos: default gains from the joints' inertia, and how a command
mode becomes the gains of a MuJoCo ``general`` actuator.

Every driven joint has one actuator whose force is ``gain · ctrl + b1 · q + b2 · q̇`` (MuJoCo's
affine bias), clamped to ``±<limit effort>``.  The modes set (per joint, between physics steps):

========== ======== ======== ======== =======================================================
mode        gain     b1       b2       ctrl
========== ======== ======== ======== =======================================================
position    kp       −kp      −kd      q_ref + (kd · v_ref + I · a_ref + g(q)) / kp
velocity    kv       0        −kv      v
effort      1        0        0        τ
limp        0        0        0        0   (disarmed, with ``mujoco.disarmed: limp``)
========== ======== ======== ======== =======================================================

so position is a PD servo with velocity and acceleration feed-forward and gravity compensation
(``g(q)``: the joint torques that hold the robot's weight at its current pose, updated every
control cycle; 0 with ``mujoco.gravity_compensation: false``), velocity a damper towards the
commanded speed, and effort a motor.  Default gains (:func:`default_gains`) make each joint,
taken alone with the inertia ``I`` it has at the current pose (the diagonal of the joint-space mass
matrix: everything the joint carries, about its axis; updated every control cycle, so that an arm
stretched out is as stiff as a folded one), a critically damped second-order system of natural
frequency ``ω = 2π · bandwidth``: ``kp = I ω²``, ``kd = 2 ζ I ω`` (``ζ`` the damping ratio, 1),
and ``kv = kd``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.driver.errors import BackendError

FloatArray = npt.NDArray[np.float64]

POSITION, VELOCITY, EFFORT, LIMP = 0, 1, 2, 3


@dataclass(frozen=True, eq=False)
class Gains:
    """Per joint: position stiffness ``kp``, its damping ``kd``, the velocity gain ``kv``, and the
    inertia ``inertia`` they were derived from (``I`` of the acceleration feed-forward)."""

    kp: FloatArray
    kd: FloatArray
    kv: FloatArray
    inertia: FloatArray


def default_gains(inertia: FloatArray, bandwidth: float, damping_ratio: float) -> Gains:
    """The default gains for joints of effective inertia ``inertia`` (see the module docstring).

    Args:
        inertia: Each joint's effective inertia at the start pose (kg·m², or kg for a slider).
        bandwidth: Natural frequency of the position servo, in Hz.
        damping_ratio: ``ζ`` of the position servo (1: critically damped).

    Returns:
        The gains.
    """
    omega = 2.0 * math.pi * bandwidth
    inertia = np.asarray(inertia, dtype=np.float64)
    kp = inertia * omega * omega
    kd = 2.0 * damping_ratio * inertia * omega
    return Gains(kp, kd, kd.copy(), inertia)


@dataclass(frozen=True, eq=False)
class GainRule:
    """How the gains are chosen: :func:`default_gains` of the joints' inertia, except where
    ``kp`` / ``kd`` / ``kv`` fix them (arrays, one per joint; ``None``: from the inertia)."""

    bandwidth: float
    damping_ratio: float
    kp: FloatArray | None = None
    kd: FloatArray | None = None
    kv: FloatArray | None = None

    @classmethod
    def from_parameters(
        cls,
        names: Sequence[str],
        bandwidth: float,
        damping_ratio: float,
        kp: Sequence[float],
        kd: Sequence[float],
        kv: Sequence[float],
    ) -> GainRule:
        """The rule of the ``mujoco.*`` parameters (each gain list empty, one value per joint, or one
        for all); raises :class:`BackendError` naming the parameter for a bad list."""
        fixed: dict[str, FloatArray | None] = {}
        for key, values in (("kp", kp), ("kd", kd), ("kv", kv)):
            if not values:
                fixed[key] = None
                continue
            array = np.asarray(list(values), dtype=np.float64)
            if len(array) not in (1, len(names)):
                raise BackendError(
                    f"mujoco.{key} has {len(array)} values for {len(names)} joints ({', '.join(names)}); "
                    "give one per joint, or one for all"
                )
            if not (np.isfinite(array).all() and (array >= 0).all()):
                raise BackendError(f"mujoco.{key} must hold finite values ≥ 0, not {list(values)}")
            fixed[key] = np.broadcast_to(array, (len(names),)).astype(np.float64)
        return cls(bandwidth, damping_ratio, fixed["kp"], fixed["kd"], fixed["kv"])

    @property
    def follows_inertia(self) -> bool:
        """Whether some gain comes from the inertia (and so changes with the pose)."""
        return self.kp is None or self.kd is None or self.kv is None

    def gains(self, inertia: FloatArray, names: Sequence[str]) -> Gains:
        """The gains for joints of effective inertia ``inertia``; raises :class:`BackendError` when a
        position gain comes out 0 (a joint without inertia and no ``mujoco.kp``)."""
        derived = default_gains(inertia, self.bandwidth, self.damping_ratio)
        kp = derived.kp if self.kp is None else self.kp
        kd = derived.kd if self.kd is None else self.kd
        kv = derived.kv if self.kv is None else self.kv
        if (kp <= 0).any():
            bad = [names[int(i)] for i in np.flatnonzero(kp <= 0)]
            raise BackendError(f"the position gain kp of {', '.join(bad)} is 0: set mujoco.kp")
        return Gains(kp, kd, kv, derived.inertia)


def actuator_parameters(modes: npt.NDArray[np.int8], gains: Gains) -> tuple[FloatArray, FloatArray]:
    """The actuators' ``gain`` (n) and ``bias`` (n × 3) for each joint's mode (see the module table)."""
    n = len(modes)
    gain = np.zeros(n)
    bias = np.zeros((n, 3))
    position = modes == POSITION
    velocity = modes == VELOCITY
    effort = modes == EFFORT
    gain[position] = gains.kp[position]
    bias[position, 1] = -gains.kp[position]
    bias[position, 2] = -gains.kd[position]
    gain[velocity] = gains.kv[velocity]
    bias[velocity, 2] = -gains.kv[velocity]
    gain[effort] = 1.0
    return gain, bias


def position_controls(
    gains: Gains, q_ref: FloatArray, v_ref: FloatArray, a_ref: FloatArray, torque: FloatArray | float = 0.0
) -> FloatArray:
    """``ctrl`` of the position mode: the target with the velocity and acceleration feed-forward, and
    ``torque`` (the gravity compensation) added to the servo's force."""
    return q_ref + (gains.kd * v_ref + gains.inertia * a_ref + torque) / gains.kp
