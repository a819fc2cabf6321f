"""Featherstone's hybrid dynamics of a chain of loops with passive joints, differentiated exactly:
its first derivatives (:func:`passive_derivatives`), its rate along a motion (:func:`hybrid_rate`,
the hydraulic feedforward's ``du``) and its higher-order inverse dynamics
(:func:`passive_higher_order_inverse_dynamics`).  numpy jets (:mod:`..spatial.taylor`) over the
generalized coordinates ``y`` (n: the actuators, then the passive joints), exact to round-off.

With ``f(y, yd, ydd)`` (n) the generalized forces of the chain (paper 001 eqs. 36-37 over every
coordinate, the joints' damping and friction included: :func:`.loop_chain_derivatives.direction_jets`
with the coordinate jet model :func:`coordinate_jet_model`) and ``M = df/dydd`` split into actuated
(a, n_act) and passive (p, n_pass) rows and columns:

* forward dynamics ``ydd = FD(y, yd, [u; 0])``: ``M dydd = [du; 0] - f_y dy - f_yd dyd``;
* hybrid dynamics ``(u, qdd_p)`` from ``f(y, yd, [xdd; qdd_p]) = [u; 0]``: by the implicit
  function theorem ``dqdd_p = -M_pp^-1 (f_p,y dy + f_p,yd dyd + M_pa dxdd)``,
  ``du = f_a,y dy + f_a,yd dyd + M_aa dxdd + M_ap dqdd_p``;
* higher orders: the ``t^k`` coefficient of ``f_p`` along a motion is affine in the passive
  coordinates' coefficient ``k + 2`` with slope ``(k + 1)(k + 2) M_pp(y_0)`` (Taylor-normalized
  coefficients; ``ydd``'s coefficient ``k`` is ``(k + 1)(k + 2) y_{k+2}``, and ``y_{k+2}`` enters no
  lower coefficient of ``f``), so ``f_p = 0`` is solved order by order, ``k = 0, 1, 2``.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..derivatives.derivatives import DynamicsDerivatives
from ..errors import StateError
from ..gravity import check_gravity
from ..friction.friction_model import friction_jet
from ..hoid import jet_dynamics as JD
from ..hoid.higher_order import HigherOrderResult
from ..hoid.sea import MOTOR_FIELDS, sea_feedforward
from ..spatial import taylor as T
from .loop_chain_derivatives import direction_jets, loop_chain_derivatives


def coordinate_jet_model(robot) -> JD.JetModel:
    """The robot's jet model (``robot.hoid_model.jets``) with its selection over every
    generalized coordinate (``robot.coordinate_index``: actuated, then passive joints)."""
    idx = np.asarray(robot.coordinate_index, dtype=int)
    S = np.zeros((len(idx), robot.tree.nq))
    S[np.arange(len(idx)), idx] = 1.0
    return replace(robot.hoid_model.jets, actuated=idx, S=S)


def coordinate_force_derivatives(robot, y, yd, ydd, wrench=None) -> tuple:
    """``(f_y, f_yd, M)`` (n, n) each: the derivatives of the generalized forces ``f(y, yd, ydd)``
    (every coordinate, one first-order jet per direction)."""
    jm = robot.coordinate_jets
    n = robot.n
    q0 = robot.tree_state(y)[0]
    z, eye = np.zeros(n), np.eye(n)
    cols = [[direction_jets(robot, q0, yd, ydd, wrench, *(eye[j] if i == which else z for i in range(3)), jm=jm)[1]
             for j in range(n)] for which in range(3)]
    return tuple(np.column_stack(c) for c in cols)


def _passive_one(robot, inverse: bool, x, xd, third, wrench) -> tuple:
    """One state's value and derivatives (docstring of the module): forward dynamics (``third`` =
    ``u``, n_act) or hybrid dynamics (``third`` = ``xdd``, n_act)."""
    a = robot.n_act
    if inverse:
        u, qdd_p = robot.hybrid_dynamics(x, xd, third, wrench)
        ydd = np.concatenate([np.asarray(third, dtype=float), qdd_p])
    else:
        ydd = robot.forward_dynamics(x, xd, third, wrench)
    f_y, f_yd, M = coordinate_force_derivatives(robot, np.asarray(x, dtype=float), np.asarray(xd, dtype=float),
                                                ydd, wrench)
    if not inverse:
        Minv = np.linalg.inv(M)
        return ydd, -Minv @ f_y, -Minv @ f_yd, Minv[:, :a]
    # dqdd_p = -M_pp^-1 (f_p,y dy + f_p,yd dyd + M_pa dxdd); du = f_a,. + M_ap dqdd_p
    K = M[:a, a:] @ np.linalg.inv(M[a:, a:])
    return u, f_y[:a] - K @ f_y[a:], f_yd[:a] - K @ f_yd[a:], M[:a, :a] - K @ M[a:, :a]


def passive_derivatives(robot, inverse: bool, x, xd, third, wrench=None) -> DynamicsDerivatives:
    """Forward dynamics (``inverse`` False: ``value = ydd`` (n), ``d_x``, ``d_xd`` (n, n), ``d_u`` (n,
    n_act), the effort ``[u; 0]`` with no effort at the passive joints) or Featherstone's hybrid
    dynamics (``inverse`` True: ``value = u`` (n_act), ``d_x``, ``d_xd`` (n_act, n) and ``d_u =
    du/dxdd`` (n_act, n_act), the passive accelerations following the state) of a robot with
    passive joints; batched over a leading axis."""
    return loop_chain_derivatives(robot, inverse, x, xd, third, wrench, one=_passive_one)


def _rate_one(robot, x, xd, xdd, xddd) -> tuple:
    a = robot.n_act
    u, qdd_p = robot.hybrid_dynamics(x, xd, xdd)
    ydd = np.concatenate([xdd, qdd_p])
    q0 = robot.tree_state(x)[0]
    df = direction_jets(robot, q0, xd, ydd, None, xd, ydd, np.concatenate([xddd, np.zeros(len(qdd_p))]),
                        jm=robot.coordinate_jets)[1]
    M = robot.compiled.mass_and_bias(x[None], xd[None], None)[0][0]
    jerk_p = -np.linalg.solve(M[a:, a:], df[a:])
    return u, df[:a] + M[:a, a:] @ jerk_p, jerk_p


def hybrid_rate(robot, x, xd, xdd, xddd) -> tuple:
    """``(u, du, qddd_p)``: the hybrid dynamics' efforts (n_act), their time derivative along the
    motion (the actuators' jerk ``xddd`` (n_act), the passive joints moving as the dynamics
    makes them) and the passive joints' jerks (n_pass), from one first-order jet of ``f`` along
    ``(yd, ydd, [xddd; 0])`` and the implicit-function correction by ``M_pp`` (module docstring):
    no ``xdddd`` enters ``du``.  ``x``, ``xd`` (..., n), ``xdd``, ``xddd`` (..., n_act)."""
    x = robot.checked_state("x", x, limits=True)
    xd = robot.checked_state("xd", xd, x.shape[:-1])
    xdd = robot.checked_state("xdd", xdd, x.shape[:-1], size=robot.n_act)
    xddd = robot.checked_state("xddd", xddd, x.shape[:-1], size=robot.n_act)
    if x.ndim == 1:
        return _rate_one(robot, x, xd, xdd, xddd)
    return tuple(np.stack(r) for r in zip(*(_rate_one(robot, *row) for row in zip(x, xd, xdd, xddd))))


def coordinate_force_jet(jm: JD.JetModel, yj: np.ndarray, q0: np.ndarray, gravity) -> tuple:
    """The jet (K-1, n) of the generalized forces ``f = Z^T (tau + tau_f)``
    (:func:`~..hoid.jet_dynamics.actuator_force_jet` over every coordinate, the joints' friction
    ``tau_f`` of :func:`~..friction.friction_model.friction_jet` inside) along the coordinate jet
    ``yj`` (K+1, n) (K >= 2: ``f``'s coefficient k needs ``y``'s up to k + 2), and the tree jet
    (K+1, nq)."""
    D1 = yj.shape[0] - 2
    qj = JD.tree_motion_jet(jm, q0, yj)
    f = JD.actuator_force_jet(jm, qj, gravity, degree=D1 - 1)
    if jm.desc.friction is not None:
        tau = friction_jet(jm.desc.friction.table, T.deriv(qj)[:max(D1, 2)])[:D1]
        _, C = JD.pose_jets(jm.desc.tree, qj[:D1])
        Zt = np.swapaxes(JD.motion_basis_jet(jm, C, D1), -1, -2)
        f = f + T.matmul(Zt, tau[..., None])[..., 0]
    return f, qj


def _hoid_one(robot, x, xd, xdd, xddd, xdddd, gravity, q_guess) -> tuple:
    """One sample: the coordinate jet (5, n) with the passive coefficients 2..4 solved order by
    order (module docstring; order k from the jet truncated to degree k + 2: ``f``'s coefficient k
    does not depend on the higher ones), ``U`` (3, n_act) and the tree motion (5, nq)."""
    jm, a = robot.coordinate_jets, robot.n_act
    q0 = robot.tree_state(x)[0] if q_guess is None else JD.close_loops(jm, x, q_guess)
    M = robot.compiled.mass_and_bias(x[None], xd[None], None)[0][0]
    Mpp = M[a:, a:]
    yj = np.zeros((5, robot.n))
    yj[0], yj[1] = x, xd
    yj[2:, :a] = T.from_derivatives([x[:a], xd[:a], xdd, xddd, xdddd])[2:]
    for k in range(3):
        f, _ = coordinate_force_jet(jm, yj[:k + 3], q0, gravity)
        yj[k + 2, a:] = -np.linalg.solve(Mpp, f[k, a:]) / ((k + 1) * (k + 2))
    f, qj = coordinate_force_jet(jm, yj, q0, gravity)
    return T.to_derivatives(f[:, :a]), T.to_derivatives(qj), T.to_derivatives(yj)[:, a:]


def passive_higher_order_inverse_dynamics(robot, x, xd, xdd, xddd, xdddd, gravity=None,
                                          q_guess=None) -> HigherOrderResult:
    """The higher-order inverse dynamics of a chain of loops with passive joints (Taylor route):
    ``x``, ``xd`` (n: actuators, then passive joints), ``xdd``, ``xddd``, ``xdddd`` (n_act), each
    one sample or a batch (leading axis).  The passive joints' accelerations, jerks and snaps
    follow from the hybrid dynamics order by order (module docstring).  Result: ``u, du, ddu``
    (n_act), ``tree_motion`` (5, nq), ``actuator_motion`` (5, n_act) and ``passive_motion`` (5,
    n_pass): the passive joints' position, rate, acceleration, jerk and snap; with series-elastic
    actuators the motor feedforward (eqs. 1-2 of paper 002).  A rate beyond its bound
    (:mod:`..bounds`) is refused naming it (:meth:`~.loop_chain_robot.LoopChainRobot.checked_state`)."""
    x = robot.checked_state("x", x, limits=True)
    b = x.shape[:-1]
    xd = robot.checked_state("xd", xd, b)
    ders = [robot.checked_state(nm, v, b, size=robot.n_act) for nm, v in
            (("xdd", xdd), ("xddd", xddd), ("xdddd", xdddd))]
    g = None if gravity is None else check_gravity(gravity)
    if x.ndim == 1:
        U, Q, P = _hoid_one(robot, x, xd, *ders, g, q_guess)
    else:
        rows, guess = [], q_guess
        for r in zip(x, xd, *ders):
            rows.append(_hoid_one(robot, *r, g, guess))
            guess = None if q_guess is None else rows[-1][1][0]
        U, Q, P = (np.stack(c) for c in zip(*rows))
    if not (np.isfinite(U).all() and np.isfinite(P).all()):
        raise StateError("the higher-order inverse dynamics is not finite at this state (near a singularity)")
    Am = Q.take(robot.actuated, axis=-1)
    res = HigherOrderResult(U[..., 0, :], U[..., 1, :], U[..., 2, :], Q, Am, "taylor", passive_motion=P)
    m = robot.hoid_model
    if m.has_sea:
        ff = sea_feedforward(Am[..., 0, :], Am[..., 1, :], Am[..., 2, :], res.u, res.du, res.ddu, m.K, m.Mm)
        res.motor_position, res.motor_velocity, res.motor_acceleration, res.motor_torque = \
            (ff[k] for k in MOTOR_FIELDS)
    return res
