"""Conversions between ROS messages and the core's numpy arrays, and request validation.

No dynamics here: joint values are matched by name, quaternions become rotation matrices,
twists become task-space vectors (the components the robot's task space selects), and every
problem with a request raises :class:`RequestError` carrying an ErrorCodes value and a
message that names the field, point or joint. Values are checked finite and within the
core's input bounds (``core.bounds``: a value beyond them is INVALID_STATE); results are
checked finite before they go into a message (:func:`floats`).
"""
import math

from geometry_msgs.msg import Pose, Twist, Vector3, Wrench
import numpy as np
from pkm_dynamics_interfaces.msg import ErrorCodes

from pkm_dynamics.core.bounds import (MAX_POINTS, MAX_RATE, check_effort, check_position,
                                      check_rate)
from pkm_dynamics.core.errors import (ConvergenceError, DescriptionError, PkmDynamicsError,
                                      SingularityError)

#: order of the twist components in the core (``TASK_COORDINATES`` of the description)
TWIST_COMPONENTS = ('wx', 'wy', 'wz', 'vx', 'vy', 'vz')
#: a quaternion whose norm is further than this from 1 is rejected (else normalised)
QUATERNION_NORM_TOLERANCE = 1e-3


class RequestError(ValueError):
    """A request or message the node cannot serve: ``code`` (ErrorCodes value), message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def core_error(exc):
    """``(ErrorCodes value, message)`` of an exception of the core (or any other).

    Numerical breakdowns that bounded input should never reach are still named: a linear
    algebra failure is SINGULAR, an overflow NON_FINITE; anything else is FAILURE (a bug)."""
    if isinstance(exc, RequestError):
        return exc.code, str(exc)
    if isinstance(exc, np.linalg.LinAlgError):
        return ErrorCodes.SINGULAR, f'the computation is numerically singular: {exc}'
    if isinstance(exc, (OverflowError, FloatingPointError)):
        return ErrorCodes.NON_FINITE, f'the computation overflowed: {exc}'
    if isinstance(exc, SingularityError):
        return ErrorCodes.SINGULAR, str(exc)
    if isinstance(exc, ConvergenceError):
        return ErrorCodes.NO_IK_SOLUTION, str(exc)
    if isinstance(exc, DescriptionError):
        return ErrorCodes.NOT_SUPPORTED, str(exc)
    if isinstance(exc, PkmDynamicsError):
        return ErrorCodes.INVALID_STATE, str(exc)
    return ErrorCodes.FAILURE, f'{type(exc).__name__}: {exc}'


def finite(values, what):
    """``values`` as a float array; NON_FINITE naming ``what`` if it holds NaN or Inf."""
    a = np.asarray(values, dtype=float)
    if not np.isfinite(a).all():
        raise RequestError(ErrorCodes.NON_FINITE, f'{what} holds NaN or Inf: {a.tolist()}')
    return a


def name_index(names, wanted, what, allow_extra=False):
    """Positions in ``names`` of each of ``wanted`` (matched by name, any order).

    UNKNOWN_JOINT for a name that is not in ``wanted`` (unless ``allow_extra``) or a wanted
    name that is missing; INVALID_REQUEST for a name given twice."""
    names = list(names)
    seen = set()
    for name in names:
        if name in seen:
            raise RequestError(ErrorCodes.INVALID_REQUEST,
                               f'{what}: joint "{name}" is given twice')
        seen.add(name)
    if not allow_extra:
        unknown = [name for name in names if name not in wanted]
        if unknown:
            raise RequestError(ErrorCodes.UNKNOWN_JOINT,
                               f'{what}: unknown joint(s) {unknown}; expected the actuated '
                               f'joints {list(wanted)}')
    missing = [name for name in wanted if name not in seen]
    if missing:
        raise RequestError(ErrorCodes.UNKNOWN_JOINT,
                           f'{what}: missing joint(s) {missing}; expected {list(wanted)}')
    return [names.index(name) for name in wanted]


#: the input bound of a field by its kind: ``rate k`` (k-th time derivative), ``effort``
#: (efforts, wrenches), ``position`` (joint positions without a stroke to check them, e.g. an IK
#: seed) — a value beyond it is INVALID_STATE (see ``core.bounds``)
BOUNDS = {'position': lambda a, what: check_position(a, what, 'm or rad'),
          'rate 1': lambda a, what: check_rate(a, what, 1),
          'rate 2': lambda a, what: check_rate(a, what, 2),
          'rate 3': lambda a, what: check_rate(a, what, 3),
          'rate 4': lambda a, what: check_rate(a, what, 4),
          'effort': check_effort}


def bounded(values, what, bound=None):
    """:func:`finite` ``values``, then within the input bound ``BOUNDS[bound]`` (if given)."""
    a = finite(values, what)
    if bound is not None:
        BOUNDS[bound](a, what)
    return a


def ordered(values, index, count, what, optional=False, bound=None):
    """``values`` (one per name, ``count`` names) reordered by ``index``; an empty array of
    an ``optional`` field gives zeros. INVALID_SIZE / NON_FINITE naming ``what``;
    INVALID_STATE beyond the input bound ``bound`` (a key of ``BOUNDS``)."""
    values = list(values)
    if optional and not values:
        return np.zeros(len(index))
    if len(values) != count:
        raise RequestError(ErrorCodes.INVALID_SIZE,
                           f'{what} has {len(values)} entries for {count} joint names')
    return bounded(values, what, bound)[index]


#: per row of :func:`actuator_states` (positions, velocities, accelerations): the largest
#: magnitude an entry may have (positions: any finite value; rates: ``core.bounds.MAX_RATE``)
STATE_BOUNDS = np.array([[[np.finfo(float).max]], [[MAX_RATE[1]]], [[MAX_RATE[2]]]])


def actuator_states(points, index, count, what='points'):
    """Positions, velocities and accelerations (3, B, n) of the B JointTrajectoryPoints
    ``points`` (``count`` joint names each), reordered by ``index`` (:func:`name_index`);
    empty velocities / accelerations give zeros.

    The whole batch goes into one array and through one check (sizes, finite, within the
    input bounds); only a batch that fails it is gone through point by point with
    :func:`ordered`, which raises INVALID_SIZE / NON_FINITE / INVALID_STATE naming the point
    and field (``what[k].positions`` ...)."""
    out = np.zeros((3, len(points), count))
    fits = True
    for k, p in enumerate(points):
        pos, vel, acc = p.positions, p.velocities, p.accelerations
        if len(pos) != count or len(vel) not in (0, count) or len(acc) not in (0, count):
            fits = False
            break
        out[0, k] = pos
        if len(vel):
            out[1, k] = vel
        if len(acc):
            out[2, k] = acc
    if fits and (np.abs(out) <= STATE_BOUNDS).all():
        return out[:, :, index]
    for k, p in enumerate(points):             # names the culprit
        out[0, k] = ordered(p.positions, index, count, f'{what}[{k}].positions')
        out[1, k] = ordered(p.velocities, index, count, f'{what}[{k}].velocities',
                            optional=True, bound='rate 1')
        out[2, k] = ordered(p.accelerations, index, count, f'{what}[{k}].accelerations',
                            optional=True, bound='rate 2')
    return out


def check_points(count):
    """INVALID_REQUEST if a trajectory has more than ``MAX_POINTS`` points (one request's work
    is bounded: split longer trajectories into several requests)."""
    if count > MAX_POINTS:
        raise RequestError(ErrorCodes.INVALID_REQUEST,
                           f'the trajectory has {count} points, more than the {MAX_POINTS} of one '
                           f'request: split it into several requests')


def quaternion_matrix(x, y, z, w, what='orientation'):
    """Rotation matrix (3, 3) of the quaternion (x, y, z, w); normalised if its norm is
    within QUATERNION_NORM_TOLERANCE of 1, else INVALID_REQUEST."""
    q = finite([x, y, z, w], what)
    norm = quaternion_norm(*q.tolist())
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        raise RequestError(ErrorCodes.INVALID_REQUEST,
                           f'{what}: quaternion (x, y, z, w) = {q.tolist()} has norm {norm:.6g}, '
                           f'not 1')
    return unit_quaternion_matrix(*(c / norm for c in q.tolist()))


def quaternion_norm(x, y, z, w):
    """The norm of the finite quaternion (x, y, z, w), scaled (a norm of huge components
    overflows). Python floats: numpy's scalar arithmetic would take several times longer."""
    scale = max(abs(x), abs(y), abs(z), abs(w))
    if not scale > 0:
        return 0.0
    x, y, z, w = x / scale, y / scale, z / scale, w / scale
    return scale * math.sqrt(x * x + y * y + z * z + w * w)


def quaternion_rows(x, y, z, w):
    """The rows of the rotation matrix of the unit quaternion (x, y, z, w), as tuples of
    Python floats."""
    return ((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
            (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
            (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)))


def unit_quaternion_matrix(x, y, z, w):
    """Rotation matrix (3, 3) of the unit quaternion (x, y, z, w) (Python floats)."""
    return np.array(quaternion_rows(x, y, z, w))


def matrix_quaternion(R):
    """Quaternion (x, y, z, w), w >= 0, of a rotation matrix (3, 3)."""
    R = np.asarray(R, dtype=float)
    t = R[0, 0] + R[1, 1] + R[2, 2]
    if t > 0:
        s = 2.0 * math.sqrt(1.0 + t)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, s / 4]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [s / 4, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 1] + R[1, 0]) / s, s / 4, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, s / 4, (R[1, 0] - R[0, 1]) / s]
    q = np.array(q)
    return q if q[3] >= 0 else -q


def pose_matrix(msg, what='pose'):
    """4x4 homogeneous matrix of a geometry_msgs/Pose or Transform."""
    if hasattr(msg, 'position'):
        p, o = msg.position, msg.orientation
    else:
        p, o = msg.translation, msg.rotation
    C = np.eye(4)
    C[:3, :3] = quaternion_matrix(o.x, o.y, o.z, o.w, f'{what}.orientation')
    C[:3, 3] = check_position(finite([p.x, p.y, p.z], f'{what}.position'), f'{what}.position')
    return C


def matrix_pose(C):
    """geometry_msgs/Pose of a 4x4 homogeneous matrix."""
    msg = Pose()
    msg.position.x, msg.position.y, msg.position.z = (float(v) for v in C[:3, 3])
    (msg.orientation.x, msg.orientation.y, msg.orientation.z,
     msg.orientation.w) = (float(v) for v in matrix_quaternion(C[:3, :3]))
    return msg


def check_frame(frame_id, root_link, what):
    """INVALID_REQUEST naming ``what``, the frame and the root link unless ``frame_id`` is the
    root link or empty (= the root link): poses are taken in the root link frame only."""
    if frame_id and frame_id != root_link:
        raise RequestError(ErrorCodes.INVALID_REQUEST,
                           f'{what} is "{frame_id}": poses are taken in the root link frame '
                           f'"{root_link}" (give that or leave it empty)')


def stamped_pose_matrix(msg, root_link, what='pose'):
    """4x4 homogeneous matrix of a geometry_msgs/PoseStamped in the root link frame
    (:func:`check_frame` on its header, then :func:`pose_matrix`)."""
    check_frame(msg.header.frame_id, root_link, f'{what}.header.frame_id')
    return pose_matrix(msg.pose, f'{what}.pose')


def refuse_fields(given, why):
    """INVALID_REQUEST naming the fields ``given`` (request fields set that the robot's kind
    does not take), ``why`` saying what to send instead; nothing when ``given`` is empty."""
    if given:
        raise RequestError(ErrorCodes.INVALID_REQUEST,
                           f'{", ".join(given)} {"is" if len(given) == 1 else "are"} set: {why}')


def set_fields(msg, names, prefix=''):
    """The names (``prefix`` + name) of the message fields ``names`` of ``msg`` that differ
    from their defaults (messages) or are not empty (arrays)."""
    given = []
    for name in names:
        value = getattr(msg, name)
        default = type(value)() if hasattr(value, 'get_fields_and_field_types') else None
        if (value != default) if default is not None else len(value):
            given.append(prefix + name)
    return given


def flagged_vector(given, msg, components, what, bound):
    """A Twist / Accel with a ``has_<what>`` flag: None when not ``given`` (then the message
    must be all zero: INVALID_REQUEST otherwise, a value would be silently ignored), else its
    ``components`` (the robot's ``twist_components``: a PKM's task space, all six for a module
    chain)."""
    if not given:
        refuse_fields([what] if msg != type(msg)() else [],
                      f'has_{what} is false: set has_{what}: true to use it, or leave it zero')
        return None
    return task_vector(msg, components, what, bound)


def spatial_vector(msg, what, bound=None):
    """(angular, linear) 6-vector of a Twist / Accel ((moment, force) of a Wrench: its bound
    is ``'effort'``), within the input bound ``bound`` (a key of ``BOUNDS``)."""
    if hasattr(msg, 'torque'):
        a, b = msg.torque, msg.force
        bound = 'effort'
    else:
        a, b = msg.angular, msg.linear
    return bounded([a.x, a.y, a.z, b.x, b.y, b.z], what, bound)


def task_vector(msg, task_space, what, bound=None):
    """The task-space components (``task_space``, e.g. ('vx', 'vz')) of a Twist / Accel;
    INVALID_REQUEST if a component outside the task space is non-zero."""
    v = spatial_vector(msg, what, bound)
    extra = {c: v[k] for k, c in enumerate(TWIST_COMPONENTS) if c not in task_space and v[k] != 0}
    if extra:
        names = {'wx': 'angular.x', 'wy': 'angular.y', 'wz': 'angular.z',
                 'vx': 'linear.x', 'vy': 'linear.y', 'vz': 'linear.z'}
        fields = ', '.join(f'{names[c]} = {val:g}' for c, val in extra.items())
        raise RequestError(ErrorCodes.INVALID_REQUEST,
                           f'{what}: {fields} outside the task space ({" ".join(task_space)}) '
                           f'must be zero')
    return np.array([v[TWIST_COMPONENTS.index(c)] for c in task_space])


def task_message(values, task_space, kind=Twist):
    """Twist (or Accel with ``kind=Accel``) with the task components ``values`` set."""
    msg = kind()
    for c, v in zip(task_space, values):
        part = msg.angular if c[0] == 'w' else msg.linear
        setattr(part, c[1], float(v))
    return msg


def floats(values, what='a result'):
    """A plain list of floats (what rosidl array fields take fastest); NON_FINITE naming
    ``what`` if a value is NaN or Inf (a computation that overflowed is never answered)."""
    a = np.asarray(values, dtype=float).ravel()
    if not np.isfinite(a).all():
        raise RequestError(ErrorCodes.NON_FINITE,
                           f'{what} is not finite ({a.tolist()}): the computation overflowed')
    return a.tolist()


def wrench_messages(rows, what):
    """``geometry_msgs/Wrench`` messages of (k, 6) (moment, force) rows; NON_FINITE naming
    ``what`` if a value is NaN or Inf."""
    values = floats(rows, what)
    return [Wrench(torque=Vector3(x=values[i], y=values[i + 1], z=values[i + 2]),
                   force=Vector3(x=values[i + 3], y=values[i + 4], z=values[i + 5]))
            for i in range(0, len(values), 6)]


__all__ = ['BOUNDS', 'RequestError', 'STATE_BOUNDS', 'actuator_states', 'bounded', 'check_frame',
           'check_points', 'core_error', 'finite', 'flagged_vector', 'floats', 'matrix_pose',
           'matrix_quaternion', 'name_index', 'ordered', 'pose_matrix', 'quaternion_matrix',
           'quaternion_norm', 'unit_quaternion_matrix',
           'refuse_fields', 'set_fields', 'spatial_vector', 'stamped_pose_matrix', 'task_message',
           'task_vector', 'wrench_messages']
