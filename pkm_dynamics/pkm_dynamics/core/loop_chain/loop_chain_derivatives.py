"""First derivatives of a chain of loops' actuator-space dynamics by forward-mode
differentiation: first-order jets (dual numbers, :mod:`..spatial.taylor`) through the loop
closure and the tree dynamics of the general route (:mod:`..hoid.jet_dynamics`), one direction
at a time, as :mod:`..derivatives.pkm_derivatives` does in task space.  Exact to round-off.

For a direction ``(w, v, a)`` of ``(x, xd, xdd)`` the tree motion is a jet in ``s``:

1. ``q(s)``: the closed configuration along ``x + s w`` (:func:`~..hoid.jet_dynamics.tree_motion_jet`);
2. ``K(q) = [G(q); S]`` (loop-constraint Jacobian, eq. 13 of paper 001, over the actuator
   selection); ``qd(s)`` from ``K qd = [0; xd + s v]``;
3. ``qdd(s)`` from ``K qdd = [0; xdd + s a] - [(DG[qd]) qd; 0]``, the velocity-product term's
   jet from :func:`..derivatives.jet_bias.velocity_product_jet` (as in task space);
4. ``N(s)`` from ``K N = [0; I]`` (= ``H``, eq. 20: tree rates per unit actuator rate) and the
   actuator efforts ``u(s) = N^T (rnea(q, qd, qdd) + tau_f(qd) - J_E^T W_E)`` (eqs. 36-37;
   ``tau_f`` the joints' friction torques, :func:`..derivatives.jet_bias.with_friction_jet`,
   exact for the smooth law; ``J_E`` the end-effector Jacobian, ``W_E`` the wrench on it).

Inverse dynamics: ``u`` and its ``s``-derivatives; forward dynamics at ``xdd = FD(x, xd, u)``:
``M dxdd = du - u_x dx - u_xd dxd`` with ``M = du/dxdd``.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ..derivatives.derivatives import DynamicsDerivatives
from ..derivatives.jet_bias import velocity_product_jet, with_friction_jet
from ..errors import StateError
from ..hoid.jet_dynamics import _jacobian_jet, constraint_jacobian_jet, pose_jets, rnea_jet, tree_motion_jet
from ..spatial import taylor as T


def actuator_jacobian_jet(jm, qj) -> np.ndarray:
    """Jet (K+1, m + na, n) of ``K(q) = [G(q); S]`` along the tree jet ``qj``."""
    tree = jm.desc.tree
    K1 = qj.shape[0]
    _, C = pose_jets(tree, qj)
    S = np.zeros((K1,) + jm.S.shape)
    S[0] = jm.S
    rows = [constraint_jacobian_jet(tree, geo, C, K1) for geo in jm.constraints.geometry]
    return np.concatenate(rows + [S], axis=1)


def direction_jets(robot, q0, xd, xdd, wrench, w, v, a, jm=None) -> np.ndarray:
    """The jet (2, na) of the actuator efforts along the direction ``(w, v, a)`` of
    ``(x, xd, xdd)`` (steps 1-4 of the module docstring); ``wrench`` (6,) or None.  ``jm``: the
    jet model whose selection ``S`` names the coordinates (default ``robot.hoid_model.jets``, the
    actuators; with passive joints :func:`.loop_chain_passive.coordinate_jet_model`)."""
    jm = robot.hoid_model.jets if jm is None else jm
    tree = jm.desc.tree
    n, na = tree.nq, len(jm.actuated)
    if np.any(w):
        q = tree_motion_jet(jm, q0, np.stack([q0[jm.actuated], np.asarray(w, dtype=float)]))
    else:
        q = np.stack([q0, np.zeros(n)])
    Kj = actuator_jacobian_jet(jm, q)
    m = Kj.shape[1] - na
    Kp = np.linalg.pinv(Kj[0])
    rhs = np.zeros((2, m + na))
    rhs[0, m:], rhs[1, m:] = xd, v
    qd = T.solve(Kj, rhs, Kp)
    rhs = -velocity_product_jet(partial(actuator_jacobian_jet, jm), q0, q[1], qd)
    rhs[0, m:] += xdd
    rhs[1, m:] += a
    qdd = T.solve(Kj, rhs, Kp)
    tau = with_friction_jet(jm.desc, rnea_jet(tree, q, qd, qdd), qd)        # the joints' friction in tau
    if wrench is not None:
        _, C = pose_jets(tree, q)
        JE = _jacobian_jet(tree, C, robot.ee_body, 2, robot.ee_offset)
        tau = tau - T.matmul(np.swapaxes(JE, -1, -2), np.broadcast_to(wrench, (2, 6))[..., None] *
                             np.array([1.0, 0.0])[:, None, None])[..., 0]
    I = np.zeros((2, m + na, na))
    I[0, m:] = np.eye(na)
    N = T.solve(Kj, I, Kp)
    return T.matmul(np.swapaxes(N, -1, -2), tau[..., None])[..., 0]


def _one(robot, inverse, x, xd, third, wrench):
    if inverse:                         # the value first: it checks every input and names it
        value = robot.inverse_dynamics(x, xd, third, wrench=wrench)
        xdd = np.asarray(third, dtype=float)
    else:
        value = xdd = robot.forward_dynamics(x, xd, third, wrench=wrench)
    q0 = robot.tree_state(x)[0]
    na = robot.n
    z = np.zeros(na)
    W = None if wrench is None else np.asarray(wrench, dtype=float).reshape(6)
    cols = [[direction_jets(robot, q0, np.asarray(xd, dtype=float), xdd, W,
                            *(np.eye(na)[j] if i == which else z for i in range(3)))[1] for j in range(na)]
            for which in range(3)]
    d_x, d_xd, M = (np.column_stack(c) for c in cols)
    if inverse:
        return value, d_x, d_xd, M
    Minv = np.linalg.inv(M)
    return value, -Minv @ d_x, -Minv @ d_xd, Minv


def loop_chain_derivatives(robot, inverse: bool, x, xd, third, wrench=None, one=_one) -> DynamicsDerivatives:
    """``u = ID(x, xd, xdd)`` (``inverse``) or ``xdd = FD(x, xd, u)`` and their exact first
    derivatives (n, n) each; batched over a leading axis (``one``: the function of one state,
    ``(robot, inverse, x, xd, third, wrench)`` -> the four arrays)."""
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        out = one(robot, inverse, x, xd, third, wrench)
    else:
        W = None if wrench is None else np.asarray(wrench, dtype=float).reshape(-1, 6)
        rows = [one(robot, inverse, x[i], np.asarray(xd)[i], np.asarray(third)[i],
                    None if W is None else W[i if len(W) > 1 else 0]) for i in range(len(x))]
        out = tuple(np.stack(r) for r in zip(*rows))
    if not all(np.isfinite(a).all() for a in out):
        raise StateError("the dynamics derivatives are not finite at this state (near a singularity)")
    return DynamicsDerivatives(*out)
