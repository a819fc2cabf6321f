"""The joint friction's share of the higher-order inverse dynamics: ``u_f, du_f, ddu_f`` along a
motion, for every robot kind and either route (added to ``u, du, ddu`` by
:func:`.higher_order._result`).

Joint friction depends on the state only, ``tau_f(qd)`` (:mod:`..friction`), and reaches the
actuators through the constraint embedding, ``u_f = G^T tau_f`` with ``G = dq/dx`` (paper 001
eq. 37; for a PKM ``J_IK^-T W_t``, eq. 44-45).  Its time derivatives need those of ``G`` along
the motion: they come here from the jets of the general route (:mod:`.jet_dynamics`), the
motion basis ``Z(t)`` and the least-norm force ``(S Z)^T u_f = Z^T tau_f`` of
:func:`.jet_dynamics.actuator_force_jet` (with ``tau_f`` in place of the RNEA torques), on the
tree motion the route returned (derivatives of every tree joint, orders 0-4)."""
from __future__ import annotations

import numpy as np

from . import jet_dynamics as JD
from ..friction.friction_model import friction_jet
from ..spatial import taylor as T


def friction_force_derivatives(jm: JD.JetModel, table: np.ndarray, Qd: np.ndarray) -> np.ndarray:
    """``(u_f, du_f, ddu_f)`` (3, na) along the tree motion ``Qd`` (5, nq) (the joints'
    derivatives of orders 0-4, as :class:`.higher_order.HigherOrderResult.tree_motion`), with the
    friction rows ``table`` (nq, 5)."""
    D1 = JD.FORCE_DEGREE + 1
    qj = T.from_derivatives(Qd[:D1 + 1])
    tau = friction_jet(table, T.deriv(qj))                 # (3, nq): tau_f(qd(t))
    _, C = JD.pose_jets(jm.desc.tree, qj[:D1])
    Z = JD.motion_basis_jet(jm, C, D1)
    Zt = np.swapaxes(Z, -1, -2)
    B = Zt @ jm.S.T
    return T.to_derivatives(JD.minimum_norm_force_jet(B, T.matmul(Zt, tau[..., None])[..., 0]))


def with_friction(jm: JD.JetModel, table, U: np.ndarray, Qd: np.ndarray) -> np.ndarray:
    """``U`` (..., 3, na) plus the friction's share (:func:`friction_force_derivatives`) of each
    sample of ``Qd`` (..., 5, nq)."""
    rows = Qd.reshape(-1, *Qd.shape[-2:])
    Uf = np.stack([friction_force_derivatives(jm, table, q) for q in rows]).reshape(U.shape)
    return U + Uf
