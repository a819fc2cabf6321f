"""The measured state of a robot's passive joints (``robot.passive_joints``: joints that move
freely, outside every loop, such as a grapple's swing axes) in messages: the dynamics services'
``passive_names`` / ``passive_positions`` / ``passive_velocities`` fields and the joint-state
completion's input (the measured joint states).  The core takes them after the actuators in
``x`` and ``xd`` (:class:`~pkm_dynamics.core.loop_chain.loop_chain_robot.LoopChainRobot`).

Every refusal names the joint: a passive joint without a state (missing) is INVALID_STATE, a
NaN or Inf value NON_FINITE, a name that is no passive joint UNKNOWN_JOINT."""
import numpy as np
from pkm_dynamics_interfaces.msg import ErrorCodes

from pkm_dynamics.node.messages.conversions import BOUNDS, RequestError


def passive_states(model, names, positions, velocities, points=1, what='', extra=False):
    """``(P, PD)`` (points, n_pass) each, in ``robot.passive_joints`` order, of the passive joints'
    state given by ``names`` (any order) and ``positions`` / ``velocities`` (``len(names)``
    values per point, point after point; velocities empty: zero).  ``what``: the prefix of the
    fields in a message; ``extra``: names that are no passive joint are ignored (the completion's
    input holds the actuators too) instead of refused.  A robot without passive joints gives
    (points, 0) arrays and refuses a passive state given to it."""
    passive = model.passive
    names = list(names)
    if not passive:
        if (names and not extra) or len(positions) or len(velocities):
            raise RequestError(ErrorCodes.INVALID_REQUEST,
                               f'robot "{model.name}" has no passive joints: leave {what}passive_names, '
                               f'{what}passive_positions and {what}passive_velocities empty')
        return np.zeros((points, 0)), np.zeros((points, 0))
    seen = set()
    for name in names:
        if name in seen:
            raise RequestError(ErrorCodes.INVALID_REQUEST, f'{what}passive_names: joint "{name}" is given twice')
        seen.add(name)
    unknown = [name for name in names if name not in passive]
    if unknown and not extra:
        raise RequestError(ErrorCodes.UNKNOWN_JOINT,
                           f'{what}passive_names: {unknown} are not passive joints of robot "{model.name}"; '
                           f'its passive joints are {list(passive)}')
    missing = [name for name in passive if name not in seen]
    if missing:
        raise RequestError(ErrorCodes.INVALID_STATE,
                           f'no measured state of passive joint "{missing[0]}" (robot "{model.name}" needs '
                           f'the positions and velocities of its passive joints {list(passive)})')
    index = [names.index(name) for name in passive]
    out = []
    for field, values, rate in (('positions', positions, None), ('velocities', velocities, 'rate 1')):
        a = np.asarray(values, dtype=float)
        if rate is not None and a.size == 0:
            out.append(np.zeros((points, len(passive))))
            continue
        if a.size != points * len(names):
            raise RequestError(ErrorCodes.INVALID_SIZE,
                               f'{what}passive_{field} has {a.size} values: give one per passive name '
                               f'({len(names)})' + (f' for each of the {points} points' if points > 1 else ''))
        a = a.reshape(points, len(names))[:, index]
        bad = np.argwhere(~np.isfinite(a))
        if len(bad):
            k, j = bad[0]
            raise RequestError(ErrorCodes.NON_FINITE,
                               f'{what}passive_{field}: passive joint "{passive[j]}" has {a[k, j]}'
                               + (f' at point {k}' if points > 1 else ''))
        if rate is not None:
            BOUNDS[rate](a, f'{what}passive_{field}')
        out.append(a)
    return out[0], out[1]


def with_passive(x, xd, P, PD):
    """The core's state: the actuators' ``x``, ``xd`` (..., n_act) followed by the passive joints'
    ``P``, ``PD`` ((points, n_pass); one point for a single state)."""
    if P.shape[-1] == 0:
        return x, xd
    if np.ndim(x) == 1:
        return np.concatenate([x, P[0]]), np.concatenate([xd, PD[0]])
    return np.concatenate([x, np.broadcast_to(P, (len(x), P.shape[-1]))], axis=-1), \
        np.concatenate([xd, np.broadcast_to(PD, (len(x), PD.shape[-1]))], axis=-1)


def measured_passive(model, x, xd, topic):
    """The feedforward's state: ``x``, ``xd`` (B, n_act) followed by the passive joints' last
    measured state (``model.passive_state``, from the joint-state completion's input) at every
    point; unchanged without passive joints.  INVALID_STATE naming the first passive joint when
    none was measured yet (``topic()``: the input's topic, for the message)."""
    if not model.passive:
        return x, xd
    if model.passive_state is None:
        raise RequestError(ErrorCodes.INVALID_STATE,
                           f'no measured state of passive joint "{model.passive[0]}" yet: the feedforward of '
                           f'robot "{model.name}" takes its passive joints {list(model.passive)} from the '
                           f'measured joint states on {topic()} (completion.enabled)')
    return with_passive(x, xd, *model.passive_state)
