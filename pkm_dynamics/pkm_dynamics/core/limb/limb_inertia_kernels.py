"""Compiled share of one limb in the task-space mass matrix of a parallel robot (paper 001 eq.
40): ``K^T H_l K`` with ``H_l`` the mass matrix of the limb tree (eq. 37, never formed), from the
state and Jacobians the IK kernel left in the scratch (:mod:`.limb_layout`), body by body as
``sum_i T_i^T M_i T_i``; the bodies past the last one with mass are skipped
(:func:`bodies_to_last_mass`, which the RNEA of a serial limb reads too).
"""
from __future__ import annotations

from ..numba_support.cache import kernel


@kernel
def bodies_to_last_mass(M, n):
    """The number of bodies up to the last one with mass among the first ``n`` of the inertias
    ``M`` (n, 6, 6) (bodies numbered parent first): the bodies past it carry no wrench, so the
    RNEA's and the CRBA's sums over a subtree of them are exact zeros."""
    used = 0
    for i in range(n):
        if not (M[i, 3, 3] == 0.0 and M[i, 0, 0] == 0.0):
            used = i + 1
    return used


@kernel
def limb_task_inertia(parent, M, C, Y, K, T, Mt):
    """``Mt += K^T H_l K`` (dp, dp), the limb's share of eq. 40, as ``sum_i T_i^T M_i T_i`` with
    ``T_i = J_i K`` (6, dp) the body-fixed twists of body i per unit task rate (``J_i`` its body
    Jacobian: ``sum_(j supports i) Ad(C_i)^-1 Y_j K_j``, accumulated in the base frame along the
    tree), the mass matrix of the limb tree (:func:`..tree_dynamics.crba`) never formed.
    ``parent`` (n,), ``M`` (n, 6, 6) inertias, ``C`` (n, 4, 4) poses, ``Y`` (n, 6) spatial
    screws, ``K`` (n, dp); ``T`` (n, 6, dp) scratch."""
    n, dp = K.shape[0], K.shape[1]
    used = bodies_to_last_mass(M, n)
    for i in range(used):                        # spatial T_i = T_p + Y_i K_i (parent[i] < i)
        p = parent[i]
        for a in range(6):
            for c in range(dp):
                T[i, a, c] = (T[p, a, c] if p >= 0 else 0.0) + Y[i, a] * K[i, c]
    for i in range(used):
        Mi, Ti = M[i], T[i]
        if Mi[3, 3] == 0.0 and Mi[0, 0] == 0.0:
            continue                             # massless (the platform in a limb tree)
        px, py, pz = C[i, 0, 3], C[i, 1, 3], C[i, 2, 3]
        for c in range(dp):                      # body-fixed (in place)
            w0, w1, w2 = Ti[0, c], Ti[1, c], Ti[2, c]
            v0 = Ti[3, c] - (py * w2 - pz * w1)
            v1 = Ti[4, c] - (pz * w0 - px * w2)
            v2 = Ti[5, c] - (px * w1 - py * w0)
            for a in range(3):
                Ti[a, c] = C[i, 0, a] * w0 + C[i, 1, a] * w1 + C[i, 2, a] * w2
                Ti[3 + a, c] = C[i, 0, a] * v0 + C[i, 1, a] * v1 + C[i, 2, a] * v2
        for d in range(dp):                      # x = M_i T_i[:, d] once, then T_i[:, c] . x (c <= d)
            t0, t1, t2, t3, t4, t5 = Ti[0, d], Ti[1, d], Ti[2, d], Ti[3, d], Ti[4, d], Ti[5, d]
            x0 = Mi[0, 0] * t0 + Mi[0, 1] * t1 + Mi[0, 2] * t2 + Mi[0, 3] * t3 + Mi[0, 4] * t4 + Mi[0, 5] * t5
            x1 = Mi[1, 0] * t0 + Mi[1, 1] * t1 + Mi[1, 2] * t2 + Mi[1, 3] * t3 + Mi[1, 4] * t4 + Mi[1, 5] * t5
            x2 = Mi[2, 0] * t0 + Mi[2, 1] * t1 + Mi[2, 2] * t2 + Mi[2, 3] * t3 + Mi[2, 4] * t4 + Mi[2, 5] * t5
            x3 = Mi[3, 0] * t0 + Mi[3, 1] * t1 + Mi[3, 2] * t2 + Mi[3, 3] * t3 + Mi[3, 4] * t4 + Mi[3, 5] * t5
            x4 = Mi[4, 0] * t0 + Mi[4, 1] * t1 + Mi[4, 2] * t2 + Mi[4, 3] * t3 + Mi[4, 4] * t4 + Mi[4, 5] * t5
            x5 = Mi[5, 0] * t0 + Mi[5, 1] * t1 + Mi[5, 2] * t2 + Mi[5, 3] * t3 + Mi[5, 4] * t4 + Mi[5, 5] * t5
            for c in range(d + 1):
                s = Ti[0, c] * x0 + Ti[1, c] * x1 + Ti[2, c] * x2 + Ti[3, c] * x3 + Ti[4, c] * x4 + Ti[5, c] * x5
                Mt[c, d] += s
                if d != c:
                    Mt[d, c] += s
