"""The constraint embedding ``G`` of a parallel robot compiled (the numpy route, its check:
:func:`.regressor.reference_task_embedding`): one call over a batch of inverse-kinematics solutions, per
sample and limb the limb kernels' ``K_l = H_l F_l`` (paper 001 eq. 28) on the packed limb model
and the calling thread's scratch (:class:`..pkm.limb_tables.LimbTables`,
:func:`..pkm.robot_kernels.model_views` / ``data_views``)."""
from __future__ import annotations

from ..limb.limb_kernels import limb_jacobians, limb_state
from ..limb.limb_layout import LD_K
from ..numba_support.cache import kernel
from ..pkm.robot_kernels import data_views, model_views
from ..status import OK


@kernel
def task_embedding_rows(fm, im, hm, fd, idt, hd, toff, theta, rows, G, status):
    """``G`` (N, n_q, delta) of the flat limb joints ``theta`` (N n,) (sample ``i``: entries
    ``i n .. (i+1) n``, ``n = toff[-1]``): per sample ``i`` and limb ``l``
    :func:`~..limb.limb_kernels.limb_state` and :func:`~..limb.limb_kernels.limb_jacobians` at
    the limb's joints, then row ``j`` of ``K_l`` (n_l, delta) (eq. 28) into ``G[i, rows[toff[l]
    + j]]`` (``rows`` (n,) the tree row of each flat joint, -1: none; the other rows of ``G`` are
    left as they are).  ``status`` (N, 2): OK, or the first limb's status (SINGULAR) and that
    limb (the sample's rows of later limbs are not written)."""
    n = toff[len(toff) - 1]
    for i in range(G.shape[0]):
        status[i, 0], status[i, 1] = OK, -1
        for l in range(len(toff) - 1):
            lm = model_views(fm, im, hm, l)
            ld, _ = data_views(fd, idt, hd, l)
            a, b = toff[l], toff[l + 1]
            limb_state(lm, ld, theta[i * n + a:i * n + b])
            st, _ = limb_jacobians(lm, ld, -1.0, False)
            if st != OK:
                status[i, 0], status[i, 1] = st, l
                break
            K = ld[LD_K]
            for j in range(b - a):
                r = rows[a + j]
                if r >= 0:
                    for c in range(G.shape[2]):
                        G[i, r, c] = K[j, c]
