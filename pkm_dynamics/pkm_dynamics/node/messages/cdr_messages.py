"""The streaming messages in their serialized (CDR) form: the feedforward references read
from their bytes (:func:`read_reference`), the per-reference outputs written as bytes
(:class:`JointStateBytes`, :func:`float64_array_bytes`).

Taking a ``JointTrajectory`` or ``MultiDOFJointTrajectory`` as a Python message costs rclpy a
Python object per field (every field set through its checking property): 20-35 us per
one-point reference here, as much as the crane's whole inverse dynamics. The streaming
subscriptions take the raw bytes instead (``raw=True``) and these readers build what the
feedforward handlers read: plain objects with the message's field names (``header.stamp``, a
``builtin_interfaces/Time`` that goes into the outputs as it is, ``header.frame_id``,
``joint_names``, per point ``positions`` ... as float64 arrays, ``transforms[0].translation.x``
..., ``time_from_start.sec`` ...); a task point (:class:`TaskPoint`) also has its values in
one array, which the feedforward reads instead of the fields.

Plain CDR, little-endian (the encapsulation ``00 01`` every ROS 2 middleware sends on a
little-endian machine) is read here; any other encapsulation goes to rclpy's own
``deserialize_message``. CDR: after the 4-byte encapsulation header, each primitive aligned to
its size relative to the payload start; a string is a uint32 length (with the terminating
NUL) then its bytes; a sequence a uint32 count then its elements. A payload shorter than its
counts say raises :class:`RequestError` (INVALID_REQUEST): the handler's warning names it.

The outputs are written in the same form: a template per message layout (the joint names and
the header's frame id written once), the stamp and the values written into a copy.
"""
import struct
from types import SimpleNamespace

import numpy as np
from builtin_interfaces.msg import Time
from pkm_dynamics_interfaces.msg import ErrorCodes
from rclpy.serialization import deserialize_message
from trajectory_msgs.msg import JointTrajectory, MultiDOFJointTrajectory

from pkm_dynamics.node.messages.conversions import RequestError

#: the encapsulation header of little-endian plain CDR
CDR_LE = b'\x00\x01'
_U32 = struct.Struct('<I')
_STAMP = struct.Struct('<iI')
_TRANSFORM = struct.Struct('<7d')            # translation x y z, rotation x y z w
_SIX = struct.Struct('<6d')                  # a Twist / Accel: linear, angular
_NO_RATES = (0.0,) * 6
#: frame ids kept per JointStateBytes (a stream uses one)
MAX_LAYOUTS = 16


class _Cursor:
    """Reads CDR primitives from ``buf`` (bytes), aligned relative to offset 4."""

    __slots__ = ('buf', 'at')

    def __init__(self, buf):
        self.buf, self.at = buf, 4

    def _take(self, size, align=1):
        """The offset of the next ``size`` bytes, aligned to ``align``; the cursor moves past
        them."""
        at = self.at + -(self.at - 4) % align
        if at + size > len(self.buf):
            raise RequestError(ErrorCodes.INVALID_REQUEST,
                               f'the serialized reference ends at byte {len(self.buf)}, '
                               f'before the {size} bytes at {at} its counts call for')
        self.at = at + size
        return at

    def count(self):
        return _U32.unpack_from(self.buf, self._take(4, 4))[0]

    def pair(self):
        """(int32, uint32): a Time or Duration."""
        return _STAMP.unpack_from(self.buf, self._take(8, 4))

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
        return np.frombuffer(self.buf, '<f8', n, self._take(8 * n, 8))

    def fixed(self, layout):
        """Consecutive float64 fields (``layout``: a struct of them) as a tuple."""
        return layout.unpack_from(self.buf, self._take(layout.size, 8))

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


def _spatial(rates):
    """Twists / Accels (their six values: linear, angular) as objects of their field names."""
    return [SimpleNamespace(linear=_xyz(*v[:3]), angular=_xyz(*v[3:])) for v in rates]


def _joint_trajectory(c):
    header, names = c.header(), c.strings()
    points = [SimpleNamespace(positions=c.doubles(), velocities=c.doubles(),
                              accelerations=c.doubles(), effort=c.doubles(),
                              time_from_start=c.duration())
              for _ in range(c.count())]
    return SimpleNamespace(header=header, joint_names=names, points=points)


class TaskPoint:
    """A MultiDOFJointTrajectoryPoint as read: ``time_from_start``, the fields ``transforms``,
    ``velocities``, ``accelerations`` as objects of their field names (made when read: the
    checks that name a bad value read them), and ``values``: for the stream's common shape (one
    transform, at most one velocity and acceleration) its 19 values in the order of
    :func:`~pkm_dynamics.node.messages.state_messages.task_point_values` (read at once, as an array), else
    None."""

    __slots__ = ('values', 'time_from_start', '_transforms', '_velocities', '_accelerations')

    def __init__(self, transforms, velocities, accelerations, time_from_start):
        self._transforms, self._velocities = transforms, velocities
        self._accelerations, self.time_from_start = accelerations, time_from_start
        self.values = None
        if len(transforms) == 1 and len(velocities) <= 1 and len(accelerations) <= 1:
            v = transforms[0]
            for rates in (velocities, accelerations):           # angular, then linear
                v += (rates[0][3:] + rates[0][:3]) if rates else _NO_RATES
            self.values = np.array(v)

    @property
    def transforms(self):
        return [SimpleNamespace(translation=_xyz(*t[:3]),
                                rotation=SimpleNamespace(x=t[3], y=t[4], z=t[5], w=t[6]))
                for t in self._transforms]

    @property
    def velocities(self):
        return _spatial(self._velocities)

    @property
    def accelerations(self):
        return _spatial(self._accelerations)


def _multi_dof_trajectory(c):
    header, names = c.header(), c.strings()
    points = []
    for _ in range(c.count()):
        transforms = [c.fixed(_TRANSFORM) for _ in range(c.count())]
        velocities = [c.fixed(_SIX) for _ in range(c.count())]
        accelerations = [c.fixed(_SIX) for _ in range(c.count())]
        points.append(TaskPoint(transforms, velocities, accelerations, c.duration()))
    return SimpleNamespace(header=header, joint_names=names, points=points)


_READERS = {JointTrajectory: _joint_trajectory, MultiDOFJointTrajectory: _multi_dof_trajectory}


def read_reference(raw, msg_type):
    """The reference ``raw`` (the serialized bytes of a ``msg_type`` message: JointTrajectory
    or MultiDOFJointTrajectory) as the handlers read it (module doc)."""
    if raw[:2] != CDR_LE:
        return deserialize_message(raw, msg_type)
    return _READERS[msg_type](_Cursor(raw))


# -- writing: the outputs --------------------------------------------------------------------
class _CdrBuffer:
    """A CDR payload being written: each primitive aligned to its size from offset 4."""

    def __init__(self):
        self.data = bytearray(CDR_LE + b'\x00\x00')      # encapsulation: plain CDR, LE

    def align(self, size):
        self.data += bytes(-(len(self.data) - 4) % size)

    def u32(self, value):
        self.align(4)
        self.data += _U32.pack(value)

    def string(self, text):
        raw = text.encode() + b'\0'
        self.u32(len(raw))
        self.data += raw

    def doubles(self, n):
        """A float64 sequence of ``n`` zeros; returns the offset of its first value."""
        self.u32(n)
        if n:
            self.align(8)
        at = len(self.data)
        self.data += bytes(8 * n)
        return at


def float64_array_bytes(n):
    """(template, offset of the data) of a std_msgs/Float64MultiArray of ``n`` values and an
    empty layout."""
    b = _CdrBuffer()
    b.u32(0)                    # layout.dim: empty
    b.u32(0)                    # layout.data_offset
    at = b.doubles(n)
    return bytes(b.data), at


class JointStateBytes:
    """sensor_msgs/JointState of the joints ``names`` written as CDR bytes: one template per
    frame id (the names written once), the stamp and the three value arrays written into a
    copy."""

    def __init__(self, names):
        self._names = list(names)
        self._layouts = {}

    def _layout(self, frame_id):
        layout = self._layouts.get(frame_id)
        if layout is None:
            b = _CdrBuffer()
            b.data += bytes(8)                      # header.stamp at offset 4
            b.string(frame_id)
            b.u32(len(self._names))
            for name in self._names:
                b.string(name)
            n = len(self._names)
            offsets = tuple(b.doubles(n) for _ in range(3))
            if len(self._layouts) >= MAX_LAYOUTS:
                self._layouts.clear()
            layout = self._layouts[frame_id] = (bytes(b.data), offsets, 8 * n)
        return layout

    def write(self, stamp, frame_id, position, velocity, effort):
        """The bytes of the message stamped ``stamp`` (builtin_interfaces/Time) in
        ``frame_id`` with the arrays (n,) ``position``, ``velocity``, ``effort``."""
        template, offsets, size = self._layout(frame_id)
        out = bytearray(template)
        _STAMP.pack_into(out, 4, stamp.sec, stamp.nanosec)
        for at, values in zip(offsets, (position, velocity, effort)):
            raw = np.asarray(values, dtype='<f8').tobytes()
            if len(raw) != size:
                raise ValueError(f'{len(raw) // 8} values for the {size // 8} joints '
                                 f'{self._names}')
            out[at:at + size] = raw
        return bytes(out)
