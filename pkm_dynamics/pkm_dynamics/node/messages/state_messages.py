"""The robot's state in requests and references, by state space (``robot.state_space``).

A robot is served in its minimal coordinates (:mod:`pkm_dynamics.core.interface`): module
chains in *actuator space* (the actuated joints' positions and rates, by name), parallel
manipulators in *task space* (the platform pose and the task twist). Each space reads the
state ``(x, xd, xdd, ...)`` from the message fields that carry it in that space and refuses
the other space's fields; :data:`SPACES` gives the reader of a robot's space. Everything else
(the core calls, the responses) is the same for both spaces.
"""
import functools

from geometry_msgs.msg import Accel
import numpy as np
from pkm_dynamics_interfaces.msg import ErrorCodes

from pkm_dynamics.node.messages.cdr_messages import TaskPoint
from pkm_dynamics.node.messages.conversions import (QUATERNION_NORM_TOLERANCE, RequestError, TWIST_COMPONENTS,
                                      actuator_states, check_frame, floats, name_index, ordered,
                                      pose_matrix, quaternion_norm, quaternion_rows,
                                      refuse_fields, set_fields, stamped_pose_matrix,
                                      task_message, task_vector)
from pkm_dynamics.core.bounds import MAX_POSITION, MAX_RATE

#: the fields of a motion's derivatives (HigherOrderInverseDynamics): actuator, task space
MOTION_RATES = ('velocity', 'acceleration', 'jerk', 'snap')
TASK_RATES = ('twist', 'acceleration', 'jerk', 'snap')


class ActuatorSpace:
    """Module chains: the actuated joints, matched by name in any order (every one given)."""

    robot_is = 'a module chain'
    #: the reference topic (role of ``streaming.TOPICS``) and its message type
    reference_role, reference_form = 'reference', 'JointTrajectory'

    @staticmethod
    def forward_dynamics_state(model, request, index, count):
        """``(x, xd)`` of a ForwardDynamics request (``joint_state`` matched by ``index``)."""
        refuse_fields(set_fields(request, ('pose', 'twist')),
                      f'robot "{model.name}" is a module chain: its state is '
                      f'joint_state (position, velocity), not pose and twist')
        js = request.joint_state
        x = ordered(js.position, index, count, 'joint_state.position')
        xd = ordered(js.velocity, index, count, 'joint_state.velocity', optional=True,
                     bound='rate 1')
        return x, xd

    @staticmethod
    def forward_dynamics_answer(model, response, xdd):
        response.acceleration = floats(xdd, 'acceleration')

    @staticmethod
    def trajectory(model, request):
        """The trajectory of an InverseDynamics request (``trajectory``)."""
        if request.task_trajectory.points:
            raise RequestError(ErrorCodes.INVALID_REQUEST,
                               f'robot "{model.name}" is a module chain: give the motion '
                               f'as trajectory (actuator space), not as task_trajectory')
        return request.trajectory

    @staticmethod
    def point_reader(model, trajectory, what='trajectory'):
        """``read(p, k) -> (x, xd, xdd)`` of the points of a JointTrajectory (missing rates:
        zero)."""
        index = name_index(trajectory.joint_names, model.actuated, f'{what}.joint_names'
                           if what else 'joint_names')
        n = len(trajectory.joint_names)

        def read(p, k):
            x = ordered(p.positions, index, n, f'points[{k}].positions')
            xd = ordered(p.velocities, index, n, f'points[{k}].velocities', optional=True,
                         bound='rate 1')
            xdd = ordered(p.accelerations, index, n, f'points[{k}].accelerations',
                          optional=True, bound='rate 2')
            return x, xd, xdd
        return read

    @staticmethod
    def states_at_once(model, trajectory):
        """``(X, XD, XDD)`` (B, n) of every point of a JointTrajectory in one array
        (:func:`~pkm_dynamics.node.messages.conversions.actuator_states`: one check for all, the culprit named
        point by point when it fails): the states need no solving, so the whole trajectory goes
        to the core in one batched call."""
        index = name_index(trajectory.joint_names, model.actuated, 'trajectory.joint_names')
        return actuator_states(trajectory.points, index, len(trajectory.joint_names))

    @staticmethod
    def higher_order_state(model, request):
        """``(x, [xd, xdd, xddd, xdddd])`` of a HigherOrderInverseDynamics request."""
        refuse_fields(set_fields(request, ('pose', 'twist', 'acceleration', 'jerk', 'snap')),
                      f'robot "{model.name}" is a module chain: give the motion as motion '
                      f'(actuator space)')
        m = request.motion
        index = name_index(m.name, model.actuated, 'motion.name')
        n = len(m.name)
        x = ordered(m.position, index, n, 'motion.position')
        return x, [ordered(getattr(m, f), index, n, f'motion.{f}', optional=True,
                           bound=f'rate {k}') for k, f in enumerate(MOTION_RATES, start=1)]


class TaskSpace:
    """Parallel manipulators: the platform pose (root link frame) and the task twist."""

    robot_is = 'a parallel manipulator'
    reference_role, reference_form = 'task_reference', 'MultiDOFJointTrajectory'

    @staticmethod
    def forward_dynamics_state(model, request, index, count):
        """``(x, xd)`` of a ForwardDynamics request: ``pose`` and ``twist``."""
        refuse_fields(set_fields(request.joint_state, ('position', 'velocity'), 'joint_state.'),
                      f'robot "{model.name}" is a parallel manipulator: its state is pose '
                      f'and twist; joint_state carries only name and effort')
        pose = stamped_pose_matrix(request.pose, model.root_link)
        return pose, task_vector(request.twist, model.task_space, 'twist', bound='rate 1')

    @staticmethod
    def forward_dynamics_answer(model, response, xdd):
        response.platform_acceleration = task_message(floats(xdd, 'platform_acceleration'),
                                                      model.task_space, Accel)

    @staticmethod
    def trajectory(model, request):
        """The trajectory of an InverseDynamics request (``task_trajectory``)."""
        if request.trajectory.points:
            raise RequestError(ErrorCodes.INVALID_REQUEST,
                               f'robot "{model.name}" is a parallel manipulator: give the '
                               f'motion as task_trajectory (platform pose and twist), not '
                               f'as trajectory')
        return request.task_trajectory

    @staticmethod
    def point_reader(model, trajectory, what='task_trajectory'):
        """``read(p, k) -> (pose, V_t, dV_t)`` of the points of a MultiDOFJointTrajectory
        (one transform, at most one velocity and acceleration; missing rates: zero)."""
        check_frame(trajectory.header.frame_id, model.root_link,
                    f'{what}.header.frame_id' if what else 'header.frame_id')
        zero = np.zeros(len(model.task_space))
        fast = task_point_reader(model.task_space)

        def read(p, k):
            state = fast(p)
            if state is not None:
                return state
            where = f'points[{k}]'
            if len(p.transforms) != 1:
                raise RequestError(ErrorCodes.INVALID_SIZE,
                                   f'{where}.transforms has {len(p.transforms)} entries: give '
                                   f'one (the platform pose)')
            for field in ('velocities', 'accelerations'):
                if len(getattr(p, field)) > 1:
                    raise RequestError(ErrorCodes.INVALID_SIZE,
                                       f'{where}.{field} has {len(getattr(p, field))} entries: '
                                       f'give 0 or 1')
            pose = pose_matrix(p.transforms[0], f'{where}.transforms[0]')
            twist = (task_vector(p.velocities[0], model.task_space, f'{where}.velocities[0]',
                                 bound='rate 1') if p.velocities else zero)
            accel = (task_vector(p.accelerations[0], model.task_space,
                                 f'{where}.accelerations[0]', bound='rate 2')
                     if p.accelerations else zero)
            return pose, twist, accel
        return read

    @staticmethod
    def states_at_once(model, trajectory):
        """None: each point's state is an inverse kinematics that starts from the previous
        point's solution, so the points are answered one by one."""
        return None

    @staticmethod
    def higher_order_state(model, request):
        refuse_fields(set_fields(request, ('motion',)),
                      f'robot "{model.name}" is a parallel manipulator: give the motion as '
                      f'pose, twist, acceleration, jerk, snap (task space)')
        x = stamped_pose_matrix(request.pose, model.root_link)
        return x, [task_vector(getattr(request, f), model.task_space, f, bound=f'rate {k}')
                   for k, f in enumerate(TASK_RATES, start=1)]


#: per value of :func:`task_point_values`: the largest magnitude it may have (position:
#: ``MAX_POSITION``; quaternion: any finite value; twist, acceleration: ``MAX_RATE``)
TASK_POINT_BOUNDS = np.repeat([MAX_POSITION, np.finfo(float).max, MAX_RATE[1], MAX_RATE[2]],
                              [3, 4, 6, 6])


def task_point_values(p):
    """The values (19,) of a MultiDOFJointTrajectoryPoint of one transform and at most one
    velocity and acceleration: translation (3), rotation (x, y, z, w), twist and acceleration
    (angular, linear; missing: zero); None for any other shape. A point read from its bytes
    (:class:`~pkm_dynamics.node.messages.cdr_messages.TaskPoint`) has them already."""
    if isinstance(p, TaskPoint):
        return p.values
    if len(p.transforms) != 1 or len(p.velocities) > 1 or len(p.accelerations) > 1:
        return None
    tf = p.transforms[0]
    t, o = tf.translation, tf.rotation
    values = [t.x, t.y, t.z, o.x, o.y, o.z, o.w]
    for rates in (p.velocities, p.accelerations):
        if rates:
            a, b = rates[0].angular, rates[0].linear
            values += (a.x, a.y, a.z, b.x, b.y, b.z)
        else:
            values += (0.0,) * 6
    return np.array(values)


@functools.lru_cache(maxsize=16)
def task_point_reader(task_space):
    """``read(p) -> (pose, V_t, dV_t)`` of a task point that passes every check of
    :meth:`TaskSpace.point_reader` at once (one array, one bound check: the stream's common
    case), the same numbers; None for a point that does not (that reader then names the
    problem). One per task space (``task_space``: a tuple), made once."""
    rows = [TWIST_COMPONENTS.index(c) for c in task_space]
    twist = np.array(rows) + 7                                  # in task_point_values
    accel = twist + 6
    bounds = TASK_POINT_BOUNDS.copy()                           # outside the task space: zero
    bounds[np.setdiff1d(np.arange(7, 19), np.concatenate([twist, accel]))] = 0.0

    def read(p):
        values = task_point_values(p)
        if values is None or not (np.abs(values) <= bounds).all():
            return None
        x, y, z, qx, qy, qz, qw = values[:7].tolist()
        norm = quaternion_norm(qx, qy, qz, qw)
        if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
            return None
        qx, qy, qz, qw = qx / norm, qy / norm, qz / norm, qw / norm
        (r0, r1, r2), (r3, r4, r5), (r6, r7, r8) = quaternion_rows(qx, qy, qz, qw)
        pose = np.array(((r0, r1, r2, x), (r3, r4, r5, y), (r6, r7, r8, z),
                         (0.0, 0.0, 0.0, 1.0)))
        return pose, values[twist], values[accel]
    return read


#: the message reader of each state space (``robot.state_space``)
SPACES = {'actuator': ActuatorSpace, 'task': TaskSpace}
