"""The hydraulic feedforward of a robot: ``robot.hydraulics(x, xd, xdd, xddd=None)`` for every
robot kind (its state space: actuator for module chains, task for parallel robots).

The cylinder force ``F`` is the actuator force of the robot's inverse dynamics (friction
included where the model has it); with the third derivative ``xddd`` its rate ``dF/dt`` is the
higher-order inverse dynamics' ``du`` (paper 002; computed as :func:`force_rate`), which
feeds the compressibility term of :mod:`.valve_cylinder` (H2), (H4); without it that term is
left out.  The cylinders' positions and rates are the actuators' (a parallel robot's from its
inverse kinematics)."""
from __future__ import annotations

import numpy as np

from .hydraulic_trajectory import pressure_trajectory
from .valve_cylinder import HydraulicState, hydraulic_state


def robot_hydraulics(robot, x, xd, xdd, xddd=None, check: bool = True, times=None) -> HydraulicState:
    """:class:`~.valve_cylinder.HydraulicState` of the robot's cylinders (order
    ``robot.hydraulic_model.joints``; none: empty arrays) for the motion ``(x, xd, xdd)`` and,
    where given, its third derivative ``xddd`` (shapes of the robot's state space, batched with a
    leading axis).  ``check``: raise
    :class:`~.valve_cylinder.HydraulicLimitError` naming the cylinder, quantity and limit of a
    motion the valves cannot deliver (else they are listed in ``violations``).  ``times`` (B,)
    of a batch (a sampled trajectory): the chamber pressures carried along it as a state
    (:func:`~.hydraulic_trajectory.pressure_trajectory`, what the valves do at a reversal of the
    motion) instead of each sample's steady-state level."""
    m = robot.hydraulic_model
    u, du = force_rate(robot, x, xd, xdd, xddd)
    motion = robot.joint_motion(x, xd)
    na = len(robot.actuated_joints)                # a state with passive joints: its actuators
    xa, xda = motion.actuators[..., :na], motion.actuators_d[..., :na]
    if times is not None:
        return pressure_trajectory(m, times, xa, xda, u, du, check=check)
    return hydraulic_state(m, xa, xda, u, du, check)


def force_rate(robot, x, xd, xdd, xddd=None, exact: bool = True) -> tuple:
    """``(u, du)``: the actuator forces of the inverse dynamics and, with ``xddd``, their time
    derivative by the chain rule on its exact first derivatives (compiled for a module chain)::

        du/dt = dID/dx xd + dID/dxd xdd + dID/dxdd xddd

    (a parallel robot's ``dID/dx`` is along ``pose exp(P_p delta)``, so ``xd = V_t`` is its
    rate): the higher-order inverse dynamics' ``du`` (paper 002; equal to round-off, test
    ``test_force_rate_is_the_hoid_du``) at the cost of one derivative call (a module chain's
    HOID runs the numpy Taylor route).  A robot with passive joints (``robot.passive_joints``)
    answers itself (``robot.force_rate``: Featherstone's hybrid dynamics differentiated along the
    motion, the passive joints moving as it makes them, exact).  ``exact`` False (the node's
    stream): a robot in actuator space whose derivatives are not compiled
    (``robot.compiled_derivatives`` False: a chain of loops, numpy jets of tens to hundreds of ms)
    takes :func:`difference_force_rate` instead (two more compiled calls; a parallel robot's
    rate stays exact: the difference is taken along actuator coordinates).  ``du`` None without ``xddd``."""
    if xddd is None:
        return robot.inverse_dynamics(x, xd, xdd), None
    if not exact and robot.state_space == "actuator" and not robot.compiled_derivatives:
        return difference_force_rate(robot, x, xd, xdd, xddd)
    if robot.passive_joints:            # the hybrid dynamics' rate (exact: the robot's force_rate)
        return robot.force_rate(x, xd, xdd, xddd)
    d = robot.inverse_dynamics_derivatives(x, xd, xdd)
    rate = (d.d_x @ np.asarray(xd, dtype=float)[..., None] + d.d_xd @ np.asarray(xdd, dtype=float)[..., None]
            + d.d_u @ np.asarray(xddd, dtype=float)[..., None])
    return d.value, rate[..., 0]


#: step [s] of the central difference of :func:`difference_force_rate` (truncation ~ step^2 / 6
#: times the third time derivative of ``u``; round-off ~ 1e-16 |u| / step)
RATE_STEP = 1e-5


def difference_force_rate(robot, x, xd, xdd, xddd) -> tuple:
    """``(u, du)`` of a chain of loops' inverse dynamics by a central difference
    (:data:`RATE_STEP`) along the motion ``x + t xd``, ``xd + t xdd``, ``xdd + t xddd``: the fast
    approximation of the exact rate for the node's stream (1e-6 of it, tests
    ``test_core_passive_hoid.py``, ``test_core_excavator.py``).  With passive joints the hybrid
    dynamics' (``robot.hybrid_dynamics``), the passive joints moving as it makes them (their rates
    and accelerations; no passive jerk enters): ``x``, ``xd`` (..., n: actuators then passive
    joints), ``xdd``, ``xddd`` (..., n_act)."""
    x, xd, xdd, xddd = (np.asarray(v, dtype=float) for v in (x, xd, xdd, xddd))
    h = RATE_STEP
    if robot.passive_joints:
        u, passive = robot.hybrid_dynamics(x, xd, xdd)
        accel = np.concatenate([xdd, passive], axis=-1)

        def efforts(*state):
            return robot.hybrid_dynamics(*state)[0]
    else:
        u, accel = robot.inverse_dynamics(x, xd, xdd), xdd
        efforts = robot.inverse_dynamics
    up = efforts(x + h * xd, xd + h * accel, xdd + h * xddd)
    um = efforts(x - h * xd, xd - h * accel, xdd - h * xddd)
    return u, (up - um) / (2 * h)


def cylinder_limits(limits, model):
    """The actuator limits table ``limits`` (:class:`~pkm_dynamics.core.limits.ActuatorLimits`)
    tightened by each cylinder of ``model`` (:class:`~.valve_cylinder.HydraulicModel`) where that
    is tighter than its URDF limits (:meth:`~pkm_dynamics.core.limits.ActuatorLimits.with_bounds`):

    * force: the stall force at full supply, ``max(A_A p_s - A_B p_t, A_B p_s - A_A p_t)`` (push
      or pull, whichever is larger: the table is symmetric; a pull beyond ``A_B p_s - A_A p_t``
      is named by the valve model's pressure check, :mod:`.valve_cylinder`);
    * velocity: the no-load rate at full spool opening of the orifice model (H1-H3: ``A_A v =
      K s sqrt(p_s - p_A)``, ``A_B v = K s sqrt(p_B - p_t)``, ``A_A p_A = A_B p_B``), ``v =
      K s_max sqrt((A_A p_s - A_B p_t) / (A_A^3 + A_B^3))`` extending (A and B swapped
      retracting), the faster direction."""
    for k, joint in enumerate(model.joints):
        a, b = model.area_a[k], model.area_b[k]
        push, pull = a * model.p_s - b * model.p_t, b * model.p_s - a * model.p_t
        rate = model.K[k] * model.spool_limit[k] * np.sqrt(max(push, pull) / (a**3 + b**3))
        limits = limits.with_bounds(joint, max(push, pull), rate, "supply pressure x area; valve flow / area")
    return limits
