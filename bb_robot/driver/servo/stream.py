"""The motion of a stream of poses: its velocity and acceleration at its latest pose, fitted to
the latest few poses by least squares.

A pose stream (the Cartesian demo's circle, a teleoperation device, a planner's Cartesian path)
gives where the tool should be, not how fast it moves there.  The servo carries the latest pose
forward with the stream's motion, so that the tool neither trails the stream nor overshoots where
it turns.  The motion comes from the poses' times: their header stamps where every pose of the fit
has one (arrival jitters; the stamps say when each pose held), else their arrival times.

Two poses give one chord: the velocity half-way between them.  Earlier versions took the last
chord and the chord before it, and their difference over the time between them as the
acceleration.  That is exact for on-time stamps but amplifies any error in them: a publisher
whose stamps are off by up to 4 ms (a stamp taken a little before or after the pose was
computed) made the chords' velocities vary by up to 80 % and put the tool 7 to 10 mm off the
demo's circle.  A least-squares fit of ``d(t) = d0 + v t + a t² / 2`` to up to :data:`WINDOW`
poses spanning at most :data:`SPAN` ``command_timeout`` averages that error out: 1.1 to 2.0 mm in
the same simulation (``test/driver/servo/test_servo.py``), for 0.3 mm instead of 0.07 mm with
exact stamps (the circle's jerk bends a quadratic over 0.12 s a little).  The fitted ``d0``
replaces the latest pose, whose own stamp error would otherwise be carried forward whole.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from bb_robot.driver.servo import servo_math as sm
from bb_robot.driver.servo.servo_math import FloatArray

#: The most poses one fit uses (the latest among them).
WINDOW = 12
#: The longest time one fit spans, as a fraction of ``command_timeout`` (a slow stream's older poses
#: would bend the fit with the stream's jerk).
SPAN = 1.2


class PoseStream:
    """The latest poses of one stream, and its motion at the latest (:meth:`add`)."""

    def __init__(self) -> None:
        # (pose 4x4 in the chain's base frame, stamp ns or 0, arrival ns)
        self._poses: deque[tuple[FloatArray, int, int]] = deque(maxlen=WINDOW)

    def reset(self) -> None:
        """Forget the poses: the next one starts a stream."""
        self._poses.clear()

    def add(
        self, pose: FloatArray, stamp_ns: int, received_ns: int, timeout: float, s: FloatArray
    ) -> tuple[FloatArray, FloatArray] | None:
        """Take the stream's next pose and return the stream's motion there.

        Args:
            pose: the pose (4x4, the chain's base frame).
            stamp_ns: its header stamp (ns; 0: none).
            received_ns: when it arrived (monotonic ns).
            timeout: ``command_timeout`` (s): a pose further than this from the one before starts a
                stream again.
            s: the servo's settings vector (:func:`~bb_robot.driver.servo.servo_math.settings_vector`).

        Returns:
            ``[velocity (6), acceleration (6)]`` in the base axes, within the maximum speeds and
            the tool accelerations (each scaled with its direction kept); ``None`` while this pose
            is no part of a stream (the first, or one after a gap longer than ``timeout`` or a time
            that does not advance).
        """
        poses = self._poses
        if poses:
            _, last_stamp, last_received = poses[-1]
            elapsed = (stamp_ns - last_stamp if stamp_ns and last_stamp else received_ns - last_received) * 1e-9
            if not 0.0 < elapsed <= timeout:
                poses.clear()
        poses.append((pose, stamp_ns, received_ns))
        if len(poses) < 2:
            return None
        stamped = all(stamp for _, stamp, _ in poses)
        times = np.array([(stamp if stamped else received) for _, stamp, received in poses], dtype=float)
        times = (times - times[-1]) * 1e-9  # the latest at 0, the earlier ones before it
        keep = times[:-1] >= -timeout * SPAN
        if stamped:
            keep &= np.diff(times) > 0.0  # (a pose whose stamp does not advance on the next: left out)
        keep[-1] = True  # the latest chord always counts
        rows = [i for i in range(len(poses) - 1) if keep[i]]
        t = np.append(times[rows], 0.0)
        offsets = np.array([sm.pose_error(poses[i][0], pose) for i in rows] + [np.zeros(6)])  # from the latest
        motion = np.zeros(12)
        fitted = pose
        if len(rows) == 1:
            motion[:6] = offsets[0] / t[0]
        else:
            basis = np.column_stack((np.ones_like(t), t, 0.5 * t * t))
            (offset, velocity, acceleration), *_ = np.linalg.lstsq(basis, offsets, rcond=None)
            top = sm.within(acceleration, float(s[sm.S_LINEAR_ACCELERATION]), float(s[sm.S_ANGULAR_ACCELERATION]))
            motion[:6] = velocity
            motion[6:] = acceleration * top
            fitted = pose.copy()
            fitted[:3, 3] += offset[:3]
            fitted[:3, :3] = sm.rotation_matrix(offset[3:]) @ pose[:3, :3]
        motion[:6] *= sm.speed_factor(motion[:6], s)
        return motion, fitted
