"""A module chain (crane, serial-parallel arm) solved as one hybrid limb with a free end
effector: the constraint-embedding route of paper 001 (Secs. 3.4-5.2), independent of the
analytic module-chain algorithms of paper 000 (:mod:`.module_chain`); both must agree.

Loop closure keeps the *assembly branch of the reference configuration*: the zero
configuration of the description's tree is an assembled pose (the parser checks it), and each
loop's two assembly branches (a 4-bar's triangle and its mirror image) are told apart by the
sign of ``det G_y`` of the loop (eq. 16), which can only change through a loop singularity
(``G_y`` singular).  A Newton run that lands on the other branch is rejected and the state is
reached by continuation from the reference configuration instead.
"""
from __future__ import annotations

import numpy as np

from ..description.robot_description import RobotDescription, parse_description
from ..friction.friction_model import friction_torques
from ..errors import ConvergenceError, DescriptionError, SingularityError
from ..limb.limb_kinematics import limb_state
from ..limb.limb_model import build_limbs
from ..limb.loop_constraints import _resolve, constraint_resolution, loop_acceleration_bias, solve_loop_constraints
from ..spatial.se3 import Ad_inv
from ..tree.tree_dynamics import crba, rnea

#: continuation step counts tried, in order, from the reference configuration
CONTINUATION_STEPS = (4, 16, 64)


def loop_branches(limb, constraints) -> np.ndarray:
    """Assembly branch of each FC (n_loops,): ``sign(det G_y)`` (eq. 16) of its selected rows,
    from ``constraints`` = ``limb_state(limb, theta)[2]``; 0 at a loop singularity."""
    return np.array([np.sign(np.linalg.det(_resolve(lp, G)[0])) for lp, (_, G, _) in zip(limb.loops, constraints)])


def close_loops_on_branch(limb, q, start, branch, tol: float, max_iter: int, return_state: bool = False):
    """``theta = psi(q)`` (n_l,) by Algorithm 2 on the assembly branch ``branch`` (n_loops,) of
    the reference configuration ``theta = 0``.

    First a Newton run from ``start`` (n_l,) (the previous solution: cheap along a motion);
    if it fails or ends on another branch, continuation from the reference configuration in
    :data:`CONTINUATION_STEPS` equal steps of ``q``, each step checked against ``branch``.
    Raises :class:`ConvergenceError` naming the loop when no continuation stays on the
    branch (the state is beyond a loop singularity).  ``return_state``: ``(theta,
    limb_state(limb, theta))``."""
    try:
        th, _, st = solve_loop_constraints(limb, start, q, tol, max_iter, return_state=True)
        if np.array_equal(loop_branches(limb, st[2]), branch):
            return (th, st) if return_state else th
    except (ConvergenceError, SingularityError):
        pass
    zero = np.zeros(limb.n)
    q0 = zero[limb.independent]
    for steps in CONTINUATION_STEPS:
        th = zero
        try:
            for k in range(1, steps + 1):
                th, _, st = solve_loop_constraints(limb, th, q0 + (q - q0) * k / steps, tol, max_iter,
                                                   return_state=True)
                flipped = np.flatnonzero(loop_branches(limb, st[2]) != branch)
                if flipped.size:
                    raise ConvergenceError(f"{limb.name} loop {limb.loops[flipped[0]].names}: "
                                           f"left the assembly branch of the reference configuration")
            return (th, st) if return_state else th
        except (ConvergenceError, SingularityError) as err:
            last = err
    raise ConvergenceError(f"{last}; the loops cannot be closed on the branch of the reference "
                           f"configuration at q = {np.asarray(q).tolist()} (beyond a loop singularity?)")


class LimbChainRobot:
    """A robot without platform (a module chain, a serial-parallel arm) treated as one hybrid
    limb with a free end effector (paper 001 Secs. 3.4-5.2): the constraint-embedding route.

    The limb's generalized coordinates are the actuated joints (they are made the independent
    coordinates of their loops), so ``x`` are the actuator values, as for
    :class:`~.module_chain_robot.ModuleChainRobot`.  ``thetad = H xd``, ``thetadd = H xdd + Hdot xd``
    (eq. 20); EOM (eqs. 36-37): ``H^T M H xdd + H^T (rnea(theta, thetad, Hdot xd) ) = f``
    since the rows of ``H`` of the actuated joints form the identity.  Methods take one state
    or a batch (leading axis).  ``coordinates``: the tree joints that are the generalized
    coordinates (default the actuated joints; with passive joints, the actuated then the passive
    ones: ``f`` then holds their generalized forces, zero for a passive joint).  ``warm_start``:
    the loop closure starts from the previous call's solution (cheap along a motion; the result
    then depends on the call history to round-off);
    False: from the reference configuration at every call (reproducible, and nothing is
    written on the object: safe for concurrent calls)."""

    #: its ``x`` are the generalized coordinates' values (the :class:`~..interface.Robot` word)
    state_space = "actuator"

    def __init__(self, description, gravity=None, tol: float = 1e-12, max_iter: int = 50,
                 warm_start: bool = True, coordinates=None):
        desc = description if isinstance(description, RobotDescription) else \
            parse_description(description, gravity)
        self.description = desc
        self.tree = desc.tree
        names = tuple(desc.actuated_joints if coordinates is None else coordinates)
        (self.limb,) = build_limbs(desc, independent=names)
        idx = [self.tree.joint_index(n) for n in names]
        if list(self.limb.independent) != sorted(idx):
            raise DescriptionError(f"robot '{desc.name}': the joints {list(names)} are not a set of "
                                   "independent coordinates")
        self._order = [list(self.limb.independent).index(i) for i in idx]   # coordinate k -> column
        self.actuated_joints = names       # the generalized coordinates (default: the actuated joints)
        self.tree_joints = self.tree.joint_names
        self.end_effector = desc.end_effector
        self.tol, self.max_iter = tol, max_iter
        self.branch = loop_branches(self.limb, limb_state(self.limb, np.zeros(self.tree.nq))[2])
        if not np.all(self.branch):
            raise DescriptionError(f"robot '{desc.name}': the reference configuration is a loop singularity")
        self.warm_start = warm_start
        self._theta = np.zeros(self.tree.nq)              # warm start of the loop closure
        self.friction = desc.friction                     # joint friction rows (None: none)

    def _friction_torques(self, thd) -> np.ndarray:
        """The tree joints' friction torques ``tau_f(thetad)`` (zero without friction): the
        limb's ``Q`` of eq. 34, mapped by ``H^T`` as the RNEA torques are (eq. 37)."""
        if self.friction is None:
            return 0.0
        return friction_torques(self.friction.table, thd)[0]

    @property
    def n(self) -> int:
        return len(self.actuated_joints)

    def _q(self, x):
        q = np.empty(self.n)
        q[self._order] = x
        return q

    def _x(self, q):
        return np.asarray(q)[..., self._order]

    def tree_state(self, x, xd=None, xdd=None):
        """``(theta, thetad, thetadd)`` (n,) of every tree joint: loops closed by Algorithm 2 on
        the assembly branch of the reference configuration (:func:`close_loops_on_branch`);
        dependent joint angles are returned in [-pi, pi)."""
        x = np.asarray(x, dtype=float)
        if x.ndim == 2:
            xd = np.zeros_like(x) if xd is None else np.asarray(xd, dtype=float)
            xdd = np.zeros_like(x) if xdd is None else np.asarray(xdd, dtype=float)
            outs = [self.tree_state(a, b, c) for a, b, c in zip(x, xd, xdd)]
            return tuple(np.stack(o) for o in zip(*outs))
        return self.closed_motion(x, xd, xdd)[:3]

    def closed_motion(self, x, xd=None, xdd=None) -> tuple:
        """``(theta, thetad, thetadd, H)`` of one state: the closure (:func:`close_loops_on_branch`),
        then eq. 20 with ``H`` and ``Hdot qd`` from the position-level data of the solution (one
        ``limb_state`` for both)."""
        start = self._theta if self.warm_start else np.zeros(self.tree.nq)
        th, st = close_loops_on_branch(self.limb, self._q(x), start, self.branch, self.tol, self.max_iter,
                                       return_state=True)
        rev = np.array([t == "revolute" for t in self.tree.joint_types])
        rev[self.limb.independent] = False                                # dependent angles only
        th = np.where(rev, np.mod(th + np.pi, 2 * np.pi) - np.pi, th)    # angles in [-pi, pi) (same poses)
        if self.warm_start:
            self._theta = th
        xd = np.zeros(self.n) if xd is None else np.asarray(xd, dtype=float)
        xdd = np.zeros(self.n) if xdd is None else np.asarray(xdd, dtype=float)
        H = constraint_resolution(self.limb, constraints=st[2])
        qd, qdd = self._q(xd), self._q(xdd)
        thd = H @ qd
        thdd = H @ qdd + loop_acceleration_bias(self.limb, th, thd, state=st)
        return th, thd, thdd, H

    def _f_ext(self, f_ext):
        if f_ext is None:
            return None
        body, off = self.tree.frame(self.end_effector)
        F = np.zeros((self.tree.nq, 6))
        F[body] = Ad_inv(off).T @ np.asarray(f_ext, dtype=float).reshape(6)
        return F

    def inverse_dynamics(self, x, xd, xdd, f_ext=None):
        """Actuator forces (n,) by constraint embedding (eqs. 20, 36-37): ``H^T rnea``.
        ``f_ext``: wrench (moment, force) on the end effector, in its frame."""
        x = np.asarray(x, dtype=float)
        if x.ndim == 2:
            fe = [None] * len(x) if f_ext is None or np.asarray(f_ext).ndim == 1 else f_ext
            fe = [f_ext] * len(x) if f_ext is not None and np.asarray(f_ext).ndim == 1 else fe
            return np.stack([self.inverse_dynamics(a, b, c, e) for a, b, c, e in zip(x, xd, xdd, fe)])
        th, thd, thdd, H = self.closed_motion(x, xd, xdd)
        return self._x(H.T @ (rnea(self.tree, th, thd, thdd, f_ext=self._f_ext(f_ext)) + self._friction_torques(thd)))

    def mass_and_bias(self, x, xd, f_ext=None) -> tuple:
        """``(M_t, b)``: ``H^T M H`` (n, n) and ``H^T rnea(theta, thetad, Hdot xd)`` (n,) of one
        state (eqs. 36-37), rows and columns in the order of the coordinates."""
        th, thd, bias, H = self.closed_motion(x, xd, np.zeros(self.n))
        Hc = H[:, self._order]
        return Hc.T @ crba(self.tree, th) @ Hc, Hc.T @ (rnea(self.tree, th, thd, bias, f_ext=self._f_ext(f_ext))
                                                       + self._friction_torques(thd))

    def forward_dynamics(self, x, xd, f, f_ext=None):
        """Actuator accelerations (n,) from ``H^T M H xdd = f - H^T rnea(theta, thetad, Hdot xd)``."""
        x = np.asarray(x, dtype=float)
        if x.ndim == 2:
            fe = [None] * len(x) if f_ext is None or np.asarray(f_ext).ndim == 1 else f_ext
            fe = [f_ext] * len(x) if f_ext is not None and np.asarray(f_ext).ndim == 1 else fe
            return np.stack([self.forward_dynamics(a, b, c, e) for a, b, c, e in zip(x, xd, f, fe)])
        th, thd, bias, H = self.closed_motion(x, xd, np.zeros(self.n))
        Mt = H.T @ crba(self.tree, th) @ H
        b = H.T @ (rnea(self.tree, th, thd, bias, f_ext=self._f_ext(f_ext)) + self._friction_torques(thd))
        return self._x(np.linalg.solve(Mt, self._q(np.asarray(f, dtype=float)) - b))
