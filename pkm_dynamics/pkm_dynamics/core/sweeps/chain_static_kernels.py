"""Compiled static payload forces of a module chain over a batch of configurations: per row the
actuator forces ``u_0`` that hold the chain at rest under gravity, ``u_1``, those of 1 kg at the
tool, and the tool's position, in one pass (:func:`static_row`, :func:`static_payload_rows`).

At rest (``xd = xdd = 0``) the inverse dynamics of paper 000 (Algorithm 1 with the analytic
inverse dynamics, :func:`..module_chain.chain_recursions.id_recursions`) keeps only its gravity
terms: the twists, the wrench biases ``p`` (eq. 12) and the ``xi`` terms of eq. 30 vanish, and
the base acceleration ``nud_0 = (0, -g)`` (Algorithm 1 line 1) reaches every body as a pure
linear acceleration, its rotation into the body frame (the twist maps of eq. 6 of a twist
without angular part).  So the static inverse dynamics is

* one forward pass (:func:`static_forward`): the loop closure of every 4-bar in closed form
  (eqs. 2, 5; :func:`..module_chain.chain_closure.closure` at ``xd = 0``), the linear part of
  ``nud_0`` rotated into each body frame (``Rz(q)^T``, ``Rz(q1)^T``; the serial module's
  ``B exp(X x)``; the map to the next module's base) and the tool pose (the product of the
  module poses as :func:`..module_chain.chain_kinematics.forward_kinematics`);
* one backward pass (:func:`static_backward`) of two wrench columns: column 0 the bodies'
  weights ``F_i = M_i (0, a_i)`` (eq. 11 with ``p_i = 0``) carried down (eqs. 19, 38: the maps
  applied from the module poses, ``Ad(C)^-T``, without their 6 x 6 matrices), column 1
  the wrench of 1 kg at the tool, ``F_E = -W_1`` (eq. 20), ``W_1 = (0, R^T g)`` (moment, force;
  ``R`` the tool's orientation: minus the linear acceleration the forward pass carried to the
  tool), carried down alone (no body of the chain adds to it).  Each module's actuator force is
  the projection of eq. 65 / 16 (the 4-bar's transmission ``1 / k_b``, ``k_f``, ``k_a`` of eqs.
  62-64) or, for a serial module, the screw ``X^T h``.

``u(x, 0, 0, f_ext) = u_0(x) + u_W(x, f_ext)`` is linear in the wrench, so a payload ``m`` at the
tool needs ``u_0 + m u_1``.  The joint friction of the robot's calls
(:mod:`..friction.friction_kernels`) is exactly zero at rest (``tanh(0) = 0``, ``b 0 = 0``), so
these are the robot's static forces with friction too.
"""
from __future__ import annotations

import math

from ..module_chain.chain_closure import actuator_force_coefficients, check_strokes, closure
from ..module_chain.chain_layout import (B1, B3, B4, C_E, COS_Q, COS_Q1, GEO_H, GEO_L, GEO_L1, GEO_LC, GEO_LC0,
                                         KA, KB, KF, KIND, NUD, PARALLEL, SCREW, SERIAL_B, SERIAL_BODY,
                                         SIN_Q, SIN_Q1, SX)
from ..numba_support.cache import scratch_kernel
from ..spatial.se3_kernels import ad_inv_pose_rz_T_add, ad_inv_T_apply, dot, exp_se3, pose_mul
from ..status import BAD_INPUT, NONFINITE_RESULT, OK


@scratch_kernel
def rotate_T(R, a, out):
    """``out = R^T a`` (3,) for the rotation block of ``R`` ((3, 3) or a pose)."""
    for i in range(3):
        out[i] = R[0, i] * a[0] + R[1, i] * a[1] + R[2, i] * a[2]


@scratch_kernel
def rotate_rz_T(c, s, a, out):
    """``out = Rz(theta)^T a`` (3,), ``c, s = cos, sin theta``."""
    out[0], out[1], out[2] = c * a[0] + s * a[1], -s * a[0] + c * a[1], a[2]


@scratch_kernel
def pose_times_rz(C, px, pz, c, s):
    """``C = C T([px, 0, pz]) Rz(theta)`` (4, 4) in place, ``c, s = cos, sin theta``."""
    for i in range(3):
        a, b = C[i, 0], C[i, 1]
        C[i, 3] += a * px + C[i, 2] * pz
        C[i, 0], C[i, 1] = a * c + b * s, b * c - a * s


@scratch_kernel
def pose_times(C, T):
    """``C = C T`` (4, 4) in place (rows of ``C`` times the rotation and position of ``T``)."""
    for i in range(3):
        a, b, d = C[i, 0], C[i, 1], C[i, 2]
        C[i, 3] += a * T[0, 3] + b * T[1, 3] + d * T[2, 3]
        C[i, 0] = a * T[0, 0] + b * T[1, 0] + d * T[2, 0]
        C[i, 1] = a * T[0, 1] + b * T[1, 1] + d * T[2, 1]
        C[i, 2] = a * T[0, 2] + b * T[1, 2] + d * T[2, 2]


@scratch_kernel
def static_forward(geo, mats, nud0, A, V, S, W, w, root, x):
    """Forward pass at rest for one configuration ``x`` (n,) (module docstring): the closure of
    every parallel module into ``S`` (with ``k_a, k_b, k_f``), the serial modules' poses
    ``B exp(X x)`` into ``A[k, SERIAL_BODY, :4, :4]``, the linear acceleration ``a_i`` (3,) of
    every body into ``V[k, NUD, b, :3]`` (the parallel module's B1, B3, B4; the serial module's
    body), the tool pose into ``W[1, :4, :4]`` and the tool's linear acceleration into
    ``w[5, :3]``.  Returns (code, module)."""
    n = geo.shape[0]
    a, b = w[5], w[6]
    C, G = W[1, :4, :4], W[2, :4, :4]
    for i in range(3):
        a[i] = nud0[3 + i]
    for i in range(4):
        for j in range(4):
            C[i, j] = root[i, j]
    for k in range(n):
        g = geo[k]
        acc = V[k, NUD]
        if g[KIND] == PARALLEL:
            s = S[k]
            code = closure(g[GEO_L], g[GEO_L1], g[GEO_LC], g[GEO_LC0], g[SX] * x[k], 0.0, s)
            if code == OK:
                code = actuator_force_coefficients(g[GEO_L1], g[GEO_LC], g[GEO_LC0], s)
            if code != OK:
                return code, k
            c, sn = s[COS_Q], s[SIN_Q]
            rotate_rz_T(c, sn, a, acc[B1])                       # A1 (eq. 6a) of (0, a)
            rotate_rz_T(s[COS_Q1], s[SIN_Q1], a, acc[B3])         # A3, A4 (eqs. 6c-d)
            for i in range(3):
                acc[B4, i] = acc[B3, i]
            pose_times_rz(C, g[GEO_L], g[GEO_H], c, sn)         # T([L, 0, h]) Rz(q)
            src = acc[B1]
        else:
            Q = A[k, SERIAL_BODY, :4, :4]
            exp_se3(g[SCREW], x[k], G)
            pose_mul(mats[k, SERIAL_B, :4, :4], G, Q)            # B exp(X x)
            rotate_T(Q, a, acc[SERIAL_BODY])
            pose_times(C, Q)
            src = acc[SERIAL_BODY]
        pose_times(C, mats[k, C_E])                              # then E
        rotate_T(mats[k, C_E], src, b)                           # nud_E (eq. 6b / 9)
        for i in range(3):
            a[i] = b[i]
    return OK, -1


@scratch_kernel
def body_weight(M, a, out):
    """``out = M (0, a)`` (6,): the wrench of a body of spatial inertia ``M`` (6, 6) at the
    linear acceleration ``a`` (3,) and no angular one (eq. 11 at rest)."""
    for i in range(6):
        out[i] = M[i, 3] * a[0] + M[i, 4] * a[1] + M[i, 5] * a[2]


@scratch_kernel
def static_backward(geo, mats, A, V, S, W, w, u0, u1):
    """Backward pass at rest after :func:`static_forward`: the two wrench columns of the module
    docstring carried from the tool to the base, ``u_0`` (n,) and ``u_1`` (n,) out."""
    n = geo.shape[0]
    F0, F1, tmp, h = w[0], w[1], w[2], w[3]
    F = W[0, :3]
    at = w[5]
    for j in range(3):
        F0[j], F0[3 + j] = 0.0, 0.0
        F1[j], F1[3 + j] = 0.0, at[j]                  # F_E = -W_1 = (0, -R^T g) (eq. 20)
    for k in range(n - 1, -1, -1):
        g = geo[k]
        M, acc = mats[k], V[k, NUD]
        if g[KIND] == PARALLEL:
            s = S[k]
            for b in range(3):
                body_weight(M[b], acc[b], F[b])
            ad_inv_T_apply(M[C_E], F0, tmp)            # eq. 19: Ad*(B1_C_E) F_E
            for j in range(6):
                F[B1, j] += tmp[j]
            ka, kb, kf = s[KA], s[KB], s[KF]
            u0[k] = g[SX] * (F[B1, 2] / kb + kf * F[B3, 2] + kf * F[B4, 2] + F[B4, 3]
                             + ka * kf * F[B4, 4])     # eqs. 65, 16
            ad_inv_T_apply(M[C_E], F1, h)
            u1[k] = g[SX] * (h[2] / kb)
            c, sn, c1, s1 = s[COS_Q], s[SIN_Q], s[COS_Q1], s[SIN_Q1]
            for j in range(6):
                F0[j], F1[j] = 0.0, 0.0
            ad_inv_pose_rz_T_add(c, sn, g[GEO_L], 0.0, g[GEO_H], F[B1], F0)       # eq. 38
            ad_inv_pose_rz_T_add(c1, s1, 0.0, 0.0, 0.0, F[B3], F0)
            ad_inv_pose_rz_T_add(c1, s1, c1 * ka, s1 * ka, 0.0, F[B4], F0)
            ad_inv_pose_rz_T_add(c, sn, g[GEO_L], 0.0, g[GEO_H], h, F1)
        else:
            body_weight(M[SERIAL_BODY], acc[SERIAL_BODY], h)
            ad_inv_T_apply(M[C_E], F0, tmp)
            for j in range(6):
                h[j] += tmp[j]
            u0[k] = dot(g[SCREW], h)
            ad_inv_T_apply(A[k, SERIAL_BODY], h, F0)
            ad_inv_T_apply(M[C_E], F1, h)
            u1[k] = dot(g[SCREW], h)
            ad_inv_T_apply(A[k, SERIAL_BODY], h, F1)


@scratch_kernel
def static_row(geo, mats, nud0, A, V, S, W, w, root, x, u0, u1):
    """``u_0`` (n,), ``u_1`` (n,) of one configuration ``x`` (n,) and its tool pose in
    ``W[1, :4, :4]`` (module docstring).  Returns (code, module)."""
    code, k = static_forward(geo, mats, nud0, A, V, S, W, w, root, x)
    if code != OK:
        return code, k
    static_backward(geo, mats, A, V, S, W, w, u0, u1)
    return OK, -1


@scratch_kernel
def static_payload_rows(geo, mats, nud0, A, V, S, W, w, root, X, U0, U1, P, codes, status):
    """:func:`static_row` for every row of ``X`` (B, n) into ``U0``, ``U1`` (B, n) and the tool
    positions ``P`` (B, 3); ``codes`` (B,) each row's status (OK; BAD_INPUT for a value that is
    not finite, the strokes' STROKE, the closure's codes, NONFINITE_RESULT), its ``U0``, ``U1``
    and ``P`` rows NaN where not OK (the other rows go on).  ``status`` (3,): scratch of the
    stroke check.  Returns how many rows are OK."""
    B, n = X.shape
    C = W[1]
    good = 0
    for r in range(B):
        x = X[r]
        code = OK
        for k in range(n):
            if not math.isfinite(x[k]):
                code = BAD_INPUT
        if code == OK:
            code = check_strokes(geo, X[r:r + 1], status)
        if code == OK:
            code, _ = static_row(geo, mats, nud0, A, V, S, W, w, root, x, U0[r], U1[r])
        if code == OK:
            for k in range(n):
                if not (math.isfinite(U0[r, k]) and math.isfinite(U1[r, k])):
                    code = NONFINITE_RESULT
            for i in range(3):
                P[r, i] = C[i, 3]
        codes[r] = code
        if code == OK:
            good += 1
        else:
            for k in range(n):
                U0[r, k] = math.nan
                U1[r, k] = math.nan
            for i in range(3):
                P[r, i] = math.nan
    return good
