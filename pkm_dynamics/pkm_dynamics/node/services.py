"""The node's services: each handler converts a request into arrays (``conversions``), calls
the core and fills the response; :meth:`Services._serve` turns any failure into ``success =
false`` with an error code and a message naming the problem.

:class:`Services` is a part of :class:`~pkm_dynamics.node.dynamics_node.DynamicsNode` (a mixin: it
uses the node's model, lifecycle state, diagnostics, clock and logger)."""
from geometry_msgs.msg import Twist
import numpy as np
from pkm_dynamics_interfaces.msg import ErrorCodes
from trajectory_msgs.msg import JointTrajectoryPoint

from pkm_dynamics.node.messages.conversions import (RequestError, check_points, core_error, flagged_vector,
                                      floats, matrix_pose, name_index, ordered, spatial_vector,
                                      stamped_pose_matrix, task_message, wrench_messages)
from pkm_dynamics.core.forward_state import forward_state
from pkm_dynamics.core.hydraulics.valve_cylinder import hydraulic_state
from pkm_dynamics.core.limits import violations_message
from pkm_dynamics.node.messages.hydraulic_messages import hydraulic_message, hydraulic_note, point_arrays
from pkm_dynamics.node.messages.passive_states import passive_states, with_passive
from pkm_dynamics.node.streaming.feedforward_outputs import check_finite, trajectory_points

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
        response.passive_joints = list(model.passive)
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
        u = ordered(js.effort, index, count, 'joint_state.effort', bound='effort')
        wrench = self._wrench(model, request.wrench)
        response.joint_names = list(model.actuated)
        x, xd = self._with_passive(model, request, *model.space.forward_dynamics_state(model, request, index, count))
        xdd = model.robot.forward_dynamics(x, xd, u, wrench=wrench)
        na = len(model.actuated)
        model.space.forward_dynamics_answer(model, response, xdd[:na])
        response.passive_names = list(model.passive)
        response.passive_accelerations = floats(xdd[na:], 'passive_accelerations')

    @staticmethod
    def _with_passive(model, request, x, xd):
        """The state ``(x, xd)`` with the passive joints' of the request after the actuators'
        (:mod:`~pkm_dynamics.node.messages.passive_states`; unchanged without passive joints)."""
        P, PD = passive_states(model, request.passive_names, request.passive_positions,
                               request.passive_velocities)
        return with_passive(x, xd, P, PD)

    def _joint_reactions(self, model, request, response):
        """JointReactions: the state and efforts as in ForwardDynamics, the wrench of every tree
        and cut joint out (``robot.joint_reactions``, core/reactions/reactions.py)."""
        js = request.joint_state
        index = name_index(js.name, model.actuated, 'joint_state.name')
        count = len(js.name)
        u = ordered(js.effort, index, count, 'joint_state.effort', bound='effort')
        wrench = self._wrench(model, request.wrench)
        x, xd = self._with_passive(model, request, *model.space.forward_dynamics_state(model, request, index, count))
        r = model.robot.joint_reactions(x, xd, u, wrench=wrench)
        response.joint_names = list(r.joints)
        response.joint_wrenches = wrench_messages(r.joint_wrenches, 'joint_wrenches')
        response.cut_joint_names = list(r.cut_joints)
        response.cut_joint_wrenches = wrench_messages(r.cut_wrenches, 'cut_joint_wrenches')

    def _inverse_dynamics(self, model, request, response):
        trajectory = model.space.trajectory(model, request)
        points = trajectory.points
        if not points:
            raise RequestError(ErrorCodes.INVALID_REQUEST, 'the trajectory has no points')
        check_points(len(points))
        wrenches = list(request.wrenches)
        if len(wrenches) not in (0, 1, len(points)):
            raise RequestError(ErrorCodes.INVALID_SIZE,
                               f'wrenches has {len(wrenches)} entries: give 0, 1 or one per '
                               f'point ({len(points)})')
        out = response.feedforward
        out.header = trajectory.header
        out.joint_names = list(model.actuated)
        response.failed_point = -1
        response.message = f'{len(points)} point(s)'
        if model.passive:
            self._report_limits(model, response, *self._hybrid_dynamics(model, request, trajectory, wrenches, response))
            self._hydraulic_points(model, response)
            return
        elif request.passive_names or request.passive_positions or request.passive_velocities:
            passive_states(model, request.passive_names, request.passive_positions, request.passive_velocities)
        at_once = self._inverse_dynamics_at_once(model, trajectory, wrenches, out)
        if at_once is not None:
            self._report_limits(model, response, *at_once)
            self._hydraulic_points(model, response)
            return
        read = model.space.point_reader(model, trajectory)
        robot = model.robot
        previous = None             # each point's state starts from the previous one's
        U, XD = [], []
        for k, p in enumerate(points):
            def one(p=p, k=k, previous=previous):
                x, xd, xdd = read(p, k)
                w = (spatial_vector(wrenches[min(k, len(wrenches) - 1)], f'wrenches[{k}]')
                     if wrenches else None)
                state = robot.joint_motion(x, xd, xdd, initial=previous)
                return state, robot.inverse_dynamics(state, xd, xdd, wrench=w)
            state, u = self._at_point(k, one)
            previous = state
            U.append(u)
            XD.append(np.zeros_like(u) if state.actuators_d is None else state.actuators_d)
            out.points.append(JointTrajectoryPoint(
                positions=floats(state.actuators), velocities=floats(state.actuators_d),
                accelerations=floats(state.actuators_dd),
                effort=self._at_point(k, floats, u, 'effort'),
                time_from_start=p.time_from_start))
        self._report_limits(model, response, np.array(U), np.array(XD))
        self._hydraulic_points(model, response)

    def _hybrid_dynamics(self, model, request, trajectory, wrenches, response):
        """InverseDynamics of a robot with passive joints: per point Featherstone's hybrid
        dynamics (``robot.hybrid_dynamics``: the actuators' motion and the passive joints' state
        of the request in, the actuator efforts and the passive accelerations out), filling
        ``response``; returns the efforts and actuator velocities (B, n_act) each."""
        points = trajectory.points
        P, PD = passive_states(model, request.passive_names, request.passive_positions,
                               request.passive_velocities, points=len(points))
        read = model.space.point_reader(model, trajectory)
        U, XD, A = [], [], []
        for k, p in enumerate(points):
            def one(p=p, k=k):
                x, xd, xdd = read(p, k)
                w = (spatial_vector(wrenches[min(k, len(wrenches) - 1)], f'wrenches[{k}]')
                     if wrenches else None)
                xf, xdf = with_passive(x, xd, P[k:k + 1], PD[k:k + 1])
                u, a = model.robot.hybrid_dynamics(xf, xdf, xdd, wrench=w)
                return x, xd, xdd, floats(u, 'effort'), floats(a, 'passive_accelerations')
            x, xd, xdd, u, a = self._at_point(k, one)
            U.append(u)
            XD.append(xd)
            A.extend(a)
            response.feedforward.points.append(JointTrajectoryPoint(
                positions=floats(x), velocities=floats(xd), accelerations=floats(xdd), effort=u,
                time_from_start=p.time_from_start))
        response.passive_names = list(model.passive)
        response.passive_accelerations = A
        return np.array(U), np.array(XD)

    @staticmethod
    def _report_limits(model, response, U, XD):
        """The actuators beyond their effort / velocity limits (``robot.limits``,
        core/limits.py) at the efforts ``U`` and actuator velocities ``XD`` (B, n) of an
        answer: named in its ``limit_*`` fields and appended to its message; the answer still
        succeeds."""
        found = model.robot.limits.violations(U, XD)
        response.limit_joints = [v.joint for v in found]
        response.limit_quantities = [v.quantity for v in found]
        response.limit_values = [v.value for v in found]
        response.limit_bounds = [v.bound for v in found]
        response.limit_points = [v.point for v in found]
        if found:
            response.message = '; '.join(m for m in (response.message, violations_message(found)) if m)

    @staticmethod
    def _hydraulic_points(model, response):
        """The cylinders' pressures, flows, spool and power at every point of the answered
        feedforward (steady state: no jerk in the request), and the valves' limits passed named
        in the message (robots without hydraulics: nothing)."""
        m = model.robot.hydraulic_model
        if not m.n:
            return
        X, XD, F = point_arrays(response.feedforward.points)
        h = hydraulic_state(m, X, XD, F, None, check=False)
        response.hydraulics = [hydraulic_message(h, k) for k in range(len(X))]
        response.message += hydraulic_note(h.violations)

    @staticmethod
    def _inverse_dynamics_at_once(model, trajectory, wrenches, out):
        """The whole trajectory in one batched core call where its states need no solving
        (``model.space.states_at_once``), filling ``out``; returns the efforts and actuator
        velocities (B, n) each; None where they need solving, or where the batch fails
        anywhere: the caller then goes point by point and names the first point that fails."""
        try:
            states = model.space.states_at_once(model, trajectory)
            if states is None:
                return None
            X, XD, XDD = states
            if len(wrenches) > 1:
                W = np.array([spatial_vector(w, f'wrenches[{k}]') for k, w in enumerate(wrenches)])
            else:
                W = spatial_vector(wrenches[0], 'wrenches[0]') if wrenches else None
            F = model.robot.inverse_dynamics(X, XD, XDD, wrench=W)
            check_finite(F, 'effort')
        except Exception:
            return None
        out.points = trajectory_points(X, XD, XDD, F, trajectory.points)
        return F, XD

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

    def _higher_order_inverse_dynamics(self, model, request, response):
        x, ders = model.space.higher_order_state(model, request)
        x, xd = self._with_passive(model, request, x, ders[0])     # the passive joints' state, if any
        ders = (xd,) + tuple(ders[1:])
        result = model.robot.higher_order_inverse_dynamics(x, *ders)
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
        if model.passive:               # their acceleration, jerk and snap (hybrid dynamics)
            pm = np.asarray(result.passive_motion)
            response.passive_names = list(model.passive)
            response.passive_accelerations, response.passive_jerks, response.passive_snaps = (
                floats(pm[k], f'passive_{f}') for k, f in ((2, 'accelerations'), (3, 'jerks'), (4, 'snaps')))
        self._report_limits(model, response, result.u, motion[1])
        m = model.robot.hydraulic_model
        if m.n:
            h = hydraulic_state(m, motion[0], motion[1], result.u, result.du, check=False)
            response.hydraulics = hydraulic_message(h)
            response.message = (response.message or 'ok') + hydraulic_note(h.violations)

    def _inverse_kinematics(self, model, request, response):
        pose = stamped_pose_matrix(request.pose, model.root_link)
        # PKM: the platform twist's task components; module chain: the whole end-effector twist
        ts = model.robot.twist_components
        twist = flagged_vector(request.has_twist, request.twist, ts, 'twist', 'rate 1')
        accel = flagged_vector(request.has_acceleration, request.acceleration, ts,
                               'acceleration', 'rate 2')
        if accel is not None and twist is None:
            raise RequestError(ErrorCodes.INVALID_REQUEST,
                               'an acceleration needs a twist (has_acceleration without '
                               'has_twist)')
        initial = self._ik_start(model, request.seed)
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
        response.limb_names = list(model.robot.limb_names)
        response.iterations = [int(i) for i in sol.iterations]
        response.condition = floats(sol.condition)
        if sol.solutions is not None and len(sol.solutions) > 1:
            response.message = (
                f'{len(sol.solutions)} solutions within the strokes; returned the one nearest '
                f'{"the seed" if initial is not None else "mid-stroke"}; the others '
                f'({list(model.actuated)}): {[floats(s) for s in sol.solutions[1:]]}')
        response.residual = float(sol.residual)

    @staticmethod
    def _ik_start(model, seed):
        """The IK start configuration (len(seed_joints),) of an InverseKinematics ``seed``, or
        None when it names no joint: the named joints at their values, every other one at the
        robot's default start (``seed_reference``: module chains mid-stroke, PKM the reference
        configuration). The seed takes the robot's ``seed_joints`` (module chains: the actuated
        joints; PKM: every tree joint); any other name is UNKNOWN_JOINT, naming it and listing
        those (a misspelt joint never passes silently). Positions beyond the position bound
        (``core.bounds.MAX_POSITION``) are INVALID_STATE."""
        if not seed.name:
            return None
        joints = list(model.robot.seed_joints)
        name_index(seed.name, list(seed.name), 'seed.name')      # names given twice
        unknown = [n for n in seed.name if n not in joints]
        if unknown:
            passive = [n for n in unknown if n in model.tree_joints]
            raise RequestError(ErrorCodes.UNKNOWN_JOINT, (
                f'seed.name: unknown joint(s) {unknown}'
                + (f' ({passive}: passive, and a module chain is seeded by its actuated '
                   'joints)' if passive else '')
                + f'; the seed takes {joints} (unnamed ones start where the IK starts without a '
                'seed: a module chain at mid-stroke, a PKM at the reference configuration)'))
        values = ordered(seed.position, list(range(len(seed.name))), len(seed.name),
                         'seed.position', bound='position')
        initial = np.array(model.robot.seed_reference, dtype=float)
        initial[[joints.index(n) for n in seed.name]] = values
        return initial

    def _forward_kinematics(self, model, request, response):
        js = request.actuator_state
        index = name_index(js.name, model.actuated, 'actuator_state.name')
        count = len(js.name)
        x = ordered(js.position, index, count, 'actuator_state.position')
        xd = (ordered(js.velocity, index, count, 'actuator_state.velocity') if len(js.velocity)
              else None)
        if model.passive or request.passive_names or request.passive_positions or request.passive_velocities:
            rates = xd is not None or len(request.passive_velocities)
            x, xd = self._with_passive(model, request, x, np.zeros_like(x) if xd is None else xd)
            xd = xd if rates else None
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
            response.twist = task_message(state.twist, model.robot.twist_components, Twist)
        response.joint_state.header = header
        response.joint_state.name = list(model.tree_joints)
        response.joint_state.position = floats(state.q)
        if state.qd is not None:
            response.joint_state.velocity = floats(state.qd)
        if state.mass_matrix is not None:     # PKM: M_t in task_space order
            response.task_space = list(model.task_space)
            response.mass_matrix = floats(state.mass_matrix)
