"""The ``~/estimate_payload`` service: the payload at the end effector / platform estimated from a
window of measured motion and efforts in the request (the core's
:func:`~pkm_dynamics.core.identification.estimate_payload`, the payload the model carries taken
out first), answered with its uncertainty and, on request, applied as the run-time payload
through the node's ``payload.*`` parameters (one atomic change: the model is rebuilt carrying
it, as a ``ros2 param set`` would).  Nothing is applied unless the estimate succeeded.

With ``last_seconds`` > 0 the window is instead the last seconds of the measured actuator
states the node keeps (:mod:`~pkm_dynamics.node.joint_state_buffer`, filled from the
``actuator_states`` subscription): their stamps, positions, velocities and efforts made a
uniform motion with the accelerations by a Savitzky-Golay derivative of the velocities
(:func:`~pkm_dynamics.core.identification.sampled_motion`), thinned to at most ``MAX_POINTS``
samples (the bound of one request's work); a parallel robot's task states are its forward
kinematics and task twists (eq. 30) of the actuator states, the task accelerations their
derivative the same way.  Refused naming why: a window with fewer than ``MIN_SAMPLES`` states,
an effort that is not finite (joint and stamp), more seconds than the node keeps.

:class:`PayloadEstimation` is a part of :class:`~pkm_dynamics.node.dynamics_node.DynamicsNode` (a
mixin: it uses the node's model and parameters); the handler runs inside ``Services._serve``,
which turns a failure into ``success = false`` naming why."""
import numpy as np
from pkm_dynamics_interfaces.msg import ErrorCodes
from pkm_dynamics_interfaces.srv import EstimatePayload
from rclpy.parameter import Parameter

from pkm_dynamics.core.bounds import MAX_POINTS
from pkm_dynamics.core.forward_state import task_twist
from pkm_dynamics.core.identification import estimate_payload, sampled_motion
from pkm_dynamics.core.identification.payload_estimation import MIN_SAMPLES
from pkm_dynamics.core.identification.sampled_motion import savgol_rate
from pkm_dynamics.node.joint_state_buffer import JointStateBuffer
from pkm_dynamics.node.messages.conversions import RequestError, check_points, floats, name_index, ordered

#: the request's ``inertia`` -> the core's ``inertia`` argument
INERTIA_CHOICES = {EstimatePayload.Request.INERTIA_AUTO: 'auto', EstimatePayload.Request.INERTIA_ESTIMATE: True,
                   EstimatePayload.Request.INERTIA_POINT_MASS: False}


def measured_efforts(model, request, count):
    """The measured efforts (count, n_act) in actuator order and the effort noise (n_act,) or
    None, from ``measured_efforts`` or else the module chain's ``trajectory.points[k].effort``."""
    source = request.measured_efforts
    field = 'measured_efforts'
    if not source.points:
        source, field = request.trajectory, 'trajectory'
        if not any(len(p.effort) for p in source.points):
            raise RequestError(ErrorCodes.INVALID_REQUEST, 'no measured efforts: give measured_efforts '
                               '(or, for a module chain, trajectory.points[k].effort)')
    if len(source.points) != count:
        raise RequestError(ErrorCodes.INVALID_SIZE, f'{field} has {len(source.points)} points for '
                           f'{count} window points: give one per point')
    index = name_index(source.joint_names, model.actuated, f'{field}.joint_names')
    n = len(source.joint_names)
    U = np.array([ordered(p.effort, index, n, f'{field}.points[{k}].effort', bound='effort')
                  for k, p in enumerate(source.points)])
    sigma = None
    if len(request.effort_std):
        sigma = ordered(request.effort_std, index, n, 'effort_std', bound='effort')
        if not (sigma > 0).all():
            raise RequestError(ErrorCodes.INVALID_STATE, f'effort_std must be positive, got {floats(sigma)}')
    return U, sigma


def task_states(robot, t, x, xd):
    """A parallel robot's platform poses (N, 4, 4), task twists and their rates (N, delta_p) of
    the actuator states ``x``, ``xd`` (N, n_act) sampled every ``t[1] - t[0]``: the forward
    kinematics (each sample from the previous one's solution), eq. 30, and the twists'
    Savitzky-Golay derivative."""
    poses, twists, sol = [], [], None
    for xi, xdi in zip(x, xd):
        pose, sol = robot.forward_kinematics(xi, initial=sol, return_solution=True)
        poses.append(pose)
        twists.append(task_twist(sol.J_IK, xdi))
    twists = np.array(twists)
    return np.array(poses), twists, savgol_rate(twists, float(t[1] - t[0]))


def effort_noise(model, request):
    """``effort_std`` (n_act,) in actuator order for a ``last_seconds`` window, or None."""
    if not len(request.effort_std):
        return None
    sigma = ordered(request.effort_std, list(range(len(model.actuated))), len(model.actuated),
                    'effort_std (order of the actuated joints)', bound='effort')
    if not (sigma > 0).all():
        raise RequestError(ErrorCodes.INVALID_STATE, f'effort_std must be positive, got {floats(sigma)}')
    return sigma


class PayloadEstimation:
    """The ``~/estimate_payload`` handler and the buffer of measured states (part of the node
    class)."""

    def _record_state(self, model, msg):
        """One measured actuator state (JointState) into the buffer (stamp: its header's, else
        the node clock's): positions required, velocities and efforts NaN where not given."""
        buffer = self._state_buffer
        if buffer is None or buffer.joints != model.actuated:
            seconds = self._p('payload_estimation.buffer_seconds')
            if not seconds:
                return
            buffer = self._state_buffer = JointStateBuffer(model.actuated, seconds)
        index = name_index(msg.name, model.actuated, 'name', allow_extra=True)
        n = len(msg.name)
        x = ordered(msg.position, index, n, 'position')
        rows = [np.asarray(v, dtype=float)[index] if len(v) == n else np.full(len(index), np.nan)
                for v in (msg.velocity, msg.effort)]
        stamp = msg.header.stamp
        if stamp.sec == 0 and stamp.nanosec == 0:
            stamp = self.get_clock().now().to_msg()
        buffer.record(stamp.sec + 1e-9 * stamp.nanosec, x, *rows)

    def _buffered_window(self, model, request):
        """``(X, XD, XDD, U, note)`` of the last ``request.last_seconds`` of measured states
        (module docstring)."""
        seconds = request.last_seconds
        topic = self._topic('completion_input')
        if not seconds > 0 or not np.isfinite(seconds):
            raise RequestError(ErrorCodes.INVALID_REQUEST, f'last_seconds {seconds} is not a positive time')
        if request.trajectory.points or request.task_trajectory.points or request.measured_efforts.points:
            raise RequestError(ErrorCodes.INVALID_REQUEST, 'give either a window (trajectory / task_trajectory, '
                               'measured_efforts) or last_seconds, not both')
        kept = self._p('payload_estimation.buffer_seconds')
        if seconds > kept:
            raise RequestError(ErrorCodes.INVALID_REQUEST, f'last_seconds {seconds:g} is more than the {kept:g} s '
                               'of measured states the node keeps (parameter payload_estimation.buffer_seconds)')
        buffer = self._state_buffer
        if buffer is None or buffer.joints != model.actuated:
            raise RequestError(ErrorCodes.INVALID_STATE, f'no measured actuator states of "{model.name}" '
                               f'received on {topic} yet')
        t, x, xd, u, _ = buffer.window(seconds)
        if len(t) < MIN_SAMPLES:
            raise RequestError(ErrorCodes.INVALID_STATE, f'the last {seconds:g} s hold {len(t)} measured states '
                               f'(on {topic}): at least {MIN_SAMPLES} are needed')
        bad = np.argwhere(~np.isfinite(u))
        if len(bad):
            k, j = bad[0]
            raise RequestError(ErrorCodes.NON_FINITE, f'the effort of joint "{model.actuated[j]}" at '
                               f'{t[k]:.6f} s (on {topic}) is {u[k, j]}: efforts must be measured and finite')
        rates = bool(np.isfinite(xd).all())
        t, X, XD, XDD, U = sampled_motion(t, x, xd if rates else None, u)
        step = -(-len(t) // MAX_POINTS)
        note = (f'last {seconds:g} s of {topic}: {len(t)} states over {t[-1] - t[0]:.3g} s'
                + ('' if rates else ', velocities from the positions') + (f', one in {step} used' if step > 1 else ''))
        t, X, XD, XDD, U = (a[::step] for a in (t, X, XD, XDD, U))
        if model.robot.state_space == 'task':
            X, XD, XDD = task_states(model.robot, t, X, XD)
        return X, XD, XDD, U, note

    def _estimate_payload(self, model, request, response):
        if request.inertia not in INERTIA_CHOICES:
            raise RequestError(ErrorCodes.INVALID_REQUEST, f'inertia {request.inertia} is not one of '
                               'INERTIA_AUTO (0), INERTIA_ESTIMATE (1), INERTIA_POINT_MASS (2)')
        if request.last_seconds != 0.0:
            X, XD, XDD, U, note = self._buffered_window(model, request)
            sigma = effort_noise(model, request)
        else:
            trajectory = model.space.trajectory(model, request)
            points = trajectory.points
            if not points:
                raise RequestError(ErrorCodes.INVALID_REQUEST, 'the window has no points')
            check_points(len(points))
            read = model.space.point_reader(model, trajectory)
            X, XD, XDD = (np.array(a) for a in zip(*(read(p, k) for k, p in enumerate(points))))
            U, sigma = measured_efforts(model, request, len(points))
            note = f'{len(points)} points'
        est = estimate_payload(model.robot, X, XD, XDD, U, sigma=sigma, inertia=INERTIA_CHOICES[request.inertia],
                               carried=model.payload)
        load = est.payload
        response.payload_link = est.link
        response.mass, response.mass_std = float(load.mass), float(est.mass_std)
        response.com = floats(load.com)
        response.com_std = [float(v) if np.isfinite(v) else -1.0 for v in est.com_std]   # -1: not sensed
        response.inertia_estimated = bool(est.inertia)
        response.inertia = floats(load.inertia[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]])
        response.samples = int(est.samples)
        response.residual_rms = floats(est.residual_rms)
        com, com_std = (', '.join(f'{c:.4g}' for c in v) for v in (load.com, est.com_std))
        response.message = (f'payload {load.mass:.6g} +- {est.mass_std:.2g} kg at [{com}] +- [{com_std}] m in '
                            f'{est.link}, ' + ('inertia estimated' if est.inertia else 'point mass')
                            + f', {est.samples} samples ({note})')
        if request.apply:
            result = self.set_parameters_atomically([
                Parameter('payload.mass', value=float(load.mass)),
                Parameter('payload.com', value=floats(load.com)),
                Parameter('payload.inertia', value=list(response.inertia))])
            if not result.successful:
                raise RequestError(ErrorCodes.INVALID_STATE, f'{response.message}; not applied: {result.reason}')
            response.applied = True
            response.message += '; applied as the run-time payload'
