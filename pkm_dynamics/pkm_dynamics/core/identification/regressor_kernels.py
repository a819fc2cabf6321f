"""The spanning tree's regressor compiled (the algorithm and notation of :mod:`.tree_regressor`,
its numpy reference route): one call over a batch of tree motions, loops over bodies with
scalar arithmetic inside, on the flat tree model and scratch of :mod:`..tree.tree_kernels`
(forward pass :func:`~..tree.tree_kernels.forward_kinematics` and
:func:`~..tree.tree_kernels.motion`, gravity in the base acceleration ``a0``)."""
from __future__ import annotations

from ..numba_support.cache import kernel
from ..tree.tree_kernels import forward_kinematics, motion


@kernel
def motion_regressor_into(a, K, row):
    """``K(a)`` (module :mod:`.tree_regressor`) of ``a`` (6,) into rows ``row..row+5`` of ``K``
    (., 10) (rows written in full)."""
    al0, al1, al2, b0, b1, b2 = a[0], a[1], a[2], a[3], a[4], a[5]
    for r in range(6):
        for c in range(10):
            K[row + r, c] = 0.0
    # top: -[beta]x h + L(alpha) pi_I
    K[row + 0, 2], K[row + 0, 3] = b2, -b1
    K[row + 1, 1], K[row + 1, 3] = -b2, b0
    K[row + 2, 1], K[row + 2, 2] = b1, -b0
    K[row + 0, 4], K[row + 0, 5], K[row + 0, 7] = al0, al1, al2
    K[row + 1, 5], K[row + 1, 6], K[row + 1, 8] = al0, al1, al2
    K[row + 2, 7], K[row + 2, 8], K[row + 2, 9] = al0, al1, al2
    # bottom: beta m + [alpha]x h
    K[row + 3, 0], K[row + 4, 0], K[row + 5, 0] = b0, b1, b2
    K[row + 3, 2], K[row + 3, 3] = -al2, al1
    K[row + 4, 1], K[row + 4, 3] = al2, -al0
    K[row + 5, 1], K[row + 5, 2] = -al1, al0


@kernel
def body_regressor_into(V, A, F, KV):
    """``A_i = K(Vdot) - ad(V)^T K(V)`` (6, 10) into ``F``; ``KV`` (6, 10) scratch.  With
    ``ad(V)^T = -[[w]x, [v]x], [0, [w]x]]`` the second term is ``[[w]x KV_top + [v]x KV_bot],
    [[w]x KV_bot]]`` (cross products column by column)."""
    motion_regressor_into(A, F, 0)
    motion_regressor_into(V, KV, 0)
    w0, w1, w2, v0, v1, v2 = V[0], V[1], V[2], V[3], V[4], V[5]
    for c in range(10):
        t0, t1, t2 = KV[0, c], KV[1, c], KV[2, c]
        s0, s1, s2 = KV[3, c], KV[4, c], KV[5, c]
        F[0, c] += w1 * t2 - w2 * t1 + v1 * s2 - v2 * s1
        F[1, c] += w2 * t0 - w0 * t2 + v2 * s0 - v0 * s2
        F[2, c] += w0 * t1 - w1 * t0 + v0 * s1 - v1 * s0
        F[3, c] += w1 * s2 - w2 * s1
        F[4, c] += w2 * s0 - w0 * s2
        F[5, c] += w0 * s1 - w1 * s0


@kernel
def tree_regressor_rows(model, data, Q, QD, QDD, a0, Y, F, KV, G):
    """``Y`` (B, n, 10 n) of the tree motions ``Q, QD, QDD`` (B, n) (written in full): forward
    pass, then per body its regressor carried to every joint of its support by ``Ad^T``
    (:mod:`.tree_regressor`); ``F``, ``KV``, ``G`` (6, 10) scratch."""
    parent, X = model[0], model[1]
    n = parent.shape[0]
    for r in range(Q.shape[0]):
        forward_kinematics(model, data, Q[r])
        motion(model, data, QD[r], QDD[r], a0)
        Ad, V, A = data[2], data[3], data[4]
        for j in range(n):
            for c in range(10 * n):
                Y[r, j, c] = 0.0
        for i in range(n):
            body_regressor_into(V[i], A[i], F, KV)
            j = i
            while j >= 0:
                for c in range(10):
                    s = 0.0
                    for k in range(6):
                        s += X[j, k] * F[k, c]
                    Y[r, j, 10 * i + c] = s
                for a in range(6):                      # G = Ad_j^T F: the wrench to the parent
                    for c in range(10):
                        s = 0.0
                        for k in range(6):
                            s += Ad[j, k, a] * F[k, c]
                        G[a, c] = s
                for a in range(6):
                    for c in range(10):
                        F[a, c] = G[a, c]
                j = parent[j]
