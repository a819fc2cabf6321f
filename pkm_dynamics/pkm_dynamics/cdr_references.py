"""The feedforward references read straight from their serialized (CDR) form.

Taking a ``JointTrajectory`` or ``MultiDOFJointTrajectory`` as a Python message costs rclpy a
Python object per field (every field set through its checking property): 20-35 us per
one-point reference here, as much as the crane's whole inverse dynamics. The streaming
subscriptions take the raw bytes instead (``raw=True``) and these readers build what the
feedforward handlers read: plain objects with the message's field names (``header.stamp``, a
``builtin_interfaces/Time`` that goes into the outputs as it is, ``header.frame_id``,
``joint_names``, per point ``positions`` ... as float64 arrays, ``transforms[0].translation.x``
..., ``time_from_start.sec`` ...).

Plain CDR, little-endian (the encapsulation ``00 01`` every ROS 2 middleware sends on a
little-endian machine) is read here; any other encapsulation goes to rclpy's own
``deserialize_message``. CDR: after the 4-byte encapsulation header, each primitive aligned to
its size relative to the payload start; a string is a uint32 length (with the terminating
NUL) then its bytes; a sequence a uint32 count then its elements. A payload shorter than its
counts say raises :class:`RequestError` (INVALID_REQUEST): the handler's warning names it.
"""
import struct
from types import SimpleNamespace

import numpy as np
from builtin_interfaces.msg import Time
from pkm_dynamics_interfaces.msg import ErrorCodes
from rclpy.serialization import deserialize_message
from trajectory_msgs.msg import JointTrajectory, MultiDOFJointTrajectory

from pkm_dynamics.conversions import RequestError

#: the encapsulation header of little-endian plain CDR
CDR_LE = b'\x00\x01'
_U32 = struct.Struct('<I')
_STAMP = struct.Struct('<iI')
_VEC3 = struct.Struct('<3d')
_QUAT = struct.Struct('<4d')
_SIX = struct.Struct('<6d')


class _Cursor:
    """Reads CDR primitives from ``buf`` (bytes), aligned relative to offset 4."""

    __slots__ = ('buf', 'at')

    def __init__(self, buf):
        self.buf, self.at = buf, 4

    def _align(self, size):
        self.at += -(self.at - 4) % size

    def _take(self, size):
        at = self.at
        if at + size > len(self.buf):
            raise RequestError(ErrorCodes.INVALID_REQUEST,
                               f'the serialized reference ends at byte {len(self.buf)}, '
                               f'before the {size} bytes at {at} its counts call for')
        self.at = at + size
        return at

    def count(self):
        self._align(4)
        return _U32.unpack_from(self.buf, self._take(4))[0]

    def pair(self):
        """(int32, uint32): a Time or Duration."""
        self._align(4)
        return _STAMP.unpack_from(self.buf, self._take(8))

    def string(self):
        n = self.count()
        at = self._take(n)
        return self.buf[at:at + max(n - 1, 0)].decode()

    def strings(self):
        return [self.string() for _ in range(self.count())]

    def doubles(self):
        """A float64 sequence as a (n,) array."""
        n = self.count()
        if n == 0:
            return np.empty(0)
        self._align(8)
        return np.frombuffer(self.buf, '<f8', n, self._take(8 * n))

    def fixed(self, layout):
        """Consecutive float64 fields (``layout``: a struct of them) as a tuple."""
        self._align(8)
        return layout.unpack_from(self.buf, self._take(layout.size))

    def header(self):
        """The header: ``stamp`` a ``builtin_interfaces/Time`` (it goes into the outputs as it
        is), ``frame_id``."""
        sec, nanosec = self.pair()
        return SimpleNamespace(stamp=Time(sec=sec, nanosec=nanosec), frame_id=self.string())

    def duration(self):
        sec, nanosec = self.pair()
        return SimpleNamespace(sec=sec, nanosec=nanosec)


def _xyz(x, y, z):
    return SimpleNamespace(x=x, y=y, z=z)


def _spatial(c, n):
    """``n`` Twists / Accels (linear, angular) as objects of their field names."""
    out = []
    for _ in range(n):
        v = c.fixed(_SIX)
        out.append(SimpleNamespace(linear=_xyz(*v[:3]), angular=_xyz(*v[3:])))
    return out


def _joint_trajectory(c):
    header, names = c.header(), c.strings()
    points = [SimpleNamespace(positions=c.doubles(), velocities=c.doubles(),
                              accelerations=c.doubles(), effort=c.doubles(),
                              time_from_start=c.duration())
              for _ in range(c.count())]
    return SimpleNamespace(header=header, joint_names=names, points=points)


def _multi_dof_trajectory(c):
    header, names = c.header(), c.strings()
    points = []
    for _ in range(c.count()):
        transforms = []
        for _ in range(c.count()):
            t, q = c.fixed(_VEC3), c.fixed(_QUAT)
            transforms.append(SimpleNamespace(translation=_xyz(*t), rotation=SimpleNamespace(
                x=q[0], y=q[1], z=q[2], w=q[3])))
        velocities = _spatial(c, c.count())
        accelerations = _spatial(c, c.count())
        points.append(SimpleNamespace(transforms=transforms, velocities=velocities,
                                      accelerations=accelerations,
                                      time_from_start=c.duration()))
    return SimpleNamespace(header=header, joint_names=names, points=points)


_READERS = {JointTrajectory: _joint_trajectory, MultiDOFJointTrajectory: _multi_dof_trajectory}


def read_reference(raw, msg_type):
    """The reference ``raw`` (the serialized bytes of a ``msg_type`` message: JointTrajectory
    or MultiDOFJointTrajectory) as the handlers read it (module doc)."""
    if raw[:2] != CDR_LE:
        return deserialize_message(raw, msg_type)
    return _READERS[msg_type](_Cursor(raw))
