"""The ``~/estimate_payload`` service: the payload at the end effector / platform estimated from a
window of measured motion and efforts in the request (the core's
:func:`~pkm_dynamics.core.identification.estimate_payload`, the payload the model carries taken
out first), answered with its uncertainty and, on request, applied as the run-time payload
through the node's ``payload.*`` parameters (one atomic change: the model is rebuilt carrying
it, as a ``ros2 param set`` would).  Nothing is applied unless the estimate succeeded.

:class:`PayloadEstimation` is a part of :class:`~pkm_dynamics.node.dynamics_node.DynamicsNode` (a
mixin: it uses the node's model and parameters); the handler runs inside ``Services._serve``,
which turns a failure into ``success = false`` naming why."""
import numpy as np
from pkm_dynamics_interfaces.msg import ErrorCodes
from pkm_dynamics_interfaces.srv import EstimatePayload
from rclpy.parameter import Parameter

from pkm_dynamics.core.identification import estimate_payload
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


class PayloadEstimation:
    """The ``~/estimate_payload`` handler (part of the node class)."""

    def _estimate_payload(self, model, request, response):
        trajectory = model.space.trajectory(model, request)
        points = trajectory.points
        if not points:
            raise RequestError(ErrorCodes.INVALID_REQUEST, 'the window has no points')
        check_points(len(points))
        if request.inertia not in INERTIA_CHOICES:
            raise RequestError(ErrorCodes.INVALID_REQUEST, f'inertia {request.inertia} is not one of '
                               'INERTIA_AUTO (0), INERTIA_ESTIMATE (1), INERTIA_POINT_MASS (2)')
        read = model.space.point_reader(model, trajectory)
        X, XD, XDD = (np.array(a) for a in zip(*(read(p, k) for k, p in enumerate(points))))
        U, sigma = measured_efforts(model, request, len(points))
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
                            + f', {est.samples} points')
        if request.apply:
            result = self.set_parameters_atomically([
                Parameter('payload.mass', value=float(load.mass)),
                Parameter('payload.com', value=floats(load.com)),
                Parameter('payload.inertia', value=list(response.inertia))])
            if not result.successful:
                raise RequestError(ErrorCodes.INVALID_STATE, f'{response.message}; not applied: {result.reason}')
            response.applied = True
            response.message += '; applied as the run-time payload'
