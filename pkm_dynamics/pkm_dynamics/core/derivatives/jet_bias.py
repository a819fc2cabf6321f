"""The pieces of a first-order tree-motion jet (dual numbers in the direction parameter ``s``)
that the forward-mode derivatives of a parallel robot (:mod:`.pkm_derivatives`, task space) and
of a chain of loops (:mod:`..loop_chain.loop_chain_derivatives`, actuator space) share: the
acceleration-level bias of the closure ``K(q) qdd = rhs - beta`` and the joint friction torques
(:mod:`..friction`) along the tree rates."""
from __future__ import annotations

import numpy as np

from ..friction.friction_model import friction_jet


def velocity_product_jet(jacobian_jet, q0: np.ndarray, q1: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Jet (2, rows) of ``beta = (DK[qd]) qd`` (the velocity-product terms of ``d/dt (K qd)``)
    along ``q(s) = q0 + s q1``, ``qd(s) = qd[0] + s qd[1]`` (each (n,)); ``jacobian_jet(qj)``
    gives the jet (deg+1, rows, n) of ``K`` along a tree jet ``qj`` (deg+1, n).

    ``beta(s)``'s ``s``-derivative is ``(D2K[q1, qd0]) qd0 + (DK[qd0]) qd1 + (DK[qd1]) qd0``; the
    directional derivatives come from jets of ``K`` along straight lines ``q0 + t y``, ``D2K[a,
    b]`` by polarisation of ``D2K[y, y]`` (the first term only where ``q1`` is not zero)."""
    def line(y, degree):
        qj = np.zeros((degree + 1, len(q0)))
        qj[0], qj[1] = q0, y
        return jacobian_jet(qj)
    qd0, qd1 = qd
    DK0 = line(qd0, 1)[1]                                     # DK[qd0]
    beta = np.zeros((2, DK0.shape[0]))
    beta[0] = DK0 @ qd0
    beta[1] = DK0 @ qd1 + line(qd1, 1)[1] @ qd0
    if np.any(q1):                                            # (D2K[q1, qd0]) qd0, polarised
        D2 = (line(q1 + qd0, 2)[2] - line(q1 - qd0, 2)[2]) / 2.0
        beta[1] += D2 @ qd0
    return beta


def with_friction_jet(desc, tau: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """``tau`` (2, nq), the tree's RNEA jet, plus the joint friction torques' jet
    ``tau_f(qd[0]) + s tau_f'(qd[0]) qd[1]`` (exact for the smooth law) of the description
    ``desc``'s friction rows; ``tau`` itself (the same array) without friction."""
    if desc.friction is None:
        return tau
    return tau + friction_jet(desc.friction.table, qd)
