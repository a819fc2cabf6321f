"""The hydraulic answers of the node (issue 27 item 6): the core's
:class:`~pkm_dynamics.core.hydraulics.valve_cylinder.HydraulicState` as ``HydraulicState``
messages of the InverseDynamics / HigherOrderInverseDynamics responses, and the note naming
what the valves cannot deliver (the answer still succeeds)."""
import numpy as np
from pkm_dynamics_interfaces.msg import HydraulicState

from pkm_dynamics.node.messages.conversions import floats

#: the fields of the message, as the core's result names them
FIELDS = ('pressure_a', 'pressure_b', 'flow_a', 'flow_b', 'spool', 'hydraulic_power')


def hydraulic_message(h, row=None):
    """``HydraulicState`` of the core's result ``h`` (its sample ``row`` of a batch; None: one
    sample); every value checked finite (NON_FINITE naming the field)."""
    out = HydraulicState(name=list(h.joints))
    for name in FIELDS:
        values = getattr(h, name)
        setattr(out, name, floats(values if row is None else values[row], f'hydraulics.{name}'))
    return out


def hydraulic_note(violations, limit=8):
    """The message part naming the valves' limits passed: per cylinder and quantity the worst
    value (farthest beyond its limit) with its point; '' when none."""
    worst = {}
    for v in violations:
        key = (v.joint, v.quantity)
        if key not in worst or abs(v.value - v.limit) > abs(worst[key].value - worst[key].limit):
            worst[key] = v
    if not worst:
        return ''
    parts = [str(v) for v in list(worst.values())[:limit]]
    more = len(worst) - limit
    return '; beyond the valves: ' + '; '.join(parts) + (f'; {more} more' if more > 0 else '')


def point_arrays(points):
    """Positions, velocities, efforts (B, n) of JointTrajectoryPoints (empty velocities: 0)."""
    X = np.array([p.positions for p in points], dtype=float)
    XD = np.array([p.velocities if len(p.velocities) else np.zeros(len(p.positions)) for p in points],
                  dtype=float)
    F = np.array([p.effort for p in points], dtype=float)
    return X, XD, F
