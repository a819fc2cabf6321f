"""Re-selection of a loop's independent coordinates at a configuration (paper 001 Remarks 2-3).

The partition ``theta_lambda = (y, q)`` of every FC (eq. 16) is chosen once, at the zero
configuration, for conditioning (:func:`.limb_model._select_coordinates`).  The ``q`` are local
coordinates on the loop's solution variety (Remark 2): where the loop moves to a configuration
at which ``G_y`` of that partition is singular (e.g. a 4-bar whose chosen independent joint
reaches an extremum: the links it does not drive align) while ``G`` keeps full rank, the
partition fails although the loop is not singular -- Algorithm 2 asks for a ``q`` beyond its
extremum, ``H`` (eq. 18) grows without bound.  Remark 3: another choice of ``G_y`` is well
conditioned there; QR with column pivoting of ``G`` picks well-conditioned dependent columns.

:func:`partition_at` returns the limb whose loops use, where ``kappa(G_y)`` of the load-time
partition exceeds a level, the partition with well-conditioned ``G_y`` at that configuration.
Everything partition-free (``K = H F``, eq. 28; the rates, ``J_IK``, the dynamics) is unchanged
by the switch; ``H``, ``F`` and ``q`` follow the returned limb's ``independent``.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.linalg

from ..status import LOOP_SINGULARITY_THRESHOLD


def resolution_condition(Gy: np.ndarray) -> float:
    """``kappa(G_y)`` (ratio of extreme singular values; inf when singular, 1 when empty)."""
    if Gy.size == 0:
        return 1.0
    s = np.linalg.svd(Gy, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else np.inf


def best_partition(lp, G: np.ndarray):
    """The partition of the FC ``lp`` (:class:`~.limb_model.LoopGroup`) with well-conditioned
    ``G_y`` at the configuration of its Jacobian ``G`` (m, n_l) (Remark 3): the dependent columns
    are the first ``r`` pivots of a column-pivoted QR of the selected rows ``G[rows][:, joints]``.
    Returns ``(LoopGroup, kappa(G_y))``."""
    Gl = G[lp.rows][:, lp.joints]
    r = len(lp.rows)
    _, _, piv = scipy.linalg.qr(Gl, mode="economic", pivoting=True)
    dep = np.sort(piv[:r])
    ind = np.array([k for k in range(len(lp.joints)) if k not in set(dep.tolist())], dtype=int)
    new = replace(lp, dependent=lp.joints[dep], independent=lp.joints[ind])
    return new, resolution_condition(Gl[:, dep])


def partition_at(limb, state, level: float | None = LOOP_SINGULARITY_THRESHOLD):
    """The limb (:class:`~.limb_model.Limb`) to use at ``state = limb_state(limb, theta)``: each
    loop whose ``kappa(G_y)`` exceeds ``level`` takes :func:`best_partition` there when that is
    better conditioned; ``limb`` itself when no loop changes (``level`` None: never).  The limb's
    generalized coordinates ``independent`` (eq. 15) follow the loops'."""
    if level is None:
        return limb
    loops, changed = [], False
    for lp, (_, G, _) in zip(limb.loops, state[2]):
        Gr = G[lp.rows]
        k = resolution_condition(Gr[:, lp.dependent])
        if k > level:
            new, k_new = best_partition(lp, G)
            if k_new < k:
                lp, changed = new, True
        loops.append(lp)
    if not changed:
        return limb
    in_loop = {int(j) for lp in loops for j in lp.joints}
    indep = sorted((set(range(limb.n)) - in_loop) | {int(j) for lp in loops for j in lp.independent})
    return replace(limb, loops=tuple(loops), independent=np.array(indep, dtype=int))


def same_partition(a, b) -> bool:
    """Whether the limbs ``a`` and ``b`` (one limb, two partitions) resolve every loop alike."""
    return all(np.array_equal(x.dependent, y.dependent) for x, y in zip(a.loops, b.loops))
