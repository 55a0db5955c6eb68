"""The arithmetic of one servo cycle, written once for numpy and for numba.

:class:`~bb_robot.driver.servo.servo.Servo` keeps the servo's state (which input, since when, its
status) and calls these functions every cycle: :func:`start` (steps 1 to 3 of the cycle, from
the input to the joint velocities) and :func:`finish` (steps 4 and 5, from the speed scales to
the new setpoint).  They take and change plain float64 arrays, so that
:mod:`bb_robot.driver.servo._servo_numba` compiles the same functions into one call per cycle, with the
forward kinematics of :mod:`bb_robot.model._frames_numba` between them.  numba's own linear
algebra needs SciPy's LAPACK, which bb_robot does not require: the four functions marked *replaced
when compiled* (:func:`matvec`, :func:`matmul`, :func:`singular_values`, :func:`solve`) are bound
to loops of :mod:`bb_robot.driver.servo._servo_numba` there.  Everything else is written in the part of
numpy that numba compiles as it is; ``test/driver/servo/test_servo_math.py`` checks that both give the
same cycles to rounding.

Settings travel as one vector (:func:`settings_vector`, indices ``S_*``); the reference pose of a
twist is a 4x4 whose ``[3, 3]`` is 0 while there is none.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from bb_robot.driver.servo.servo_inputs import ServoSettings

FloatArray = npt.NDArray[np.float64]

# Indices of the settings vector.
S_LINEAR_SPEED, S_ANGULAR_SPEED, S_LINEAR_ACCELERATION, S_ANGULAR_ACCELERATION = 0, 1, 2, 3
S_JOINT_ACCELERATION, S_TIMEOUT, S_SLOWDOWN, S_STOP, S_MARGIN, S_GAIN = 4, 5, 6, 7, 8, 9

# The input of a cycle.
NO_INPUT, TWIST, POSE = 0, 1, 2
# Why the speed is scaled: nothing, the singularity, a collision's proximity, or WHY_LIMIT + k: joint k's limit.
WHY_NONE, WHY_SINGULARITY, WHY_PROXIMITY, WHY_LIMIT = 0, 1, 2, 3

#: Below this joint speed (rad/s or m/s) a stopping servo counts as still.
STILL = 1e-6
#: Time constant (s) of the first-order smoothing of the wanted tool velocity: the acceleration
#: rises over a few hundredths of a second instead of jumping, which a lagging arm follows closely.
SMOOTHING = 0.05
#: The joint-limit scale reaches 0 at this fraction of the margin from the command range's end.
LIMIT_STOP_FRACTION = 0.05
#: The step (rad or m, along the joint velocity) over which a motion near a singularity is judged.
PROBE = 1e-3
#: Singular values below this fraction of the largest count as zero in the joint velocities
#: (:func:`joint_velocities`): what the chain cannot do at all is left out, not solved for.
EXACT = 1e-5


def settings_vector(settings: ServoSettings) -> FloatArray:
    """The settings as the vector these functions read (indices ``S_*``).

    Args:
        settings: the ``servo.*`` values.

    Returns:
        A float64 vector.
    """
    return np.array(
        [
            settings.max_linear_speed,
            settings.max_angular_speed,
            settings.max_linear_acceleration,
            settings.max_angular_acceleration,
            settings.max_joint_acceleration,
            settings.command_timeout,
            settings.singularity_slowdown,
            settings.singularity_stop,
            settings.joint_limit_margin,
            settings.gain,
        ]
    )


# ------------------------------------------------------------- replaced when compiled
def matvec(a: FloatArray, x: FloatArray) -> FloatArray:
    """``a @ x`` (replaced when compiled)."""
    return np.asarray(a @ x)


def matmul(a: FloatArray, b: FloatArray) -> FloatArray:
    """``a @ b`` (replaced when compiled)."""
    return np.asarray(a @ b)


def singular_values(a: FloatArray) -> FloatArray:
    """The singular values of ``a``, largest first (replaced when compiled)."""
    return np.asarray(np.linalg.svd(a, compute_uv=False))


def solve(a: FloatArray, b: FloatArray) -> FloatArray:
    """``x`` with ``a x = b`` for a symmetric positive definite ``a`` (replaced when compiled)."""
    return np.asarray(np.linalg.solve(a, b))


# ------------------------------------------------------------------ rotations
def norm(x: FloatArray) -> float:
    """The Euclidean norm of a vector."""
    return math.sqrt(float(np.sum(x * x)))


def rotation_vector(rotation: FloatArray) -> FloatArray:
    """The rotation vector (axis times angle, rad) of a 3x3 rotation matrix.

    Args:
        rotation: the matrix.

    Returns:
        The vector (3,).
    """
    cos = min(max((float(np.trace(rotation)) - 1.0) / 2.0, -1.0), 1.0)
    angle = math.acos(cos)
    axis = np.array([rotation[2, 1] - rotation[1, 2], rotation[0, 2] - rotation[2, 0], rotation[1, 0] - rotation[0, 1]])
    if angle < 1e-6:
        return axis / 2.0
    if angle > math.pi - 1e-4:  # near a half turn: the axis from the symmetric part
        column = int(np.argmax(np.diag(rotation)))
        half = math.sqrt(2.0 * (1.0 + rotation[column, column]))
        vector: FloatArray = (rotation[:, column] + np.eye(3)[column]) / half
        sign = 1.0 if float(np.sum(vector * axis)) >= 0.0 else -1.0
        return vector * (sign * angle / norm(vector))
    return axis * (angle / (2.0 * math.sin(angle)))


def rotation_matrix(vector: FloatArray) -> FloatArray:
    """The rotation matrix of a rotation vector (Rodrigues).

    Args:
        vector: axis times angle (rad), (3,).

    Returns:
        The 3x3 matrix.
    """
    angle = norm(vector)
    if angle < 1e-12:
        return np.eye(3)
    k = vector / angle
    cross = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(angle) * cross + (1.0 - math.cos(angle)) * matmul(cross, cross)


def pose_error(target: FloatArray, current: FloatArray) -> FloatArray:
    """The error from ``current`` to ``target`` (4x4 poses in one frame): position then rotation vector.

    Args:
        target: where the tool should be.
        current: where it is.

    Returns:
        The 6-vector ``[target.p - current.p, rotvec(target.R current.Rᵀ)]`` (base axes).
    """
    error = np.empty(6)
    error[:3] = target[:3, 3] - current[:3, 3]
    error[3:] = rotation_vector(matmul(target[:3, :3], current[:3, :3].T))
    return error


def within(x: FloatArray, linear: float, angular: float) -> float:
    """The factor (at most 1) that brings the linear and angular parts of ``x`` (6) within the two bounds."""
    return 1.0 / max(norm(x[:3]) / linear, norm(x[3:]) / angular, 1.0)


def speed_factor(twist: FloatArray, s: FloatArray) -> float:
    """The factor (at most 1) that brings ``twist`` within the maximum speeds, direction kept."""
    return within(twist, float(s[S_LINEAR_SPEED]), float(s[S_ANGULAR_SPEED]))


def _any(x: FloatArray) -> bool:
    return bool(np.any(x != 0.0))


# --------------------------------------------------------------------- step 1
def tool_velocity(
    mode: int,
    current: FloatArray,
    rotation: FloatArray,
    values: FloatArray,
    target: FloatArray,
    stream: FloatArray,
    since: float,
    reference: FloatArray,
    s: FloatArray,
    position_only: bool,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Step 1: the tool velocity wanted, the closed-loop correction and the feed-forward (base axes).

    Args:
        mode: :data:`NO_INPUT`, :data:`TWIST` or :data:`POSE`.
        current: the measured tool pose (4x4, base frame).
        rotation: the twist's frame orientation now (3x3; a twist only).
        values: the twist (6; a twist only).
        target: the pose target (4x4, base frame; a pose only).
        stream: the motion of the pose stream at that pose (12,
            :class:`~bb_robot.driver.servo.stream.PoseStream`; zero for a single pose).
        since: seconds since the pose held: since its ``header.stamp`` where plausible, else
            since it arrived (:func:`bb_robot.driver.servo.servo_inputs.stamp_origin`).
        reference: the twist's reference pose (4x4), changed here: set from ``current`` where
            there is none (``[3, 3]`` 0), cleared when there is no input.
        s: the settings vector.
        position_only: the chain tracks the position only (no angular correction).

    Returns:
        ``(wanted, correction, feedforward)``.  A stream of poses is tracked with its own velocity
        as feed-forward, towards the last pose carried forward with its velocity and acceleration
        to now (the acceleration for at most the command timeout, the velocity reached then
        after it).  A stream that falls silent is stopped by the caller, which then gives
        :data:`NO_INPUT`.
    """
    wanted = np.zeros(6)
    correction = np.zeros(6)
    feedforward = np.zeros(6)
    if mode == NO_INPUT:
        reference[3, 3] = 0.0  # decelerating to a stop: a new twist starts from the measured pose
        return wanted, correction, feedforward
    if mode == TWIST:
        wanted[:3] = matvec(rotation, values[:3])
        wanted[3:] = matvec(rotation, values[3:])
        wanted *= speed_factor(wanted, s)
        if reference[3, 3] == 0.0:
            reference[:, :] = current
        return wanted, _correction(reference, current, s, position_only), feedforward
    goal = target.copy()
    if _any(stream) and since >= 0.0:
        spin = min(since, float(s[S_TIMEOUT]))  # how long the acceleration is carried forward
        feedforward[:] = stream[:6] + stream[6:] * spin
        shift = stream[:6] * since + stream[6:] * (spin * (since - 0.5 * spin))
        goal[:3, 3] += shift[:3]
        goal[:3, :3] = matmul(rotation_matrix(shift[3:]), target[:3, :3])
    error = pose_error(goal, current)
    for part in range(2):
        lo = 3 * part
        distance = norm(error[lo : lo + 3])
        if distance > 0.0:
            top, accel = s[S_LINEAR_SPEED + part], s[S_LINEAR_ACCELERATION + part]
            speed = min(top, math.sqrt(2.0 * accel * distance) * 0.9, s[S_GAIN] * distance)
            wanted[lo : lo + 3] = error[lo : lo + 3] * (speed / distance)
    factor = speed_factor(wanted + feedforward, s)
    return wanted * factor, correction, feedforward * factor


def _correction(reference: FloatArray, current: FloatArray, s: FloatArray, position_only: bool) -> FloatArray:
    """The velocity pulling the measured pose to the reference (bounded to a tenth of the maxima)."""
    error: FloatArray = s[S_GAIN] * pose_error(reference, current)
    for part in range(2):
        lo = 3 * part
        top = s[S_LINEAR_SPEED + part]
        size = norm(error[lo : lo + 3])
        if size > 0.1 * top:
            error[lo : lo + 3] *= 0.1 * top / size
    if position_only:
        error[3:] = 0.0
    return error


# --------------------------------------------------------------------- step 2
def ramp(
    wanted: FloatArray, feedforward: FloatArray, smoothed: FloatArray, twist: FloatArray, period: float, s: FloatArray
) -> None:
    """Step 2: the commanded tool velocity ``twist``, smoothed and changed by at most the tool accelerations.

    The wanted velocity is smoothed over :data:`SMOOTHING` (``smoothed``, changed here); the
    feed-forward of a pose stream is added after the smoothing: it is smooth already, and
    smoothing it would make the tool lag the stream.  A stop brakes at the accelerations.

    Args:
        wanted: step 1's wanted velocity plus nothing of the correction.
        feedforward: step 1's feed-forward.
        smoothed: the smoothed wanted velocity (changed).
        twist: the commanded tool velocity (changed).
        period: the loop period (s).
        s: the settings vector.
    """
    stopping = not _any(wanted) and not _any(feedforward)
    smoothed += (wanted - smoothed) * (1.0 if stopping else min(period / SMOOTHING, 1.0))
    change = smoothed + feedforward - twist
    for part in range(2):
        lo = 3 * part
        step = s[S_LINEAR_ACCELERATION + part] * period
        size = norm(change[lo : lo + 3])
        if size > step:
            change[lo : lo + 3] *= step / size
    twist += change


# --------------------------------------------------------------------- step 3
def conditioning(jacobian: FloatArray, reach: float) -> tuple[FloatArray, float, float]:
    """The Jacobian, linear rows divided by the reach; its singularity measure and largest singular value.

    Args:
        jacobian: the rows the servo tracks (6, or the 3 linear ones), ``(rows, n)``.
        reach: the chain's reach (m).

    Returns:
        ``(scaled, measure, sigma_max)``: the measure is ``σ_min / σ_max`` over ``min(rows, n)``
        singular values (0 singular, 1 isotropic), as :func:`bb_robot.model.dexterity.singularity_measure`.
    """
    scaled = jacobian.copy()
    scaled[:3] /= reach
    values = singular_values(scaled)
    if values[0] <= 0.0:
        return scaled, 0.0, 0.0
    return scaled, float(values[min(scaled.shape[0], scaled.shape[1]) - 1] / values[0]), float(values[0])


def start(
    mode: int,
    current: FloatArray,
    rotation: FloatArray,
    values: FloatArray,
    target: FloatArray,
    stream: FloatArray,
    since: float,
    reference: FloatArray,
    smoothed: FloatArray,
    twist: FloatArray,
    jacobian: FloatArray,
    reach: float,
    period: float,
    s: FloatArray,
) -> tuple[FloatArray, float, float]:
    """Steps 1 to 3: the joint velocities the input asks for, before any scale or limit.

    Args:
        mode, current, rotation, values, target, stream, since, reference: as :func:`tool_velocity`.
        smoothed, twist: as :func:`ramp` (changed).
        jacobian: the tracked rows of the Jacobian at the setpoint, ``(rows, n)``: 6, or the 3
            linear rows for a chain with fewer than six joints (position only).
        reach: the chain's reach (m).
        period: the loop period (s).
        s: the settings vector.

    Returns:
        ``(free, measure, damped)``: the joint velocities (:func:`joint_velocities`), the
        singularity measure at the setpoint, and the fraction of the tool velocity they carry
        (1 above the slowdown measure).
    """
    rows = jacobian.shape[0]
    wanted, correction, feedforward = tool_velocity(
        mode, current, rotation, values, target, stream, since, reference, s, rows < 6
    )
    ramp(wanted, feedforward, smoothed, twist, period, s)
    scaled, measure, sigma_max = conditioning(jacobian, reach)
    weights = np.ones(rows)
    weights[:3] /= reach
    free, damped = joint_velocities(scaled, (twist + correction)[:rows] * weights, measure, sigma_max, s)
    return free, measure, damped


def joint_velocities(
    scaled: FloatArray, velocity: FloatArray, measure: float, sigma_max: float, s: FloatArray
) -> tuple[FloatArray, float]:
    """Step 3: the joint velocities that move the tool at ``velocity``, or at a fraction of it near a singularity.

    Above the slowdown measure: the least-squares solution (the exact one where the chain can
    move the tool so).  Below it, damped least squares would bound the joint speeds but bend the
    motion: each singular direction is damped by its own factor ``σ² / (σ² + λ²)``, so a twist
    about the tool would also move the tool point, and a linear twist would turn the tool.  Here
    the damping slows the motion instead: the exact solution, scaled as a whole down to the bound
    damped least squares keeps the joint speeds within, ``|velocity| / (2 λ)`` (``λ = 0.05 σ_max``
    times the fraction of the slowdown measure still to go), so the tool moves in the direction
    asked for, at most slower.  A direction the chain cannot move in at all (``σ`` below
    :data:`EXACT` ``σ_max``) is left out.

    Args:
        scaled: the Jacobian with its linear rows divided by the reach (:func:`conditioning`).
        velocity: the tool velocity, linear part divided by the reach (rows).
        measure: the singularity measure.
        sigma_max: the largest singular value of ``scaled``.
        s: the settings vector.

    Returns:
        ``(joint velocities, fraction)``: the fraction (0 to 1) of ``velocity`` they carry.
    """
    rows = scaled.shape[0]
    system = matmul(scaled, scaled.T)
    floor = EXACT * sigma_max
    exact = matvec(scaled.T, solve(system + floor * floor * np.eye(rows), velocity))
    if measure >= s[S_SLOWDOWN]:
        return exact, 1.0
    damping = 0.05 * sigma_max * (1.0 - measure / s[S_SLOWDOWN])
    bound = 2.0 * damping * norm(exact)
    fraction = min(norm(velocity) / bound, 1.0) if bound > 0.0 else 1.0
    return exact * fraction, fraction


def probe(q: FloatArray, free: FloatArray, measure: float, s: FloatArray) -> FloatArray:
    """Where to measure the singularity again to judge a motion near one (empty: no need).

    Args:
        q: the setpoint.
        free: :func:`start`'s joint velocities.
        measure: the singularity measure at ``q``.
        s: the settings vector.

    Returns:
        ``q`` one :data:`PROBE` step along ``free`` when the setpoint is below the slowdown
        measure and moving, else an empty vector.
    """
    speed = norm(free)
    if measure < s[S_SLOWDOWN] and speed > 0.0:
        return q + free * (PROBE / speed)
    return np.empty(0)


# ------------------------------------------------------------------ steps 4, 5
def speed_scale(
    free: FloatArray,
    q: FloatArray,
    measure: float,
    ahead: float,
    lower: FloatArray,
    upper: FloatArray,
    proximity: float,
    s: FloatArray,
) -> tuple[float, int]:
    """Step 4: the smallest of the singularity, joint-limit and proximity scales, and why (``WHY_*``).

    Args:
        free: the joint velocities asked for.
        q: the setpoint.
        measure: the singularity measure at ``q``.
        ahead: the measure one :func:`probe` step along ``free`` (NaN: not probed).  A motion that
            does not raise it moves towards the singularity and is slowed: 1 above the slowdown
            measure, 0 at the stop measure, the square root of the fraction between.
        lower, upper: the command range.
        proximity: the collision guard's scale (1: none).
        s: the settings vector.

    Returns:
        ``(scale, why)``.
    """
    best, why = 1.0, WHY_NONE
    slowdown, stop = s[S_SLOWDOWN], s[S_STOP]
    if measure < slowdown and ahead <= measure:  # towards the singularity (NaN: not probed)
        value = math.sqrt(min(max((measure - stop) / max(slowdown - stop, 1e-9), 0.0), 1.0))
        if value < best:
            best, why = value, WHY_SINGULARITY
    margin = s[S_MARGIN]
    if margin > 0.0:  # the joint nearest its end in the direction it moves (the first of equals)
        nearest, joint = math.inf, -1
        for k in range(free.shape[0]):
            if free[k] > 0.0:
                room = upper[k] - q[k]
            elif free[k] < 0.0:
                room = q[k] - lower[k]
            else:
                continue
            fraction = (room / margin - LIMIT_STOP_FRACTION) / (1.0 - LIMIT_STOP_FRACTION)
            if fraction < nearest:
                nearest, joint = fraction, k
        if nearest < 1.0:
            value = math.sqrt(min(max(nearest, 0.0), 1.0))
            if value < best:
                best, why = value, WHY_LIMIT + joint
    value = min(max(proximity, 0.0), 1.0)
    if value < best:
        best, why = value, WHY_PROXIMITY
    return best, why


def limit(
    qd: FloatArray,
    previous: FloatArray,
    q: FloatArray,
    lower: FloatArray,
    upper: FloatArray,
    velocity: FloatArray,
    acceleration: FloatArray,
    period: float,
    s: FloatArray,
) -> FloatArray:
    """Step 5: within the velocity limits (together) and the acceleration limits (the change together).

    Args:
        qd: the scaled joint velocities.
        previous: last cycle's.
        q: the setpoint.
        lower, upper: the command range.
        velocity: the velocity limits (inf: none).
        acceleration: the acceleration limits (inf or NaN: none, the settings' joint acceleration).
        period: the loop period (s).
        s: the settings vector.

    Returns:
        The joint velocities; never past the command range: at most the speed a joint can still
        brake from before its end.
    """
    n = qd.shape[0]
    ratio = 0.0
    for k in range(n):
        speed = abs(qd[k])
        if velocity[k] > 0.0:
            ratio = max(ratio, speed / velocity[k])
        elif speed > 0.0:
            ratio = math.inf
    out = qd / ratio if ratio > 1.0 else qd.copy()
    accel = np.empty(n)
    for k in range(n):
        accel[k] = acceleration[k] if math.isfinite(acceleration[k]) else s[S_JOINT_ACCELERATION]
    change = out - previous
    ratio = 0.0
    for k in range(n):
        ratio = max(ratio, abs(change[k]) / (accel[k] * period))
    if ratio > 1.0:
        out = previous + change / ratio
    for k in range(n):
        room = upper[k] - q[k] if out[k] > 0.0 else q[k] - lower[k]
        cap = math.sqrt(2.0 * accel[k] * max(room, 0.0))
        out[k] = min(max(out[k], -cap), cap)
    return out


def finish(
    free: FloatArray,
    measure: float,
    ahead: float,
    damped: float,
    q: FloatArray,
    qd: FloatArray,
    twist: FloatArray,
    reference: FloatArray,
    lower: FloatArray,
    upper: FloatArray,
    velocity: FloatArray,
    acceleration: FloatArray,
    proximity: float,
    period: float,
    s: FloatArray,
) -> tuple[float, int, bool]:
    """Steps 4 and 5: scale and limit the joint velocities, advance the setpoint ``q`` (changed) and ``qd`` (changed).

    The twist's reference pose advances by the commanded twist as far as the damping near a
    singularity and the limits let it through (never by the correction, else the correction
    would chase itself).

    Args:
        free, measure, ahead, proximity: as :func:`speed_scale`.
        damped: the fraction of the tool velocity ``free`` carries (:func:`start`).
        q: the setpoint (changed: advanced by one period).
        qd: last cycle's joint velocities (changed: this cycle's).
        twist: the commanded tool velocity (:func:`ramp`).
        reference: the twist's reference pose (changed; ``[3, 3]`` 0: none).
        lower, upper, velocity, acceleration: as :func:`limit`.
        period: the loop period (s).
        s: the settings vector.

    Returns:
        ``(scale, why, still)``: the scale applied, why (``WHY_*``), and whether the joints are
        still with no tool velocity commanded.
    """
    scale, why = speed_scale(free, q, measure, ahead, lower, upper, proximity, s)
    out = limit(free * scale, qd, q, lower, upper, velocity, acceleration, period, s)
    q[:] = np.minimum(np.maximum(q + out * period, lower), upper)
    qd[:] = out
    size = float(np.sum(free * free))
    kept = min(max(float(np.sum(out * free)) / size, 0.0), 1.0) if size > 0.0 else 0.0
    if reference[3, 3] != 0.0:
        applied = twist * (kept * damped * period)
        reference[:3, 3] += applied[:3]
        reference[:3, :3] = matmul(rotation_matrix(applied[3:]), reference[:3, :3])
    still = float(np.max(np.abs(out))) < STILL and not _any(twist)
    return scale, why, still
