"""The feedforward messages of one model, made once and refilled for every reference: the
output messages (their joint names set once), the joint order of each reference's
``joint_names`` (resolved at its first reference, then looked up), the commands order.

The per-reference outputs (``commands``, ``joint_state``, ``motor``, ``pressure``, ``valve``) are written straight as
their serialized (CDR) bytes (:mod:`~pkm_dynamics.node.messages.cdr_messages`), which a publisher sends as
they are: no Python message to fill and convert (~4 us less per output here). The
trajectory output is a message. Every value is checked finite first (all or nothing: no output
holds NaN or Inf, :func:`~pkm_dynamics.node.messages.conversions.floats` names the culprit)."""
import array

from builtin_interfaces.msg import Duration
import numpy as np
from std_msgs.msg import Header
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from pkm_dynamics.node.messages.cdr_messages import JointStateBytes, float64_array_bytes
from pkm_dynamics.node.messages.conversions import floats, name_index

#: joint orders kept per model (a stream uses one; more only if the sender changes it)
MAX_ORDERS = 16


def doubles(values):
    """``values`` (a float numpy array) as the ``array.array('d')`` a float64[] field holds."""
    return array.array('d', np.ascontiguousarray(values, dtype=float).tobytes())


def check_finite(values, what):
    """NON_FINITE naming ``what`` (and the row, for a 2-D array) unless every value is finite."""
    values = np.asarray(values, dtype=float)
    if not np.isfinite(values).all():
        if values.ndim == 2:
            for k, row in enumerate(values):
                floats(row, f'{what} of points[{k}]')
        floats(values, what)


class FeedforwardOutputs:
    """The output messages and name orders of ``model`` (see module doc)."""

    def __init__(self, model):
        self.model = model
        names = list(model.actuated)
        self._names = names
        self._command_order = np.asarray(model.command_order, dtype=np.intp)
        self._orders = {}
        self._commands = float64_array_bytes(len(self._command_order))
        self._joint_state = JointStateBytes(names)
        # the cylinders in the order of feedforward.joints (positions in the model's cylinders)
        cylinders = model.robot.hydraulic_model.joints
        ordered = [model.actuated[i] for i in self._command_order]
        self._cylinder_order = np.array([cylinders.index(j) for j in ordered if j in cylinders], dtype=np.intp)
        self._pressure = float64_array_bytes(2 * len(self._cylinder_order))
        self._valve = float64_array_bytes(len(self._cylinder_order))

    def order(self, joint_names, what):
        """The positions in ``joint_names`` of the actuated joints (see
        :func:`~pkm_dynamics.node.messages.conversions.name_index`, which names a bad list)."""
        key = tuple(joint_names)
        index = self._orders.get(key)
        if index is None:
            index = np.array(name_index(key, self.model.actuated, what), dtype=np.intp)
            if len(self._orders) >= MAX_ORDERS:
                self._orders.clear()
            self._orders[key] = index
        return index

    def commands(self, f):
        """Float64MultiArray (bytes): the efforts ``f`` (n,) in the order of
        ``feedforward.joints``."""
        template, at = self._commands
        out = bytearray(template)
        out[at:] = np.asarray(f, dtype='<f8')[self._command_order].tobytes()
        return bytes(out)

    def pressure(self, h):
        """Float64MultiArray (bytes): p_A, p_B [Pa] of each cylinder (core result ``h``, one
        sample), cylinders in the order of ``feedforward.joints``: [p_A1, p_B1, p_A2, ...]."""
        template, at = self._pressure
        out = bytearray(template)
        k = self._cylinder_order
        out[at:] = np.stack([h.pressure_a[k], h.pressure_b[k]], axis=-1).astype('<f8').tobytes()
        return bytes(out)

    def valve(self, h):
        """Float64MultiArray (bytes): the spool commands of the cylinders' valves (core result
        ``h``, one sample), in the order of ``feedforward.joints``."""
        template, at = self._valve
        out = bytearray(template)
        out[at:] = np.asarray(h.spool, dtype='<f8')[self._cylinder_order].tobytes()
        return bytes(out)

    def joint_state(self, stamp, frame_id, x, xd, f):
        """JointState (bytes) of the actuated joints: positions, velocities, efforts (n,)
        each."""
        return self._joint_state.write(stamp, frame_id, x, xd, f)

    def motor(self, stamp, motor):
        """JointState (bytes) of the series-elastic motors: position, velocity, torque (in
        effort)."""
        return self._joint_state.write(stamp, '', motor.motor_position, motor.motor_velocity,
                                       motor.motor_torque)

    def trajectory(self, header, X, XD, XDD, F, points):
        """JointTrajectory with one point per reference point (:func:`trajectory_points`)."""
        out = JointTrajectory(joint_names=self._names)
        out.header = Header(stamp=header.stamp, frame_id=header.frame_id)
        out.points = trajectory_points(X, XD, XDD, F, points)
        return out


def trajectory_points(X, XD, XDD, F, points):
    """JointTrajectoryPoints of positions, velocities, accelerations and efforts X, XD, XDD, F
    (B, n) each, with the ``time_from_start`` of each of ``points`` (B: messages, or their
    :mod:`~pkm_dynamics.node.messages.cdr_messages` reading)."""
    return [JointTrajectoryPoint(positions=doubles(x), velocities=doubles(xd),
                                 accelerations=doubles(xdd), effort=doubles(f),
                                 time_from_start=Duration(sec=p.time_from_start.sec,
                                                          nanosec=p.time_from_start.nanosec))
            for x, xd, xdd, f, p in zip(X, XD, XDD, F, points)]
