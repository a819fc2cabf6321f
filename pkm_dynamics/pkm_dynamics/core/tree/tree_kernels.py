"""Compiled recursive dynamics of a spanning tree (papers 001/002, POE notation): the same
algorithms as :mod:`pkm_dynamics.core.tree_dynamics` (the reference route the tests compare
against), written as loops over bodies with scalar arithmetic inside, on the model and scratch
tuples of :mod:`.tree_model`.

Layouts (n bodies, parents before children; see :class:`.tree_model.CompiledTree`):

* ``model = (parent, X, B, M)``: ``parent`` (n,) int64 (-1: the root link), joint screws ``X``
  (n, 6), reference poses ``B`` (n, 4, 4), spatial inertias ``M`` (n, 6, 6); read-only;
* ``data = (P, C, Ad, V, A, W, Z, Y, s, w, T)``: relative poses ``P`` and absolute poses ``C``
  (n, 4, 4), ``Ad`` (n, 6, 6) the twist maps ``Ad(P_i)^-1`` from each body's predecessor,
  twists ``V``, accelerations ``A``, wrenches ``W`` (n, 6), ``Z`` (n, 6, 6) composite or
  articulated inertias, ``Y`` (n, 3, 6) ABA vectors (c, U, p^A), ``s`` (n, 2) ABA scalars
  (D, u), ``w`` (8, 6) vectors and ``T`` (2, 6, 6) matrices of one step (``T[1, :4, :4]``: a
  pose).

**Building blocks** (one state, no allocation, no checks; call them from another kernel)::

    from pkm_dynamics.core.tree.tree_kernels import forward_kinematics, motion, rnea_pass

    @kernel
    def my_kernel(model, data, q, qd, qdd, a0, fext, tau):
        forward_kinematics(model, data, q)         # data: P, C, Ad at q
        motion(model, data, qd, qdd, a0)           # data: V, A (base acceleration a0 (6,))
        rnea_pass(model, data, fext, tau)          # tau (n,); fext (n, 6), zeros for none

:func:`crba_pass`, :func:`aba_pass` and :func:`body_jacobian` need :func:`forward_kinematics`
at the same ``q`` first (:func:`aba_pass` also :func:`motion` with zero accelerations, for the
twists).  ``fext`` is (n, 6) body-fixed wrenches (zeros for none).  The ``*_rows`` drivers
run one call over a batch (B, n) (wrenches ``FE`` (1, n, 6) for every row or (B, n, 6)), check
the inputs (finite) and the results, and return a status code of :mod:`..status` with
``status = (code, row, index)``: index 0-3 the input (q, qd, qdd or tau, f_ext) of
BAD_INPUT, the joint of NONFINITE_RESULT.
"""
from __future__ import annotations

from ..numba_support.cache import kernel
from ..spatial.se3_kernels import (ad_apply, ad_inv, bracket_scaled, congruence_add, dot, exp_se3, matTvec, matvec,
                              pose_mul, wrench_bias)
from ..status import BAD_INPUT, NONFINITE_RESULT, OK


@kernel
def body_poses(parent, X, B, q, P, C, Ad, G):
    """Forward pass of the poses (paper 001 eq. 3) for ``q`` (n,): relative poses ``P_i = B_i
    exp(X_i q_i)`` (n, 4, 4), their ``Ad_i = Ad(P_i)^-1`` (n, 6, 6) and absolute poses ``C_i =
    C_p P_i`` (n, 4, 4); ``G`` (4, 4) scratch."""
    for i in range(parent.shape[0]):
        exp_se3(X[i], q[i], G)
        pose_mul(B[i], G, P[i])
        ad_inv(P[i], Ad[i])
        p = parent[i]
        if p < 0:
            for a in range(4):
                for b in range(4):
                    C[i, a, b] = P[i, a, b]
        else:
            pose_mul(C[p], P[i], C[i])


@kernel
def body_motion(parent, X, Ad, qd, qdd, a0, V, A, c):
    """Forward pass of twists and accelerations (paper 001 eqs. 5-10, paper 002 Sec. V-A) after
    :func:`body_poses`: ``V_i = Ad_i V_p + X_i qd_i``, ``Vdot_i = Ad_i Vdot_p + ad(V_i) X_i qd_i
    + X_i qdd_i`` with ``Vdot_0 = a0`` (6,) into ``V``, ``A`` (n, 6); ``c`` (6,) scratch."""
    for i in range(parent.shape[0]):
        p = parent[i]
        Xi = X[i]
        if p < 0:
            for j in range(6):
                V[i, j] = Xi[j] * qd[i]
            matvec(Ad[i], a0, A[i])
            for j in range(6):
                A[i, j] += Xi[j] * qdd[i]
        else:
            matvec(Ad[i], V[p], V[i])
            for j in range(6):
                V[i, j] += Xi[j] * qd[i]
            matvec(Ad[i], A[p], A[i])
            bracket_scaled(V[i], Xi, qd[i], c)                  # ad(V_i) X_i qd_i
            for j in range(6):
                A[i, j] += c[j] + Xi[j] * qdd[i]


@kernel
def forward_kinematics(model, data, q):
    """:func:`body_poses` into ``data`` (P, C, Ad) for ``q`` (n,)."""
    parent, X, B, _ = model
    body_poses(parent, X, B, q, data[0], data[1], data[2], data[10][1, :4, :4])


@kernel
def motion(model, data, qd, qdd, a0):
    """:func:`body_motion` into ``data`` (V, A) after :func:`forward_kinematics`."""
    parent, X, _, _ = model
    body_motion(parent, X, data[2], qd, qdd, a0, data[3], data[4], data[9][0])


@kernel
def body_bias(M, V, out, h):
    """``out = -ad*(V) M V`` (6,), the velocity bias of a body (Newton-Euler); ``h`` (6,) scratch."""
    matvec(M, V, h)
    wrench_bias(V, h, out)


@kernel
def rnea_pass(model, data, fext, tau):
    """Newton-Euler backward recursion after :func:`motion`: ``W_i = M_i Vdot_i - ad*(V_i) M_i
    V_i - f_ext_i + sum_c Ad_c^T W_c`` into ``data`` (W), ``tau_i = X_i^T W_i`` into ``tau``
    (n,).  ``fext``: (n, 6)."""
    parent, X, _, M = model
    Ad, V, A, W, w = data[2], data[3], data[4], data[5], data[9]
    h, b = w[0], w[1]
    n = parent.shape[0]
    for i in range(n):
        matvec(M[i], A[i], W[i])
        body_bias(M[i], V[i], b, h)
        for j in range(6):
            W[i, j] += b[j]
        for j in range(6):
            W[i, j] -= fext[i, j]
    for i in range(n - 1, -1, -1):
        tau[i] = dot(X[i], W[i])
        p = parent[i]
        if p >= 0:
            matTvec(Ad[i], W[i], b)
            for j in range(6):
                W[p, j] += b[j]


@kernel
def crba_pass(model, data, H):
    """Composite rigid-body algorithm after :func:`forward_kinematics`: the joint-space mass
    matrix ``H`` (n, n) (zero between joints on different branches); composite inertias in
    ``data`` (Z)."""
    parent, X, _, M = model
    Ad, Z, w, T = data[2], data[6], data[9], data[10]
    n = parent.shape[0]
    F, G = w[0], w[1]
    for i in range(n):
        for j in range(n):
            H[i, j] = 0.0                                       # joints on other branches
        for a in range(6):
            for b in range(6):
                Z[i, a, b] = M[i, a, b]
    for i in range(n - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            congruence_add(Ad[i], Z[i], Z[p], T[0])             # I^c_p += Ad_i^T I^c_i Ad_i
        matvec(Z[i], X[i], F)
        H[i, i] = dot(X[i], F)
        j = i
        while parent[j] >= 0:
            matTvec(Ad[j], F, G)
            for a in range(6):
                F[a] = G[a]
            j = parent[j]
            H[i, j] = dot(X[j], F)
            H[j, i] = H[i, j]


@kernel
def aba_pass(model, data, qd, tau, a0, fext, qdd):
    """Articulated-body algorithm after :func:`forward_kinematics` and :func:`motion` (twists):
    ``qdd`` (n,) for ``tau`` (n,), base acceleration ``a0`` (6,), ``fext`` (n, 6).
    Backward pass ``U = I^A X``, ``D = X^T U``, ``u = tau - X^T p^A``, ``I^a = I^A - U U^T / D``,
    ``p^a = p^A + I^a c + U u / D`` carried to the parent; forward pass ``a = Ad a_p + c``,
    ``qdd = (u - U^T a) / D``."""
    parent, X, _, M = model
    Ad, V, A, Z, Y, s, w, T = data[2], data[3], data[4], data[6], data[7], data[8], data[9], data[10]
    n = parent.shape[0]
    h, pa, a = w[0], w[1], w[2]
    Ia = T[1]
    for i in range(n):
        for r in range(6):
            for k in range(6):
                Z[i, r, k] = M[i, r, k]
        bracket_scaled(V[i], X[i], qd[i], Y[i, 0])              # c_i = ad(V_i) X_i qd_i
        body_bias(M[i], V[i], Y[i, 2], h)                       # p^A_i
        for j in range(6):
            Y[i, 2, j] -= fext[i, j]
    for i in range(n - 1, -1, -1):
        c, U, pA = Y[i, 0], Y[i, 1], Y[i, 2]
        matvec(Z[i], X[i], U)
        D = dot(X[i], U)
        u = tau[i] - dot(X[i], pA)
        s[i, 0], s[i, 1] = D, u
        p = parent[i]
        if p >= 0:
            for r in range(6):
                for k in range(6):
                    Ia[r, k] = Z[i, r, k] - U[r] * U[k] / D
            matvec(Ia, c, pa)
            for j in range(6):
                pa[j] += pA[j] + U[j] * (u / D)
            congruence_add(Ad[i], Ia, Z[p], T[0])
            matTvec(Ad[i], pa, h)
            for j in range(6):
                Y[p, 2, j] += h[j]
    for i in range(n):
        p = parent[i]
        matvec(Ad[i], a0 if p < 0 else A[p], a)
        c, U = Y[i, 0], Y[i, 1]
        for j in range(6):
            a[j] += c[j]
        qdd[i] = (s[i, 1] - dot(U, a)) / s[i, 0]
        for j in range(6):
            A[i, j] = a[j] + X[i, j] * qdd[i]


@kernel
def body_jacobian(model, data, body, offset, J):
    """Body-fixed Jacobian ``J`` (6, n) of the frame ``F = C_body offset`` after
    :func:`forward_kinematics` (paper 001 eq. 5): ``J[:, j] = Ad(F)^-1 Ad(C_j) X_j`` for the
    joints ``j`` supporting ``body``, zero elsewhere (all zero for ``body < 0``)."""
    parent, X, _, _ = model
    C, w, T = data[1], data[9], data[10]
    for r in range(6):
        for j in range(J.shape[1]):
            J[r, j] = 0.0
    if body < 0:
        return
    F, AF = T[1, :4, :4], T[0]
    pose_mul(C[body], offset, F)
    ad_inv(F, AF)
    j = body
    while j >= 0:
        ad_apply(C[j], X[j], w[0])
        matvec(AF, w[0], w[1])
        for r in range(6):
            J[r, j] = w[1, r]
        j = parent[j]


@kernel
def check_rows(Y, which, status):
    """Every entry of ``Y`` (B, k) finite; else BAD_INPUT with ``status = (code, row,
    which)``.  Returns the code."""
    for r in range(Y.shape[0]):
        for k in range(Y.shape[1]):
            v = Y[r, k]
            if not (v - v == 0.0):                              # NaN or inf
                status[0], status[1], status[2] = BAD_INPUT, r, which
                return BAD_INPUT
    return OK


@kernel
def check_inputs(Q, QD, QDD, status):
    """``Q``, ``QD``, ``QDD`` (B, n) (index 0-2) finite.  Returns the code."""
    status[0], status[1], status[2] = OK, -1, -1
    if check_rows(Q, 0, status) != OK or check_rows(QD, 1, status) != OK or check_rows(QDD, 2, status) != OK:
        return BAD_INPUT
    return OK


@kernel
def check_wrenches(FE, status):
    """``FE`` (R, n, 6) finite (index 3).  Returns the code."""
    for r in range(FE.shape[0]):
        if check_rows(FE[r], 3, status) != OK:
            status[1] = r
            return BAD_INPUT
    return OK


@kernel
def finite_result(Y, r, status):
    """Every entry of the result ``Y`` (k,) finite; else NONFINITE_RESULT with ``status =
    (code, r, entry)``.  Returns the code."""
    for k in range(Y.shape[0]):
        v = Y[k]
        if not (v - v == 0.0):
            status[0], status[1], status[2] = NONFINITE_RESULT, r, k
            return NONFINITE_RESULT
    return OK


@kernel
def forward_kinematics_rows(model, data, Q, out, status):
    """Absolute poses ``out`` (B, n, 4, 4) for ``Q`` (B, n).  Returns the code."""
    if check_inputs(Q, Q, Q, status) != OK:
        return BAD_INPUT
    for r in range(Q.shape[0]):
        forward_kinematics(model, data, Q[r])
        out[r] = data[1]
    return OK


@kernel
def kinematics_rows(model, data, Q, QD, QDD, a0, Cs, Vs, As, status):
    """Absolute poses ``Cs`` (B, n, 4, 4), twists ``Vs`` and accelerations ``As`` (B, n, 6)
    for ``Q``, ``QD``, ``QDD`` (B, n) and base acceleration ``a0`` (6,).  Returns the code."""
    if check_inputs(Q, QD, QDD, status) != OK:
        return BAD_INPUT
    for r in range(Q.shape[0]):
        forward_kinematics(model, data, Q[r])
        motion(model, data, QD[r], QDD[r], a0)
        Cs[r] = data[1]
        Vs[r] = data[3]
        As[r] = data[4]
    return OK


@kernel
def rnea_rows(model, data, Q, QD, QDD, FE, a0, TAU, status):
    """Inverse dynamics ``TAU`` (B, n) (:func:`rnea_pass`).  Returns the code."""
    if check_inputs(Q, QD, QDD, status) != OK or check_wrenches(FE, status) != OK:
        return BAD_INPUT
    for r in range(Q.shape[0]):
        forward_kinematics(model, data, Q[r])
        motion(model, data, QD[r], QDD[r], a0)
        rnea_pass(model, data, FE[r if FE.shape[0] > 1 else 0], TAU[r])
        if finite_result(TAU[r], r, status) != OK:
            return NONFINITE_RESULT
    return OK


@kernel
def crba_rows(model, data, Q, H, status):
    """Mass matrices ``H`` (B, n, n) (:func:`crba_pass`).  Returns the code."""
    if check_inputs(Q, Q, Q, status) != OK:
        return BAD_INPUT
    for r in range(Q.shape[0]):
        forward_kinematics(model, data, Q[r])
        crba_pass(model, data, H[r])
        for i in range(H.shape[1]):
            if finite_result(H[r, i], r, status) != OK:
                status[2] = i
                return NONFINITE_RESULT
    return OK


@kernel
def aba_rows(model, data, Q, QD, TAU, FE, a0, QDD, status):
    """Forward dynamics ``QDD`` (B, n) (:func:`aba_pass`); ``TAU`` is input index 2.  Returns
    the code."""
    if check_inputs(Q, QD, TAU, status) != OK or check_wrenches(FE, status) != OK:
        return BAD_INPUT
    for r in range(Q.shape[0]):
        forward_kinematics(model, data, Q[r])
        motion(model, data, QD[r], QD[r], a0)                  # twists only (A is rewritten)
        aba_pass(model, data, QD[r], TAU[r], a0, FE[r if FE.shape[0] > 1 else 0], QDD[r])
        if finite_result(QDD[r], r, status) != OK:
            return NONFINITE_RESULT
    return OK


@kernel
def jacobian_rows(model, data, Q, body, offset, J, status):
    """Body-fixed Jacobians ``J`` (B, 6, n) of the frame ``C_body offset`` (:func:`body_jacobian`).
    Returns the code."""
    if check_inputs(Q, Q, Q, status) != OK:
        return BAD_INPUT
    for r in range(Q.shape[0]):
        forward_kinematics(model, data, Q[r])
        body_jacobian(model, data, body, offset, J[r])
    return OK
