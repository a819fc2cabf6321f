"""Compiled kinematics of module chains (paper 000 eqs. 2-7, 27-28): every tree joint with the
loops closed (:func:`tree_state`) and the end-effector pose (:func:`forward_kinematics`), the
counterparts of :func:`~pkm_dynamics.core.module_chain.chain_tree_state` and
:func:`~pkm_dynamics.core.module_chain.chain_forward_kinematics` (the reference route).  Model
layouts as in :mod:`.chain_layout`; each driver checks its inputs, loops over the batch and
returns a status with ``status = (code, row, module)``.
"""
from __future__ import annotations


from ..numba_support.cache import scratch_kernel
from .chain_closure import (BOUND_ACCELERATION, BOUND_POSITION, BOUND_VELOCITY, check_strokes, closure,
                            loop_angles)
from ..spatial.se3_kernels import exp_se3, pose_mul
from ..status import BAD_INPUT, OK
from .chain_layout import (C_E, COS_Q, GEO_H, GEO_L, GEO_L1, GEO_LC, GEO_LC0, JOINT_Q, JOINT_Q1, JOINT_X, K1, K2,
                           K4, K5, KIND, PARALLEL, REF_Q, REF_Q1, SCREW, SERIAL_B, SIGN_Q, SIGN_Q1, SIN_Q, SX, XD_ACT)


@scratch_kernel
def check_states(geo, X, XD, XDD, status):
    """Up to three (B, n) inputs (index 0-2: positions, velocities, accelerations) finite and
    within their bounds, then the strokes of every row, as :func:`.chain_kernels.check_inputs`.
    Returns the code."""
    B, n = X.shape
    for which in range(3):
        Y = X if which == 0 else (XD if which == 1 else XDD)
        bound = BOUND_POSITION if which == 0 else (BOUND_VELOCITY if which == 1 else BOUND_ACCELERATION)
        for r in range(Y.shape[0]):
            for k in range(n):
                if not abs(Y[r, k]) <= bound:             # NaN fails too
                    status[0], status[1], status[2] = BAD_INPUT, r, which
                    return BAD_INPUT
    return check_strokes(geo, X, status)


@scratch_kernel
def tree_state(geo, X, XD, XDD, Q, QD, QDD, S, status):
    """Positions, velocities, accelerations (B, nq) of every tree joint for actuator states
    (B, n): eqs. 2 (q, q1), 4-5 (rates), 7 and 27-28 (accelerations) per parallel module.
    Returns the code."""
    status[0], status[1], status[2] = OK, -1, -1
    code = check_states(geo, X, XD, XDD, status)
    if code != OK:
        return code
    B, n = X.shape
    for r in range(B):
        for k in range(n):
            g = geo[k]
            if g[KIND] == PARALLEL:
                sx = g[SX]
                code = closure(g[GEO_L], g[GEO_L1], g[GEO_LC], g[GEO_LC0], sx * X[r, k], sx * XD[r, k], S[k])
                if code != OK:
                    status[0], status[1], status[2] = code, r, k
                    return code
                a = sx * XDD[r, k]
                jl, jc, jp = int(g[JOINT_Q]), int(g[JOINT_Q1]), int(g[JOINT_X])
                sl, sc, rl, rc = g[SIGN_Q], g[SIGN_Q1], g[REF_Q], g[REF_Q1]
                s = S[k]
                q, q1 = loop_angles(s)
                Q[r, jl], QD[r, jl], QDD[r, jl] = sl * (q - rl), sl * s[K1] * s[XD_ACT], sl * (s[K4] + s[K1] * a)
                Q[r, jc], QD[r, jc], QDD[r, jc] = sc * (q1 - rc), sc * s[K2] * s[XD_ACT], sc * (s[K5] + s[K2] * a)
                Q[r, jp], QD[r, jp], QDD[r, jp] = X[r, k], XD[r, k], XDD[r, k]
            else:
                j = int(g[JOINT_Q])
                Q[r, j], QD[r, j], QDD[r, j] = X[r, k], XD[r, k], XDD[r, k]
    return OK


@scratch_kernel
def forward_kinematics(geo, mats, root, X, out, S, W, status):
    """End-effector poses (B, 4, 4) in the root link for actuator positions (B, n): the
    product of the module poses (eqs. 2-3), ``Bc_C_B1 = T([L, 0, h]) Rz(q)`` then ``B1_C_E``
    for a parallel module, ``B exp(X x) B4_C_E`` for a serial one.  ``W`` (3, 6, 6): scratch.
    Returns the code."""
    status[0], status[1], status[2] = OK, -1, -1
    code = check_states(geo, X, X[:0], X[:0], status)
    if code != OK:
        return code
    B, n = X.shape
    C, G, P = W[0, :4, :4], W[1, :4, :4], W[2, :4, :4]
    for r in range(B):
        for i in range(4):
            for j in range(4):
                C[i, j] = root[i, j]
        for k in range(n):
            g = geo[k]
            if g[KIND] == PARALLEL:
                code = closure(g[GEO_L], g[GEO_L1], g[GEO_LC], g[GEO_LC0], g[SX] * X[r, k], 0.0, S[k])
                if code != OK:
                    status[0], status[1], status[2] = code, r, k
                    return code
                c, s = S[k, COS_Q], S[k, SIN_Q]
                for i in range(4):
                    for j in range(4):
                        G[i, j] = 0.0
                G[0, 0], G[0, 1], G[1, 0], G[1, 1] = c, -s, s, c
                G[2, 2], G[3, 3] = 1.0, 1.0
                G[0, 3], G[2, 3] = g[GEO_L], g[GEO_H]               # T([L, 0, h]) Rz(q)
                pose_mul(C, G, P)
            else:
                exp_se3(g[SCREW], X[r, k], G)
                pose_mul(mats[k, SERIAL_B, :4, :4], G, P)           # B exp(X x)
                for i in range(4):
                    for j in range(4):
                        G[i, j] = P[i, j]
                pose_mul(C, G, P)
            pose_mul(P, mats[k, C_E, :4, :4], C)                    # then E
        for i in range(4):
            for j in range(4):
                out[r, i, j] = C[i, j]
    return OK

