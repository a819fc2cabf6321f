"""The thin Python layer of the compiled route of a chain of loops (:mod:`.loop_chain_kernels`):
the limb's model packed once when the robot is built (:class:`~..pkm.limb_tables.LimbTables`,
shared by every call; its scratch per thread), one kernel call per batch, fresh output arrays.
A row whose kernel stops with a status (:mod:`..status`: a loop beyond the Newton iterations of
a direct closure, another assembly branch, a singular ``G_y``) is handed to the reference route
(:class:`~..pkm.limb_chain.LimbChainRobot`), which continues from the reference configuration or
raises the named exception."""
from __future__ import annotations

import threading

import numpy as np

from ..errors import PkmDynamicsError
from ..numba_support.entry_points import EntryPoints
from ..pkm.limb_tables import LimbTables
from ..status import BAD_INPUT, OK
from .loop_chain_kernels import MODE_FD, MODE_HYBRID, MODE_ID, MODE_MASS, MODE_POSE, MODE_STATE, loop_chain_calls

#: samples of the closed configurations tabulated over the stroke of an FC's independent joint
#: (the closure's start, :func:`.loop_chain_kernels.start_configuration`): from the cubic
#: interpolant one Newton step closes the loop to round-off (``|g|`` below
#: :data:`.loop_chain_kernels.ROUND_OFF` ``tol``: no polishing step)
START_SAMPLES = 129

class CompiledLoopChain:
    """The compiled calls of the constraint-embedding route ``route`` (a
    :class:`~..pkm.limb_chain.LimbChainRobot`): the same coordinates, loop closure tolerance,
    assembly branch and joint friction.  Methods take a batch (B, n) and return (B, ...), rows
    the kernel could not serve computed by ``route``.  ``bounds`` (``floor``, ``ceiling``) (n,):
    the coordinates' limits the public calls check in the kernel (default: none)."""

    def __init__(self, route, bounds=None):
        limb = route.limb
        self.route = route
        self._local = threading.local()
        self.tables = LimbTables.build((limb,), route.max_iter)
        whole = list(limb.whole_index)
        self.cols = np.array([whole.index(route.tree.joint_index(nm)) for nm in route.actuated_joints],
                             dtype=np.int64)
        self.cols.setflags(write=False)
        self.branch = np.array(route.branch, dtype=float)
        self.branch.setflags(write=False)
        self.nq, self.nc = limb.n, len(route.actuated_joints)      # tree joints, coordinates
        self.floor, self.ceiling = _read_only(*(np.array(b, dtype=float) for b in
                                                (bounds or (np.full(self.nc, -np.inf), np.full(self.nc, np.inf)))))
        self.na = len(route.description.actuated_joints)     # the coordinates before the passive joints
        if route.friction is None:
            self.table, self.with_friction = np.zeros((limb.n, 5)), False
        else:
            self.table, self.with_friction = np.ascontiguousarray(route.friction.table[limb.whole_index]), True
        self.table.setflags(write=False)
        # without tables (to sample them), then with them; read-only both: one kernel signature
        self.seeds, self.tabled = _read_only(np.zeros((0, 1 + 2 * START_SAMPLES, limb.n)),
                                             -np.ones(max(len(limb.loops), 1), dtype=np.int64))
        self.seeds, self.tabled = _read_only(*self._start_tables())

    def _start_tables(self) -> tuple:
        """``(seeds, tabled)`` of :func:`.loop_chain_kernels.start_configuration`: for every FC
        whose one independent joint is a coordinate with limits, the closed configurations and
        their slopes ``d theta / d q`` (the FC's column of ``H``) at :data:`START_SAMPLES` values
        across its stroke (the other coordinates mid-stroke), closed from the reference
        configuration, the angles unwrapped along the stroke; over the part of the stroke where
        they close when the closure from the reference configuration fails somewhere
        (:meth:`_stroke_samples`).  An FC without two such samples keeps the reference
        configuration as its start."""
        limb, lo, hi = self.route.limb, self.route.limb.tree.lower, self.route.limb.tree.upper
        coordinate = {int(c): k for k, c in enumerate(self.cols)}
        tabled = -np.ones_like(self.tabled)
        lc, hc = lo[self.cols], hi[self.cols]
        mid = np.where(np.isfinite(lc) & np.isfinite(hc), 0.5 * (np.nan_to_num(lc) + np.nan_to_num(hc)), 0.0)
        seeds = []
        for i, lp in enumerate(limb.loops):
            j = int(lp.independent[0])
            if len(lp.independent) != 1 or j not in coordinate or not np.isfinite(lo[j]) or not np.isfinite(hi[j]):
                continue
            closed = self._stroke_samples(mid, coordinate[j], lo[j], hi[j])
            if closed is None:
                continue
            (first, last), theta, slope = closed
            seed = np.zeros((1 + 2 * START_SAMPLES, limb.n))
            seed[0, :2] = first, (last - first) / (START_SAMPLES - 1)
            seed[1::2], seed[2::2] = np.unwrap(theta, axis=0), slope
            tabled[i] = len(seeds)
            seeds.append(seed)
        return (np.stack(seeds) if seeds else self.seeds), tabled

    def _stroke_samples(self, mid, k: int, lo: float, hi: float):
        """``((first, last), theta, slope)``: the closed configurations (START_SAMPLES, n_l) and
        their rates along coordinate ``k`` at :data:`START_SAMPLES` values of it from ``first``
        to ``last`` (the other coordinates at ``mid`` (n,)), closed by the kernel from the
        reference configuration: over the stroke ``[lo, hi]``, or where the closure fails
        somewhere on it, over the longest run of samples it closes (its start beyond them is
        extrapolated, Newton then closes the loop); None when fewer than two close."""
        X = np.tile(mid, (START_SAMPLES, 1))
        X[:, k] = np.linspace(lo, hi, START_SAMPLES)
        status, tree = self._closed(X)
        if (status != OK).any():
            ok = np.concatenate([[False], status == OK, [False]])
            edges = np.flatnonzero(ok[1:] != ok[:-1]).reshape(-1, 2)       # runs [start, end) of OK
            if not len(edges):
                return None
            start, end = edges[np.argmax(edges[:, 1] - edges[:, 0])]
            if end - start < 2:
                return None
            lo, hi = X[start, k], X[end - 1, k]
            X[:, k] = np.linspace(lo, hi, START_SAMPLES)
            status, tree = self._closed(X)
            if (status != OK).any():
                return None
        return (lo, hi), tree[:, 0], tree[:, 1]

    def _closed(self, X) -> tuple:
        """``(status, tree)`` (B,), (B, 3, n_l): :meth:`tree_state` at ``X`` (B, n) with unit
        rates, a row the reference route refuses too left with its kernel status."""
        status, _, _, tree, *_ = self._call(MODE_STATE, X, np.ones_like(X), np.zeros_like(X), None)
        for r in self._rows(status):
            try:
                tree[r] = self.route.tree_state(X[r], np.ones(X.shape[1]), np.zeros(X.shape[1]))
            except PkmDynamicsError:
                continue
            status[r] = OK
        return status, tree

    def _scratch(self, n: int) -> tuple:
        """The calling thread's scratch of the kernel (allocated on its first call): ``T`` (n_l, 6,
        n), ``tf`` (n_l,), a zero wrench (1, 6), an empty (0, n, n) for the unused outputs, the
        outputs of one state a call does not return (``status`` (1,), ``tree`` (1, 3, n_l),
        ``mat`` (1, n, n)) and the thread's kernel entry points
        (:class:`~..numba_support.entry_points.EntryPoints`)."""
        d = getattr(self._local, "scratch", None)
        if d is None:
            d = self._local.scratch = (np.zeros((self.nq, 6, n)), np.zeros(self.nq), np.zeros((1, 6)),
                                       np.zeros((0, n, n)), np.zeros(1, dtype=np.int64), np.zeros((1, 3, self.nq)),
                                       np.zeros((1, n, n)), EntryPoints())
        return d

    def _call(self, mode, X, XD, Z, W, check=False):
        """``(status, vec, mat, tree, pose, jac)`` of :func:`.loop_chain_kernels.loop_chain_calls`
        (``check``: the inputs checked there, BAD_INPUT at a refused row);
        for one state of FD, ID or the hybrid dynamics ``status``, ``mat`` and ``tree`` are the
        thread's scratch (valid until its next call)."""
        X, XD, Z = _batch(X), _batch(XD), _batch(Z)
        B, n = X.shape
        fd, idt, hd = self.tables.data()
        T, tf, no_wrench, empty, status1, tree1, mat1, entries = self._scratch(n)
        with_wrench = W is not None
        W = np.array(np.broadcast_to(W, (B, 6)), dtype=float, order="C") if with_wrench else no_wrench
        vec = np.zeros((B, n))
        if B == 1 and mode in (MODE_FD, MODE_ID, MODE_HYBRID):
            status, tree, mat = status1, tree1, mat1 if mode != MODE_ID else empty
        else:
            status, tree = np.zeros(B, dtype=np.int64), np.zeros((B, 3, self.nq))
            mat = np.zeros((B, n, n)) if mode in (MODE_FD, MODE_MASS, MODE_HYBRID) else empty
        pose, jac = (np.zeros((B, 4, 4)), np.zeros((B, 6, n))) if mode == MODE_POSE else (empty, empty)
        entries.run(loop_chain_calls, self.tables.fm, self.tables.im, self.tables.hm, fd, idt, hd, self.cols,
                    self.route.tol, self.branch, self.seeds, self.tabled, mode, self.na, check, self.floor,
                    self.ceiling, X, XD, Z, W, with_wrench,
                    self.table, self.with_friction, T, tf, vec, mat, tree, pose, jac, status)
        return status, vec, mat, tree, pose, jac

    @staticmethod
    def _rows(status, refuse=None):
        """The rows the kernel stopped at (``status`` (B,) not OK); ``refuse()`` (it raises the
        named error: the caller's checks) first when one of them is BAD_INPUT."""
        if len(status) == 1:                     # one state: no array reduction (microseconds)
            rows = () if status[0] == OK else (0,)
        else:
            rows = np.flatnonzero(status != OK)
        if refuse is not None and len(rows) and (status[rows] == BAD_INPUT).any():
            refuse()
        return rows

    def inverse_dynamics(self, X, XD, XDD, W=None, refuse=None) -> np.ndarray:
        """``u`` (B, n) (eqs. 20, 36-37); ``W`` (6,) or (B, 6) the end-effector wrench."""
        status, u, *_ = self._call(MODE_ID, X, XD, XDD, W, refuse is not None)
        for r in self._rows(status, refuse):
            u[r] = self.route.inverse_dynamics(X[r], XD[r], XDD[r], _row(W, r))
        return u

    def forward_dynamics(self, X, XD, F, W=None, refuse=None) -> np.ndarray:
        """``xdd`` (B, n) from ``H^T M H xdd = f - H^T tau(xdd = 0)``; ``F`` (B, n), or (B, na)
        the actuators' (no effort at the passive joints)."""
        status, xdd, *_ = self._call(MODE_FD, X, XD, F, W, refuse is not None)
        for r in self._rows(status, refuse):
            f = np.zeros(self.nc)
            f[:np.shape(F)[-1]] = F[r]
            xdd[r] = self.route.forward_dynamics(X[r], XD[r], f, _row(W, r))
        return xdd

    def hybrid_dynamics(self, X, XD, XDD, W=None, refuse=None) -> tuple:
        """``(u, qdd_p)`` (B, na), (B, n - na): Featherstone's hybrid dynamics of the first ``na``
        coordinates' accelerations ``XDD`` (B, na) (:func:`.loop_chain_kernels.hybrid_split`;
        rows the kernel stops at by :func:`hybrid_split` of the reference route's ``H^T M H``)."""
        status, out, *_ = self._call(MODE_HYBRID, X, XD, XDD, W, refuse is not None)
        for r in self._rows(status, refuse):
            out[r] = np.concatenate(hybrid_split(*self.route.mass_and_bias(X[r], XD[r], _row(W, r)), XDD[r]))
        return out[:, :self.na], out[:, self.na:]

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


def hybrid_split(Mt, b, xdd) -> tuple:
    """Featherstone's hybrid dynamics in numpy (the reference of
    :func:`.loop_chain_kernels.hybrid_split`): ``M_t = H^T M H`` (..., n, n) and ``b = H^T
    tau(xdd = 0)`` (..., n) split into the actuated (a: the first ``na``, the size of ``xdd``
    (..., na)) and passive (p) coordinates: ``M_pp qdd_p = -b_p - M_pa xdd`` and
    ``u = M_aa xdd + M_ap qdd_p + b_a``.  Returns ``(u, qdd_p)``."""
    a = np.shape(xdd)[-1]
    rhs = -b[..., a:] - np.einsum("...ij,...j->...i", Mt[..., a:, :a], xdd)
    qdd_p = np.linalg.solve(Mt[..., a:, a:], rhs[..., None])[..., 0]
    u = np.einsum("...ij,...j->...i", Mt[..., :a, :a], xdd) + np.einsum("...ij,...j->...i", Mt[..., :a, a:], qdd_p)
    return u + b[..., :a], qdd_p


def _batch(v) -> np.ndarray:
    """``v`` as a writable C-contiguous float array (B, n) (the kernel's one signature): itself
    where it is one, else a copy."""
    if type(v) is np.ndarray and v.ndim == 2 and v.dtype == np.float64 and v.flags.c_contiguous \
            and v.flags.writeable:
        return v
    return np.array(v, dtype=float, ndmin=2, order="C")


def _read_only(*arrays) -> tuple:
    for a in arrays:
        a.setflags(write=False)
    return arrays


def _row(W, r):
    if W is None:
        return None
    W = np.asarray(W, dtype=float)
    return W if W.ndim == 1 else W[r]
