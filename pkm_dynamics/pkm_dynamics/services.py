"""The node's services: each handler converts a request into arrays (``conversions``), calls
the core and fills the response; :meth:`Services._serve` turns any failure into ``success =
false`` with an error code and a message naming the problem.

:class:`Services` is a part of :class:`~pkm_dynamics.dynamics_node.DynamicsNode` (a mixin: it
uses the node's model, lifecycle state, diagnostics, clock and logger)."""
from geometry_msgs.msg import Accel, Twist
import numpy as np
from pkm_dynamics_interfaces.msg import ErrorCodes
from trajectory_msgs.msg import JointTrajectoryPoint

from pkm_dynamics.conversions import (TWIST_COMPONENTS, RequestError, actuator_states,
                                      check_frame, check_points,
                                      core_error, flagged_vector, floats, matrix_pose,
                                      name_index, ordered, refuse_fields, set_fields,
                                      spatial_vector, stamped_pose_matrix, task_message,
                                      task_vector, pose_matrix)
from pkm_dynamics.core.forward_state import forward_state
from pkm_dynamics.core.higher_order import higher_order_inverse_dynamics
from pkm_dynamics.feedforward_outputs import check_finite, trajectory_points

#: request queue depth of every service (the ROS default, 10, drops a burst's further requests
#: silently while a long call is served)
SERVICE_QUEUE_DEPTH = 1000


class Services:
    """The service handlers (part of the node class)."""

    def _on_get_model_info(self, request, response):
        model = self._model
        if model is None:
            response.success = False
            response.error_code.val = (ErrorCodes.INVALID_DESCRIPTION if 'rejected' in
                                       self._model_error else ErrorCodes.NO_MODEL)
            response.message = self._model_error
            return response
        response.success = True
        response.error_code.val = ErrorCodes.SUCCESS
        response.message = 'model loaded' + self._description_note + (
            '' if self._state == 'active' else f'; the node is {self._state}, not serving')
        response.robot_name = model.name
        response.kind = model.kind
        response.tree_joints = list(model.tree_joints)
        response.actuated_joints = list(model.actuated)
        response.series_elastic_joints = list(model.series_elastic)
        response.end_effector = model.end_effector or ''
        response.task_space = list(model.task_space)
        response.num_bodies = model.num_bodies
        response.total_mass = float(model.total_mass)
        response.gravity = model.gravity
        payload = model.payload
        response.payload_link = model.end_effector or ''
        response.payload_mass = payload.mass
        response.payload_com = floats(payload.com)
        response.payload_inertia = floats(payload.inertia[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]])
        return response

    def _serve(self, handler):
        """Service callback around ``handler(model, request, response)``: any failure becomes
        success = false, an error code and a message on a fresh response."""
        def callback(request, response):
            model = self._model
            try:
                self._require_active()
                if model is None:
                    raise RequestError(ErrorCodes.NO_MODEL, self._model_error)
                handler(model, request, response)
            except Exception as exc:
                code, message = core_error(exc)
                if code == ErrorCodes.FAILURE:
                    self.get_logger().error(f'{handler.__name__[1:]}: unexpected {message}')
                self._diagnostics.error(handler.__name__[1:], message)
                failed_point = getattr(exc, 'point', None)
                response = type(response)()
                response.success = False
                response.error_code.val = code
                response.message = message
                if hasattr(response, 'failed_point'):
                    response.failed_point = -1 if failed_point is None else failed_point
                return response
            response.success = True
            response.error_code.val = ErrorCodes.SUCCESS
            if not response.message:
                response.message = 'ok'
            return response
        return callback

    @staticmethod
    def _wrench(model, wrenches, what='wrench'):
        if not wrenches:
            return None
        return spatial_vector(wrenches[0], what)

    def _forward_dynamics(self, model, request, response):
        js = request.joint_state
        index = name_index(js.name, model.actuated, 'joint_state.name')
        count = len(js.name)
        f = ordered(js.effort, index, count, 'joint_state.effort', bound='effort')
        wrench = self._wrench(model, request.wrench)
        response.joint_names = list(model.actuated)
        if model.parallel:
            refuse_fields(set_fields(js, ('position', 'velocity'), 'joint_state.'),
                          f'robot "{model.name}" is a parallel manipulator: its state is pose '
                          f'and twist; joint_state carries only name and effort')
            pose = stamped_pose_matrix(request.pose, model.root_link)
            twist = task_vector(request.twist, model.task_space, 'twist', bound='rate 1')
            a = model.robot.forward_dynamics(pose, twist, f, wrench=wrench)
            response.platform_acceleration = task_message(floats(a, 'platform_acceleration'),
                                                          model.task_space, Accel)
        else:
            refuse_fields(set_fields(request, ('pose', 'twist')),
                          f'robot "{model.name}" is a module chain: its state is '
                          f'joint_state (position, velocity), not pose and twist')
            x = ordered(js.position, index, count, 'joint_state.position')
            xd = ordered(js.velocity, index, count, 'joint_state.velocity', optional=True,
                         bound='rate 1')
            response.acceleration = floats(model.robot.forward_dynamics(x, xd, f, f_ext=wrench),
                                           'acceleration')

    def _inverse_dynamics(self, model, request, response):
        if model.parallel:
            points = request.task_trajectory.points
            if request.trajectory.points:
                raise RequestError(ErrorCodes.INVALID_REQUEST,
                                   f'robot "{model.name}" is a parallel manipulator: give the '
                                   f'motion as task_trajectory (platform pose and twist), not '
                                   f'as trajectory')
        else:
            points = request.trajectory.points
            if request.task_trajectory.points:
                raise RequestError(ErrorCodes.INVALID_REQUEST,
                                   f'robot "{model.name}" is a module chain: give the motion '
                                   f'as trajectory (actuator space), not as task_trajectory')
        if not points:
            raise RequestError(ErrorCodes.INVALID_REQUEST, 'the trajectory has no points')
        check_points(len(points))
        wrenches = list(request.wrenches)
        if len(wrenches) not in (0, 1, len(points)):
            raise RequestError(ErrorCodes.INVALID_SIZE,
                               f'wrenches has {len(wrenches)} entries: give 0, 1 or one per '
                               f'point ({len(points)})')
        out = response.feedforward
        out.header = (request.task_trajectory if model.parallel else request.trajectory).header
        out.joint_names = list(model.actuated)
        if model.parallel:
            self._task_inverse_dynamics(model, request, points, wrenches, out)
        else:
            self._actuator_inverse_dynamics(model, request, points, wrenches, out)
        response.failed_point = -1
        response.message = f'{len(points)} point(s)'

    @staticmethod
    def _at_point(k, fn, *args):
        """fn(*args); an exception gets ``point = k`` and the point in its message."""
        try:
            return fn(*args)
        except Exception as exc:
            code, message = core_error(exc)
            error = RequestError(code, f'point {k}: {message}')
            error.point = k
            raise error from exc

    def _actuator_inverse_dynamics(self, model, request, points, wrenches, out):
        """Inverse dynamics of a module-chain trajectory: every point in one array
        (:func:`~pkm_dynamics.conversions.actuator_states`), one batched core call for all of
        them; a trajectory that fails anywhere is gone through point by point
        (:meth:`_actuator_points`), which names the first point that fails."""
        names = request.trajectory.joint_names
        index = name_index(names, model.actuated, 'trajectory.joint_names')
        try:
            X, XD, XDD = actuator_states(points, index, len(names))
            if len(wrenches) > 1:
                W = np.array([spatial_vector(w, f'wrenches[{k}]') for k, w in enumerate(wrenches)])
            else:
                W = spatial_vector(wrenches[0], 'wrenches[0]') if wrenches else None
            F = model.robot.inverse_dynamics(X, XD, XDD, f_ext=W)
            check_finite(F, 'effort')
        except Exception:
            self._actuator_points(model, points, wrenches, index, len(names))
            raise                   # not named point by point: as it is
        out.points = trajectory_points(X, XD, XDD, F, points)

    def _actuator_points(self, model, points, wrenches, index, n):
        """The trajectory point by point, each point's failure named with its index
        (:meth:`_at_point`): the error path of :meth:`_actuator_inverse_dynamics`."""
        robot = model.robot
        for k, p in enumerate(points):
            def one(p=p, k=k):
                x = ordered(p.positions, index, n, f'points[{k}].positions')
                xd = ordered(p.velocities, index, n, f'points[{k}].velocities', optional=True,
                             bound='rate 1')
                xdd = ordered(p.accelerations, index, n, f'points[{k}].accelerations',
                              optional=True, bound='rate 2')
                w = (spatial_vector(wrenches[min(k, len(wrenches) - 1)], f'wrenches[{k}]')
                     if wrenches else None)
                return robot.inverse_dynamics(x, xd, xdd, f_ext=w)
            self._at_point(k, floats, self._at_point(k, one), 'effort')

    def _task_inverse_dynamics(self, model, request, points, wrenches, out):
        check_frame(request.task_trajectory.header.frame_id, model.root_link,
                    'task_trajectory.header.frame_id')
        robot = model.robot
        previous = None
        for k, p in enumerate(points):
            def one(p=p, k=k, previous=previous):
                pose, twist, accel = self._task_point(model, p, f'points[{k}]')
                w = (spatial_vector(wrenches[min(k, len(wrenches) - 1)], f'wrenches[{k}]')
                     if wrenches else None)
                sol = robot.inverse_kinematics(pose, twist, accel, initial=previous)
                return sol, robot.inverse_dynamics(sol, twist, accel, wrench=w)
            sol, u = self._at_point(k, one)
            previous = sol
            out.points.append(JointTrajectoryPoint(
                positions=floats(sol.actuators), velocities=floats(sol.actuators_d),
                accelerations=floats(sol.actuators_dd),
                effort=self._at_point(k, floats, u, 'effort'),
                time_from_start=p.time_from_start))

    @staticmethod
    def _task_point(model, p, what):
        """(pose, V_t, dV_t) of a MultiDOFJointTrajectoryPoint (missing rates: zero)."""
        if len(p.transforms) != 1:
            raise RequestError(ErrorCodes.INVALID_SIZE,
                               f'{what}.transforms has {len(p.transforms)} entries: give one '
                               f'(the platform pose)')
        for field in ('velocities', 'accelerations'):
            if len(getattr(p, field)) > 1:
                raise RequestError(ErrorCodes.INVALID_SIZE,
                                   f'{what}.{field} has {len(getattr(p, field))} entries: give '
                                   f'0 or 1')
        pose = pose_matrix(p.transforms[0], f'{what}.transforms[0]')
        zero = np.zeros(len(model.task_space))
        twist = (task_vector(p.velocities[0], model.task_space, f'{what}.velocities[0]',
                             bound='rate 1') if p.velocities else zero)
        accel = (task_vector(p.accelerations[0], model.task_space, f'{what}.accelerations[0]',
                             bound='rate 2') if p.accelerations else zero)
        return pose, twist, accel

    def _higher_order_inverse_dynamics(self, model, request, response):
        if model.parallel:
            refuse_fields(set_fields(request, ('motion',)),
                          f'robot "{model.name}" is a parallel manipulator: give the motion as '
                          f'pose, twist, acceleration, jerk, snap (task space)')
            ts = model.task_space
            x = stamped_pose_matrix(request.pose, model.root_link)
            ders = [task_vector(getattr(request, f), ts, f, bound=f'rate {k}') for k, f in
                    enumerate(('twist', 'acceleration', 'jerk', 'snap'), start=1)]
        else:
            refuse_fields(set_fields(request, ('pose', 'twist', 'acceleration', 'jerk', 'snap')),
                          f'robot "{model.name}" is a module chain: give the motion as motion '
                          f'(actuator space)')
            m = request.motion
            index = name_index(m.name, model.actuated, 'motion.name')
            n = len(m.name)
            x = ordered(m.position, index, n, 'motion.position')
            ders = [ordered(getattr(m, f), index, n, f'motion.{f}', optional=True,
                            bound=f'rate {k}')
                    for k, f in enumerate(('velocity', 'acceleration', 'jerk', 'snap'), start=1)]
        result = higher_order_inverse_dynamics(model.robot, x, *ders)
        names = list(model.actuated)
        response.effort.name = names
        response.effort.effort = floats(result.u, 'effort.effort')
        response.effort.effort_rate = floats(result.du, 'effort.effort_rate')
        response.effort.effort_acceleration = floats(result.ddu, 'effort.effort_acceleration')
        motion = np.asarray(result.actuator_motion)
        am = response.actuator_motion
        am.name = names
        am.position, am.velocity, am.acceleration, am.jerk, am.snap = (
            floats(motion[k]) for k in range(5))
        response.series_elastic = result.motor_position is not None
        if response.series_elastic:
            mf = response.motor
            mf.name = names
            mf.position = floats(result.motor_position)
            mf.velocity = floats(result.motor_velocity)
            mf.acceleration = floats(result.motor_acceleration)
            mf.torque = floats(result.motor_torque, 'motor.torque')
        response.method = result.method

    def _inverse_kinematics(self, model, request, response):
        pose = stamped_pose_matrix(request.pose, model.root_link)
        # PKM: the platform twist's task components; module chain: the whole end-effector twist
        ts = model.task_space if model.parallel else None
        twist = flagged_vector(request.has_twist, request.twist, ts, 'twist', 'rate 1')
        accel = flagged_vector(request.has_acceleration, request.acceleration, ts,
                               'acceleration', 'rate 2')
        if accel is not None and twist is None:
            raise RequestError(ErrorCodes.INVALID_REQUEST,
                               'an acceleration needs a twist (has_acceleration without '
                               'has_twist)')
        initial = None
        seed = request.seed
        if seed.name:
            name_index(seed.name, list(seed.name), 'seed.name')      # names given twice
            unknown = [n for n in seed.name if n not in model.tree_joints]
            if unknown:
                raise RequestError(ErrorCodes.UNKNOWN_JOINT,
                                   f'seed.name: unknown joint(s) {unknown}; tree joints: '
                                   f'{list(model.tree_joints)}')
            values = ordered(seed.position, list(range(len(seed.name))), len(seed.name),
                             'seed.position')
            initial = np.zeros(len(model.tree_joints))
            for name, v in zip(seed.name, values):
                initial[model.tree_joints.index(name)] = v
            if not model.parallel:  # a module chain starts from its actuator values
                missing = [n for n in model.actuated if n not in seed.name]
                if missing:
                    raise RequestError(ErrorCodes.INVALID_REQUEST,
                                       f'seed: a module chain is seeded by its actuated joints; '
                                       f'missing {missing}')
                initial = initial[[model.tree_joints.index(n) for n in model.actuated]]
        sol = model.robot.inverse_kinematics(pose, twist, accel, initial=initial)
        self._diagnostics.condition(np.max(sol.condition))
        response.actuator_state.name = list(model.actuated)
        response.actuator_state.position = floats(sol.actuators)
        response.joint_state.name = list(model.tree_joints)
        response.joint_state.position = floats(sol.q)
        if sol.qd is not None:
            response.actuator_state.velocity = floats(sol.actuators_d)
            response.joint_state.velocity = floats(sol.qd)
        if sol.qdd is not None:
            response.actuator_acceleration = floats(sol.actuators_dd)
            response.joint_acceleration = floats(sol.qdd)
        if model.parallel:
            response.limb_names = [limb.name for limb in model.robot.limbs]
            response.iterations = [int(i) for i in sol.iterations]
            response.condition = floats(sol.condition)
        else:                       # the whole chain is one serial limb
            response.limb_names = [model.name]
            response.iterations = [int(sol.iterations)]
            response.condition = [float(sol.condition)]
            if len(sol.solutions) > 1:
                response.message = (
                    f'{len(sol.solutions)} solutions within the strokes; returned the one nearest '
                    f'{"the seed" if initial is not None else "mid-stroke"}; the others '
                    f'({list(model.actuated)}): {[floats(s) for s in sol.solutions[1:]]}')
        response.residual = float(sol.residual)

    def _forward_kinematics(self, model, request, response):
        js = request.actuator_state
        index = name_index(js.name, model.actuated, 'actuator_state.name')
        count = len(js.name)
        x = ordered(js.position, index, count, 'actuator_state.position')
        xd = (ordered(js.velocity, index, count, 'actuator_state.velocity') if len(js.velocity)
              else None)
        state = forward_state(model.robot, x, xd)
        outputs = [state.pose, state.q] + [a for a in (state.twist, state.qd, state.mass_matrix)
                                           if a is not None]
        if not all(np.isfinite(a).all() for a in outputs):
            raise RequestError(ErrorCodes.SINGULAR, 'forward kinematics gave a non-finite '
                               f'result for actuator positions {floats(x)}')
        header = response.pose.header
        header.stamp = js.header.stamp
        if header.stamp.sec == 0 and header.stamp.nanosec == 0:
            header.stamp = self.get_clock().now().to_msg()
        header.frame_id = model.root_link
        response.pose.pose = matrix_pose(state.pose)
        response.has_twist = state.twist is not None
        if response.has_twist:
            components = model.task_space if model.parallel else TWIST_COMPONENTS
            response.twist = task_message(state.twist, components, Twist)
        response.joint_state.header = header
        response.joint_state.name = list(model.tree_joints)
        response.joint_state.position = floats(state.q)
        if state.qd is not None:
            response.joint_state.velocity = floats(state.qd)
        if model.parallel:
            response.task_space = list(model.task_space)
            response.mass_matrix = floats(state.mass_matrix)
