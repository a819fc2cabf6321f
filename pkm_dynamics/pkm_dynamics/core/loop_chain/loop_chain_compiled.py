"""The thin Python layer of the compiled route of a chain of loops (:mod:`.loop_chain_kernels`):
the limb's model packed once when the robot is built (:class:`~..pkm.limb_tables.LimbTables`,
shared by every call; its scratch per thread), one kernel call per batch, fresh output arrays.
A row whose kernel stops with a status (:mod:`..status`: a loop beyond the Newton iterations of
a direct closure, another assembly branch, a singular ``G_y``) is handed to the reference route
(:class:`~..pkm.limb_chain.LimbChainRobot`), which continues from the reference configuration or
raises the named exception."""
from __future__ import annotations

import numpy as np

from ..pkm.limb_tables import LimbTables
from ..status import OK
from .loop_chain_kernels import MODE_FD, MODE_ID, MODE_MASS, MODE_POSE, MODE_STATE, loop_chain_calls

class CompiledLoopChain:
    """The compiled calls of the constraint-embedding route ``route`` (a
    :class:`~..pkm.limb_chain.LimbChainRobot`): the same coordinates, loop closure tolerance,
    assembly branch and joint friction.  Methods take a batch (B, n) and return (B, ...), rows
    the kernel could not serve computed by ``route``."""

    def __init__(self, route):
        limb = route.limb
        self.route = route
        self.tables = LimbTables.build((limb,), route.max_iter)
        whole = list(limb.whole_index)
        self.cols = np.array([whole.index(route.tree.joint_index(nm)) for nm in route.actuated_joints],
                             dtype=np.int64)
        self.cols.setflags(write=False)
        self.branch = np.array(route.branch, dtype=float)
        self.branch.setflags(write=False)
        self.nq = limb.n
        if route.friction is None:
            self.table, self.with_friction = np.zeros((limb.n, 5)), False
        else:
            self.table, self.with_friction = np.ascontiguousarray(route.friction.table[limb.whole_index]), True
        self.table.setflags(write=False)

    def _call(self, mode, X, XD, Z, W):
        """``(status, vec, mat, tree, pose, jac)`` of :func:`.loop_chain_kernels.loop_chain_calls`."""
        X, XD, Z = (np.array(v, dtype=float, ndmin=2, order="C") for v in (X, XD, Z))   # one signature
        B, n = X.shape
        fd, idt, hd = self.tables.data()
        with_wrench = W is not None
        W = np.array(np.broadcast_to(W, (B, 6)) if with_wrench else np.zeros((1, 6)), dtype=float, order="C")
        status = np.zeros(B, dtype=np.int64)
        vec, mat = np.zeros((B, n)), np.zeros((B, n, n))
        tree = np.zeros((B, 3, self.nq))
        pose, jac = (np.zeros((B, 4, 4)), np.zeros((B, 6, n))) if mode == MODE_POSE else (mat, mat)
        loop_chain_calls(self.tables.fm, self.tables.im, self.tables.hm, fd, idt, hd, self.cols, self.route.tol,
                         self.branch, mode, X, XD, Z, W, with_wrench, self.table, self.with_friction,
                         np.zeros((self.nq, 6, n)), np.zeros(self.nq), vec, mat, tree, pose, jac, status)
        return status, vec, mat, tree, pose, jac

    @staticmethod
    def _rows(status):
        return np.flatnonzero(status != OK)

    def inverse_dynamics(self, X, XD, XDD, W=None) -> np.ndarray:
        """``u`` (B, n) (eqs. 20, 36-37); ``W`` (6,) or (B, 6) the end-effector wrench."""
        status, u, *_ = self._call(MODE_ID, X, XD, XDD, W)
        for r in self._rows(status):
            u[r] = self.route.inverse_dynamics(X[r], XD[r], XDD[r], _row(W, r))
        return u

    def forward_dynamics(self, X, XD, F, W=None) -> np.ndarray:
        """``xdd`` (B, n) from ``H^T M H xdd = f - H^T tau(xdd = 0)``."""
        status, xdd, *_ = self._call(MODE_FD, X, XD, F, W)
        for r in self._rows(status):
            xdd[r] = self.route.forward_dynamics(X[r], XD[r], F[r], _row(W, r))
        return xdd

    def mass_and_bias(self, X, XD, W=None) -> tuple:
        """``(H^T M H, H^T tau(xdd = 0))`` (B, n, n), (B, n) in the coordinates' order."""
        status, b, M, *_ = self._call(MODE_MASS, X, XD, X, W)
        for r in self._rows(status):
            M[r], b[r] = self.route.mass_and_bias(X[r], XD[r], _row(W, r))
        return M, b

    def tree_state(self, X, XD, XDD) -> tuple:
        """``(theta, thetad, thetadd)`` (B, n_l) each (eq. 20)."""
        status, _, _, tree, *_ = self._call(MODE_STATE, X, XD, XDD, None)
        for r in self._rows(status):
            tree[r] = self.route.tree_state(X[r], XD[r], XDD[r])
        return tree[:, 0], tree[:, 1], tree[:, 2]

    def pose_and_jacobian(self, x) -> tuple:
        """The end-effector pose (4, 4), its Jacobian ``J_E H`` (6, n) (body-fixed twist per unit
        coordinate rate) and ``theta`` (n_l,) at one state ``x`` (n,); ``None`` for the first two
        where the kernel stops (the caller takes the reference route)."""
        X = np.asarray(x, dtype=float).reshape(1, -1)
        status, _, _, tree, pose, jac = self._call(MODE_POSE, X, X, X, None)
        if status[0] != OK:
            return None, None, None
        return pose[0], jac[0], tree[0, 0]


def _row(W, r):
    if W is None:
        return None
    W = np.asarray(W, dtype=float)
    return W if W.ndim == 1 else W[r]
