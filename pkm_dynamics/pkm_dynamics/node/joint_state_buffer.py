"""The node's recent measured joint states: a bounded ring buffer of time-stamped positions,
velocities and efforts of the actuated joints, filled from the measured actuator states the
node subscribes to (the ``actuator_states`` topic of joint-state completion, remapped to a
robot's ``joint_states`` the ROS way), read by ``~/estimate_payload`` for its ``last_seconds``
window (:mod:`~pkm_dynamics.node.payload_service`).

Bounded in time (parameter ``payload_estimation.buffer_seconds``) and in count (that span at
:data:`MAX_RATE` Hz): memory and a window's work stay bounded however fast the stream. A
message without velocities or efforts stores NaN there (velocities: the window differentiates
the positions; efforts: the window is refused naming the joint). Recorded by the streaming
thread, read by the services' thread: one lock around the few array writes and the copy."""
import threading

import numpy as np

#: the highest sampling rate the buffer holds ``buffer_seconds`` of [Hz]
MAX_RATE = 1000.0


class JointStateBuffer:
    """The last ``seconds`` of joint states of the actuated ``joints`` (module docstring)."""

    def __init__(self, joints, seconds):
        self.joints = tuple(joints)
        self.seconds = float(seconds)
        self.capacity = int(np.ceil(self.seconds * MAX_RATE)) + 1
        self._t = np.zeros(self.capacity)
        self._data = np.zeros((self.capacity, 3, len(self.joints)))
        self._next = 0
        self._count = 0
        self._lock = threading.Lock()

    def record(self, t, x, xd, u):
        """One sample at time ``t`` [s]: positions ``x``, velocities ``xd``, efforts ``u`` (n,)
        (NaN where not measured).  A stamp equal to the last one is a duplicate (dropped); an
        earlier one starts the buffer again (the clock went back: a replayed or restarted
        stream)."""
        with self._lock:
            if self._count:
                last = self._t[(self._next - 1) % self.capacity]
                if t == last:
                    return
                if t < last:
                    self._count = 0
            self._t[self._next] = t
            self._data[self._next] = (x, xd, u)
            self._next = (self._next + 1) % self.capacity
            self._count = min(self._count + 1, self.capacity)

    def window(self, seconds):
        """``(t (N,), x, xd, u (N, n))``, oldest first, of the samples of the last ``seconds``
        before the newest one, and the span [s] the buffer holds."""
        with self._lock:
            index = (self._next - self._count + np.arange(self._count)) % self.capacity
            t, data = self._t[index], self._data[index]
        if not len(t):
            return t, data[:, 0], data[:, 1], data[:, 2], 0.0
        keep = t >= t[-1] - seconds
        return t[keep], data[keep, 0], data[keep, 1], data[keep, 2], float(t[-1] - t[0])
