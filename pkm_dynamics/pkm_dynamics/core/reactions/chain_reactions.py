"""Joint reactions of a module chain (compiled, O(n)): the wrench every tree joint transmits and
the pin load of every 4-bar, in the frames and sign convention of :mod:`..reactions` (which
stays the general route: tree + KKT multipliers, the independent check).

Paper 000's route (Sec. 2.2, App. A-B):

1. the motion of every body from the actuator state and the forward-dynamics accelerations
   (the tree joints with the loops closed, :func:`.chain_kinematics.tree_state`), and the local
   wrenches of every body (eqs. 11-12: ``F_i = M_i nud_i - ad*(nu_i) M_i nu_i``, gravity as the
   base acceleration);
2. the backward recursion that carries them from the end effector to the base (eqs. 13-15:
   ``F = F_hat + sum Ad*(child) F_child``, the end-effector wrench ``F_ext`` of eq. 20 on its
   body) -- first without the loops' internal forces: this gives the wrench transmitted between
   modules, which the internal forces of a 4-bar do not change (they act on two bodies of the
   same module);
3. per 4-bar, its internal force: the pin force ``f_P`` at the rod end (the cut joint), in the
   loop's plane (eq. 56b: no out-of-plane components), from the zero-torque assumption of the
   passive joints and the actuator's own force (eqs. 55, 16): each of the three tree joints
   ``j`` of the loop with screw ``Y_j`` (root frame) must carry its effort ``tau_j`` once the
   pin force is added, ``X_j^T W_j + s_j u_j . f_P = tau_j`` with ``u_j = v_j + omega_j x p``
   the velocity its unit rate gives the pin point ``p`` and ``s_j = +1`` (joint on the parent
   link's side of the cut) or ``-1`` (child link's side).  These are the rows of eq. 57 left
   once the rod and cylinder wrenches (the unknowns ``F_B4``, ``F_B3`` of eq. 58) are
   eliminated by step 2: three equations, two unknowns, consistent for the forward-dynamics
   acceleration; solved in the plane by their normal equations (2 x 2) and the residual checked.
   The 2 x 2 determinant vanishes where eq. 61's ``det A = -L1 sin q2 (x + Lc0)`` does;
   With joint friction each joint's effort ``tau_j`` is less its friction torque (passive
   joints: ``-tau_f,j``), and the dynamics of step 1 runs under ``u - u_f``;
4. the pin force added to the tree joints of the loop (``W_j += s_j Ad(C_j)^T (p x f_P,
   f_P)``): every joint's wrench (eqs. 13-14 with ``F_P``) in its child body frame.

Out-of-plane loads of the 4-bar are statically indeterminate for the rigid loop; as in
:mod:`..reactions` (minimum-norm multipliers) the pin carries none of them (its multipliers
are the in-plane force, the rest zero) and the tree joints carry them all.

Layouts: tree ``parent`` (nq,) int, ``B`` (nq, 4, 4), ``X`` (nq, 6), ``M`` (nq, 6, 6) as
:class:`~..tree.TreeModel`; ``a0`` (6,) the base acceleration ``(0, -g)``; ``ee`` the body of
the end effector and ``ee_map`` (6, 6) its wrench map into that body; per loop ``c``:
``loops[c]`` (11,) int: body k (parent link), body r (child link), its three tree joints,
their sides ``s_j``, a revolute joint of the loop (its axis is the plane's normal), the
offset and size of the loop's multipliers; ``cuts[c]`` (21,): the child cut origin in body r,
the rotation of the child cut frame in r and of the parent cut frame in k (row-major).
Scratch (per thread): ``P``, ``C`` (nq, 4, 4), ``AdP`` (nq, 6, 6), ``V``, ``A`` (nq, 6),
``T`` (4, 4), ``h`` (3, 16), ``Q`` (4, 1, nq); the forward dynamics uses the scratch of
:class:`.chain_model.ChainData`.
"""
from __future__ import annotations

import math

from ..friction.friction_kernels import friction_law
from ..numba_support.cache import kernel
from ..module_chain.chain_kernels import chain_dynamics, forward_flag
from ..module_chain.chain_kinematics import tree_state
from ..spatial.se3_kernels import matTvec, matvec, wrench_bias
from ..tree.tree_kernels import body_motion, body_poses
from ..status import INCONSISTENT, NONFINITE_RESULT, OK, PIN_SINGULAR

#: relative size of the 2 x 2 determinant below which a 4-bar's pin force is undetermined
SINGULAR_PIN = 1e-12


@kernel
def transmitted_wrenches(parent, M, AdP, V, A, ee, ee_map, fe, W, h):
    """Steps 1-2 of the module docstring for one row: ``W_i`` (nq, 6), the wrench body ``i``
    receives through its joint (body frame) without the loops' internal forces (eqs. 11-15)."""
    n = parent.shape[0]
    for i in range(n):
        matvec(M[i], A[i], W[i])
        matvec(M[i], V[i], h[0])
        wrench_bias(V[i], h[0], h[1])
        for k in range(6):
            W[i, k] += h[1, k]
    if ee >= 0:
        matvec(ee_map, fe, h[0])
        for k in range(6):
            W[ee, k] -= h[0, k]
    for i in range(n - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            matTvec(AdP[i], W[i], h[0])
            for k in range(6):
                W[p, k] += h[0, k]


@kernel
def pin_force(X, C, W, tau, lp, cut, tol, out):
    """Step 3 of the module docstring for one loop: the pin force ``f_P`` (3,) in the root frame
    into ``out[0:3]``, the pin point ``p`` into ``out[3:6]``, the residual of the three joint
    equations into ``out[6]`` (``out[7:16]``: scratch).  Returns OK, PIN_SINGULAR or INCONSISTENT."""
    r = lp[1]
    Cr = C[r]
    for a in range(3):
        out[3 + a] = Cr[a, 0] * cut[0] + Cr[a, 1] * cut[1] + Cr[a, 2] * cut[2] + Cr[a, 3]
    px, py, pz = out[3], out[4], out[5]
    jn = lp[8]                                        # plane normal: a revolute axis of the loop
    nx = C[jn, 0, 0] * X[jn, 0] + C[jn, 0, 1] * X[jn, 1] + C[jn, 0, 2] * X[jn, 2]
    ny = C[jn, 1, 0] * X[jn, 0] + C[jn, 1, 1] * X[jn, 1] + C[jn, 1, 2] * X[jn, 2]
    nz = C[jn, 2, 0] * X[jn, 0] + C[jn, 2, 1] * X[jn, 1] + C[jn, 2, 2] * X[jn, 2]
    nn = math.sqrt(nx * nx + ny * ny + nz * nz)
    nx, ny, nz = nx / nn, ny / nn, nz / nn
    if abs(nx) <= abs(ny) and abs(nx) <= abs(nz):      # e1 = n x (least aligned axis), e2 = n x e1
        e1x, e1y, e1z = 0.0, nz, -ny
    elif abs(ny) <= abs(nz):
        e1x, e1y, e1z = -nz, 0.0, nx
    else:
        e1x, e1y, e1z = ny, -nx, 0.0
    m = math.sqrt(e1x * e1x + e1y * e1y + e1z * e1z)
    e1x, e1y, e1z = e1x / m, e1y / m, e1z / m
    e2x, e2y, e2z = ny * e1z - nz * e1y, nz * e1x - nx * e1z, nx * e1y - ny * e1x
    a1, a2, y = out[7:10], out[10:13], out[13:16]
    n11 = n12 = n22 = r1 = r2 = yy = 0.0
    for jj in range(3):
        j, s = lp[2 + jj], float(lp[5 + jj])
        Cj, x = C[j], X[j]
        wx = Cj[0, 0] * x[0] + Cj[0, 1] * x[1] + Cj[0, 2] * x[2]     # omega_j, v_j (root frame)
        wy = Cj[1, 0] * x[0] + Cj[1, 1] * x[1] + Cj[1, 2] * x[2]
        wz = Cj[2, 0] * x[0] + Cj[2, 1] * x[1] + Cj[2, 2] * x[2]
        vx = Cj[0, 0] * x[3] + Cj[0, 1] * x[4] + Cj[0, 2] * x[5] + Cj[1, 3] * wz - Cj[2, 3] * wy
        vy = Cj[1, 0] * x[3] + Cj[1, 1] * x[4] + Cj[1, 2] * x[5] + Cj[2, 3] * wx - Cj[0, 3] * wz
        vz = Cj[2, 0] * x[3] + Cj[2, 1] * x[4] + Cj[2, 2] * x[5] + Cj[0, 3] * wy - Cj[1, 3] * wx
        ux, uy, uz = vx + wy * pz - wz * py, vy + wz * px - wx * pz, vz + wx * py - wy * px
        a1[jj] = s * (ux * e1x + uy * e1y + uz * e1z)
        a2[jj] = s * (ux * e2x + uy * e2y + uz * e2z)
        yj = -tau[j]
        for k in range(6):
            yj += x[k] * W[j, k]
        y[jj] = yj
        n11 += a1[jj] * a1[jj]
        n12 += a1[jj] * a2[jj]
        n22 += a2[jj] * a2[jj]
        r1 -= a1[jj] * yj
        r2 -= a2[jj] * yj
        yy += yj * yj
    det = n11 * n22 - n12 * n12
    if not det > SINGULAR_PIN * (n11 + n22) * (n11 + n22):
        return PIN_SINGULAR
    fa, fb = (n22 * r1 - n12 * r2) / det, (n11 * r2 - n12 * r1) / det
    res = 0.0
    for jj in range(3):
        e = a1[jj] * fa + a2[jj] * fb + y[jj]
        res += e * e
    out[6] = math.sqrt(res)
    out[0], out[1], out[2] = fa * e1x + fb * e2x, fa * e1y + fb * e2y, fa * e1z + fb * e2z
    if not out[6] <= tol * max(1.0, math.sqrt(yy)):
        return INCONSISTENT
    return OK


@kernel
def add_pin_force(C, W, lp, cut, f, WC, LAM):
    """Step 4 of the module docstring for one loop: ``W_j += s_j Ad(C_j)^T (p x f, f)`` for its
    three tree joints; the pin load on the child link in the child cut frame ``WC`` (6,) and the
    multipliers ``LAM`` (m,): the force in the parent cut frame, zero moments."""
    fx, fy, fz, px, py, pz = f[0], f[1], f[2], f[3], f[4], f[5]
    for jj in range(3):
        j, s = lp[2 + jj], float(lp[5 + jj])
        Cj = C[j]
        dx, dy, dz = px - Cj[0, 3], py - Cj[1, 3], pz - Cj[2, 3]
        mx, my, mz = dy * fz - dz * fy, dz * fx - dx * fz, dx * fy - dy * fx
        for a in range(3):
            W[j, a] += s * (Cj[0, a] * mx + Cj[1, a] * my + Cj[2, a] * mz)
            W[j, 3 + a] += s * (Cj[0, a] * fx + Cj[1, a] * fy + Cj[2, a] * fz)
    for side in range(2):                  # child cut frame (on r), parent cut frame (on k)
        Cb = C[lp[1 - side]]
        for a in range(3):
            # column a of R_body R_cut
            c0 = Cb[0, 0] * cut[3 + 9 * side + a] + Cb[0, 1] * cut[6 + 9 * side + a] + Cb[0, 2] * cut[9 + 9 * side + a]
            c1 = Cb[1, 0] * cut[3 + 9 * side + a] + Cb[1, 1] * cut[6 + 9 * side + a] + Cb[1, 2] * cut[9 + 9 * side + a]
            c2 = Cb[2, 0] * cut[3 + 9 * side + a] + Cb[2, 1] * cut[6 + 9 * side + a] + Cb[2, 2] * cut[9 + 9 * side + a]
            v = c0 * fx + c1 * fy + c2 * fz
            if side == 0:
                WC[a] = 0.0
                WC[3 + a] = v
            else:
                LAM[lp[9] + a] = v
    for a in range(3, lp[10]):
        LAM[lp[9] + a] = 0.0


@kernel
def joint_reactions(geo, mats, nud0, A, V, S, Wd, w, X, XD, F, FN, FE, ACC, parent, B, Xs, M, a0, ee, ee_map,
                    loops, cuts, actuated, friction, tol, W, WC, LAM, P, C, AdP, Vb, Ab, T, h, Q, status):
    """One public call over a batch: the forward dynamics (Algorithm 1, :func:`.chain_kernels.
    chain_dynamics` on its scratch ``A`` .. ``w``) of the actuator states ``X``, ``XD`` (B, n)
    under the forces ``F`` (B, n) and end-effector wrenches ``FE`` into ``ACC`` (B, n); per row
    the tree motion (:func:`.chain_kinematics.tree_state` into ``Q`` (4, 1, nq): positions,
    rates, accelerations, efforts) and the reactions (steps 1-4 of the module docstring, tree
    arrays ``Xs`` the screws, ``actuated`` (n,) their tree joints) into ``W`` (B, nq, 6), ``WC``
    (B, c, 6), ``LAM`` (B, m).  Returns the code with ``status = (code, row, module or loop)``;
    ``h[2, 6]`` holds the residual of an INCONSISTENT loop.

    Joint friction (``friction`` (nq, 5) rows, (0, 5): none): the dynamics runs under ``FN`` =
    ``F - u_f(X, XD)`` (:mod:`..module_chain.chain_friction_kernels`; ``FN`` is ``F`` without
    friction) and every tree joint carries the effort ``tau_j = (F at an actuated joint) -
    tau_f,j(qd_j)``: the component of its transmitted wrench along its screw, which the pin
    force of step 3 balances with."""
    code = chain_dynamics(forward_flag(X), geo, mats, nud0, A, V, S, Wd, w, X, XD, FN, FE, ACC, status)
    if code != OK:
        return code
    nq = parent.shape[0]
    for row in range(X.shape[0]):
        code = tree_state(geo, X[row:row + 1], XD[row:row + 1], ACC[row:row + 1], Q[0], Q[1], Q[2], S, status)
        if code != OK:
            status[1] = row
            return code
        q, qd, qdd, tau = Q[0, 0], Q[1, 0], Q[2, 0], Q[3, 0]
        for j in range(nq):
            tau[j] = 0.0
        for k in range(actuated.shape[0]):
            tau[actuated[k]] = F[row, k]
        for j in range(friction.shape[0]):
            tau[j] -= friction_law(friction[j], qd[j])[0]
        body_poses(parent, Xs, B, q, P, C, AdP, T)                   # the tree's forward passes
        body_motion(parent, Xs, AdP, qd, qdd, a0, Vb, Ab, h[0])
        fe = FE[row if FE.shape[0] > 1 else 0]
        transmitted_wrenches(parent, M, AdP, Vb, Ab, ee, ee_map, fe, W[row], h)
        for c in range(loops.shape[0]):
            code = pin_force(Xs, C, W[row], tau, loops[c], cuts[c], tol, h[2])
            if code != OK:
                status[0], status[1], status[2] = code, row, c
                return code
            add_pin_force(C, W[row], loops[c], cuts[c], h[2], WC[row, c], LAM[row])
        for i in range(nq):
            for k in range(6):
                if not math.isfinite(W[row, i, k]):
                    status[0], status[1], status[2] = NONFINITE_RESULT, row, -1
                    return NONFINITE_RESULT
    return OK
