"""The task-space dynamics of a :class:`~.pkm.ParallelRobot` (paper 001 Sec. 5): the EOM
(eq. 39) ``M_t Vdot_t + C_t V_t + W_grav + W_t = W_EE + J_IK^T u`` with ``M_t``, ``C_t``,
``W_grav`` of eqs. 40-43 from the limbs' tree dynamics and the platform's Newton-Euler
equations (eq. 38); inverse dynamics ``u = J_IK^-T (...)`` (eq. 45) and forward dynamics (eq. 39
solved for ``Vdot_t``), each one compiled call where the kernels can take it
(:mod:`~pkm_dynamics.core.pkm.robot_kernels`, :mod:`~pkm_dynamics.core.pkm.robot_dynamics`).
:class:`TaskSpaceDynamics` is a part of :class:`~.pkm.ParallelRobot` (a mixin: it uses the robot's kinematics, limbs and
platform)."""
from __future__ import annotations

import numpy as np

from ..bounds import check_effort
from ..errors import SingularityError, StateError
from .limb_tables import (compiled_rates, compiled_task_inertia)
from .robot_dynamics import compiled_forward_dynamics
from ..spatial.small_linalg import condition
from ..status import BAD_INPUT, OK
from ..limb.limb_kinematics import body_jacobian_derivative, limb_state, tree_coriolis_matrix
from ..limb.limb_ik import step_partition
from ..limb.loop_constraints import constraint_resolution_derivative
from ..limb.ik_refinement import limb_rates
from ..spatial.se3 import Ad_inv, ad
from ..tree.tree_dynamics import crba, kinematics, rnea
from .pkm_friction import friction_efforts
from .pkm_solution import PkmIKSolution, flat_theta


class TaskSpaceDynamics:
    """Inverse and forward dynamics, ``M_t`` and the actuation check of a parallel robot (part
    of the robot class)."""

    def _platform_wrench(self, sol, V_t, Vdot_t):
        """Eq. 38 projected: ``P_p^T (M_p Vdot_p - ad(V_p)^T M_p V_p - M_p (0, R^T g))``."""
        Vp, Ap = self.P_p @ V_t, self.P_p @ Vdot_t
        g = sol.pose[:3, :3].T @ self.tree.gravity
        Wp = self.M_p @ (Ap - np.concatenate([np.zeros(3), g])) - ad(Vp).T @ self.M_p @ Vp
        return self.P_p.T @ Wp

    def _generalized_force(self, sol, V_t, Vdot_t, poses=None):
        """Left side of eq. 39 minus ``W_EE``: ``sum_l K_l^T Q_l + platform``, with ``Q_l`` the
        RNEA of limb l along ``thetadd = K Vdot_t + Kdot V_t`` (eqs. 28-29)."""
        known = None if sol.limb_forces is None else sol.limb_forces.of(V_t, Vdot_t, self.tree.gravity)
        if known is not None:                    # the IK of this motion computed them
            return self._platform_wrench(sol, V_t, Vdot_t) + known
        return self._platform_wrench(sol, V_t, Vdot_t) + self._rates(sol, V_t, Vdot_t, poses)[2]

    def _rates(self, sol, V_t, Vdot_t, poses=None):
        """``(thetad, thetadd, sum_l K_l^T Q_l)`` of every limb (flat joint vectors) at the IK
        solution ``sol`` (eqs. 27-29, refined, and the limbs' share of eq. 45; ``Vdot_t`` None:
        ``thetadd`` and the sum None): the compiled kernels
        (:func:`~pkm_dynamics.core.pkm.limb_tables.compiled_rates`), and for a limb where they stop with a
        status the numpy route (:func:`.ik_refinement.limb_rates`, RNEA)."""
        flat = flat_theta(sol)
        if self.compiled:
            thd, thdd, W, status = compiled_rates(self._limb_tables, flat, V_t, Vdot_t, self.P_p)
        else:                                    # every limb by the reference route
            thd, status = np.zeros(len(flat)), np.ones(len(self.limbs), dtype=int)
            thdd, W = (None, None) if Vdot_t is None else (np.zeros(len(flat)), np.zeros(self.dof))
        T = self._limb_tables
        for li in np.flatnonzero(status != OK):
            th = sol.limb_theta[li]
            st = None if sol.limb_states is None else sol.limb_states[li]
            limb, jac = step_partition(self.limbs[li], th, limb_state(self.limbs[li], th) if st is None else st,
                                       self.singularity_threshold, self.loop_singularity_threshold, check=False)
            pl = None if poses is None else poses[li]
            d, dd = limb_rates(limb, th, V_t, Vdot_t, self.P_p, jac, st, pl)
            thd[T.toff[li]:T.toff[li + 1]] = d
            if dd is not None:
                thdd[T.toff[li]:T.toff[li + 1]] = dd
                W += jac.K.T @ rnea(limb.tree, th, d, dd, poses=pl)
        return thd, thdd, W

    def _solve_u(self, J_IK, W):
        self.check_actuation(J_IK)
        if J_IK.shape[0] == J_IK.shape[1]:
            try:
                return np.linalg.solve(J_IK.T, W)
            except np.linalg.LinAlgError:
                raise SingularityError("J_IK is singular: the actuators cannot balance the platform") from None
        return np.linalg.lstsq(J_IK.T, W, rcond=None)[0]     # redundant actuation: minimum norm

    def check_actuation(self, J_IK) -> float:
        """``kappa(J_IK)`` (eq. 30) of one state; raises :class:`SingularityError` beyond
        ``singularity_threshold`` (an output singularity: a task motion the actuators do not
        sense, along which they cannot balance a wrench), naming the limbs whose actuators carry
        the unbounded forces (the left singular vector of the smallest singular value)."""
        if not np.isfinite(J_IK).all():
            if self.singularity_threshold is None:
                return np.inf
            raise SingularityError("J_IK is not finite: a limb is at an input singularity")
        J = np.array(J_IK, dtype=float)              # the one array type the kernel is compiled for
        side = max(J.shape)
        k = condition(J, J.shape[0], J.shape[1], np.empty((side, side)))    # compiled, no SVD
        if self.singularity_threshold is None or k <= self.singularity_threshold:
            return k
        U, sv, Vt = np.linalg.svd(J_IK)              # the limbs and the direction for the message
        k = float(sv[0] / sv[-1]) if sv[-1] > 0 else np.inf
        if k <= self.singularity_threshold:
            return k
        u = np.abs(U[:, len(sv) - 1])
        limbs = sorted({self.limbs[self._act[i][0]].name for i in np.flatnonzero(u >= 0.1 * u.max())})
        direction = ", ".join(f"{c} {v:+.2f}" for c, v in zip(self.task_space, Vt[-1]) if abs(v) >= 0.05)
        raise SingularityError(f"{', '.join(limbs)}: the actuators cannot balance the platform (kappa(J_IK) = "
                               f"{k:.3g} > threshold {self.singularity_threshold:.3g}): an output singularity, "
                               f"the platform can move along ({direction}) with the actuators locked")

    def inverse_dynamics(self, x, xd, xdd, wrench=None, *, initial=None):
        """Inverse-dynamics feedforward ``u`` (n_act,) (paper 001 eq. 45) for the task motion
        ``(x = pose (4,4), xd = V_t, xdd = Vdot_t)``, optional platform wrench ``W_EE`` (6,)
        (body-fixed, in the platform frame).  ``x`` may be an :class:`~.interface.IKSolution`;
        ``initial``: where its IK starts.  Batched over a leading axis of x/xd/xdd/wrench.

        Where the numbers come from: eq. 45 solved here from the platform's wrench (eq. 38) and
        the limbs' ``sum_l K_l^T Q_l`` (recomputed, or the solution's ``limb_forces`` when they
        belong to this motion).  A :class:`~.pkm_solution.PkmIKSolution` made by the compiled
        IK of this very motion (same ``xd``, ``xdd``, no ``wrench``) already holds eq. 45's ``u``
        in its field ``efforts``, computed by the same kernel as :meth:`reference_motion`: that
        ``u`` is returned (a copy), bit-identical to the solve here."""
        efforts = getattr(x, "efforts", None) if wrench is None and self.friction is None else None
        if efforts is not None:                  # one sample's solution of this motion: its u at once
            known = efforts.of(xd, xdd, self.tree.gravity)
            if known is not None:
                return known.copy()
        return self._one(self._inverse_dynamics_one, x, xd, xdd, initial=initial, wrench=wrench)

    def _inverse_dynamics_one(self, pose, twist, acceleration, initial=None, wrench=None,
                              _return_solution=False):
        efforts = getattr(pose, "efforts", None) if wrench is None else None
        # V, A checked by that IK
        known = None if efforts is None else efforts.of(twist, acceleration, self.tree.gravity)
        sol = pose
        if known is None:
            V, A = self._vec(twist, "twist"), self._vec(acceleration, "acceleration")
            if wrench is not None:
                check_effort(wrench, "wrench")
            sol = self._solution(pose, V, A, initial)
            known = None if wrench is not None or sol.efforts is None else sol.efforts.of(V, A, self.tree.gravity)
        if known is not None:                    # eq. 45 as the compiled IK of this motion solved it
            u = known.copy()
        else:
            W = self._generalized_force(sol, V, A)
            if wrench is not None:
                W = W - self.P_p.T @ np.asarray(wrench, dtype=float).reshape(6)
            u = self._solve_u(sol.J_IK, W)
        if self.friction is not None:            # eq. 44's W_t: u_0 + J_IK^-T W_t
            u = u + friction_efforts(self, sol, np.asarray(twist, dtype=float))
        return (u, sol) if _return_solution else u

    def forward_dynamics(self, x, xd, u, wrench=None, *, initial=None):
        """Task acceleration ``xdd = Vdot_t`` (delta_p,) from eq. 39 for actuator forces ``u``
        (n_act,) at the task state ``(x = pose, xd = V_t)``: ``M_t Vdot_t = J_IK^T u + W_EE -
        (C_t V_t + W_grav)``.  Batched over a leading axis."""
        if isinstance(x, PkmIKSolution) and getattr(x.pose, "ndim", 0) == 2:      # one sample's solution
            return self._forward_dynamics_one(x, xd, u, initial, wrench)
        return self._one(self._forward_dynamics_one, x, xd, u, initial=initial, wrench=wrench)

    def _forward_dynamics_one(self, pose, twist, u, initial=None, wrench=None, _return_solution=False):
        """One state of :meth:`forward_dynamics`: the IK of ``pose`` (warm-started from ``initial``)
        unless it is a solution, then one compiled call (:func:`~pkm_dynamics.core.pkm.robot_dynamics.
        compiled_forward_dynamics`: inputs checked, limbs' bias and ``M_t``, platform, conditioning,
        solve); a status hands over to the checks that word the error or to the reference route
        (:meth:`_forward_dynamics_reference`)."""
        c = np.ascontiguousarray                 # the compiled call's one layout
        V, u = c(twist, dtype=float), c(u, dtype=float)
        W = None if wrench is None else c(wrench, dtype=float)
        if V.shape != self._input_shapes[0]:
            self._vec(twist, "twist")
        if u.shape != self._input_shapes[1]:
            raise StateError(f"u must hold {len(self._act)} finite actuator forces "
                             f"({', '.join(self.actuated_joints)}), got shape {u.shape}")
        if isinstance(pose, PkmIKSolution):
            sol = pose
        else:                                    # inputs first, as before the IK
            self._fd_inputs(V, u, W)
            sol = self.inverse_kinematics(pose, initial=initial)
        if self.friction is not None:            # eq. 39 with eq. 44's W_t: under u - J_IK^-T W_t
            self._fd_inputs(V, u, W)
            u = u - friction_efforts(self, sol, V)
        if not self.compiled or (W is not None and W.shape != (6,)):
            return self._forward_dynamics_reference(sol, V, u, W, _return_solution)
        a, status, _ = compiled_forward_dynamics(self._limb_tables, self._rc, flat_theta(sol), V, u, W, sol.pose,
                                                 sol.J_IK, self._kernel_thresholds[0])
        if status == BAD_INPUT:
            self._fd_inputs(V, u, W)             # raises the named StateError
        if status != OK:                         # a limb's fallback or a singularity: the numpy route
            return self._forward_dynamics_reference(sol, V, u, W, _return_solution)
        return (a, sol) if _return_solution else a

    def _fd_inputs(self, V, u, W):
        """The checks of the forward dynamics' inputs (finite, bounded: :mod:`.bounds`)."""
        self._vec(V, "twist")
        if not np.isfinite(u).all():
            raise StateError(f"u must hold {len(self._act)} finite actuator forces "
                             f"({', '.join(self.actuated_joints)}), got shape {u.shape}")
        check_effort(u, "u")
        if W is not None:
            check_effort(W, "wrench")

    def _forward_dynamics_reference(self, sol, V, u, W, _return_solution=False):
        """Eq. 39 by the Python route around the limb kernels (and the numpy route of a limb they
        hand over): ``M_t`` (:meth:`mass_matrix`), the bias (:meth:`_generalized_force` at zero
        task acceleration), the conditioning checks with their messages, ``numpy.linalg.solve``."""
        self._fd_inputs(V, u, W)
        sol = self._solution(sol, None, None, None)
        M_t = self.mass_matrix(sol)
        b = self._generalized_force(sol, V, np.zeros(self.dof))
        rhs = sol.J_IK.T @ u - b
        if W is not None:
            rhs = rhs + self.P_p.T @ W.reshape(6)
        self.check_actuation(sol.J_IK)
        k = condition(M_t, self.dof, self.dof, np.empty((self.dof, self.dof)))
        if self.singularity_threshold is not None and not k <= self.singularity_threshold**2:
            limb = max(zip(self.limbs, sol.jacobians), key=lambda lj: np.linalg.norm(lj[1].K))[0]
            raise SingularityError(f"{limb.name}: the task-space mass matrix M_t is ill-conditioned (kappa(M_t) = "
                                   f"{k:.3g} > threshold^2 = {self.singularity_threshold**2:.3g}); {limb.name} has "
                                   "the largest joint rates per task rate (near its input singularity)")
        a = np.linalg.solve(M_t, rhs)
        return (a, sol) if _return_solution else a

    def forward_dynamics_derivatives(self, x, xd, u, wrench=None, *, initial=None):
        """``Vdot_t`` of :meth:`forward_dynamics` at the pose ``x`` (4, 4), twist ``xd``, efforts
        ``u`` (``wrench`` on the platform) and its exact derivatives ``d_x`` (along ``x exp(P_p delta)``),
        ``d_xd`` (delta, delta), ``d_u`` (delta, n_act): a :class:`~.derivatives.DynamicsDerivatives`
        (forward mode, :mod:`.pkm_derivatives`); batched over a leading axis."""
        from ..derivatives.pkm_derivatives import pkm_forward_dynamics_derivatives
        return pkm_forward_dynamics_derivatives(self, x, xd, u, wrench, initial)

    def inverse_dynamics_derivatives(self, x, xd, xdd, wrench=None, *, initial=None):
        """``u`` of :meth:`inverse_dynamics` at the pose ``x`` (4, 4), twist ``xd``, task
        acceleration ``xdd`` (``wrench`` on the platform) and its exact derivatives ``d_x``, ``d_xd``,
        ``d_u`` (n_act, delta) each: a :class:`~.derivatives.DynamicsDerivatives` (forward mode,
        :mod:`.pkm_derivatives`); batched over a leading axis."""
        from ..derivatives.pkm_derivatives import pkm_inverse_dynamics_derivatives
        return pkm_inverse_dynamics_derivatives(self, x, xd, xdd, wrench, initial)

    def mass_matrix(self, sol: PkmIKSolution, poses=None) -> np.ndarray:
        """``M_t`` (delta_p, delta_p), eq. 40: ``sum_l F_l^T H_l^T M_l H_l F_l + P_p^T M_p P_p``.
        ``poses``: per limb ``(P, Ad(P)^-1)`` at the solution if already known."""
        M = self.P_p.T @ self.M_p @ self.P_p
        poses = [None] * len(self.limbs) if poses is None else poses
        flat = flat_theta(sol)
        status = compiled_task_inertia(self._limb_tables, flat, M) if self.compiled else \
            np.ones(len(self.limbs), dtype=int)                             # the kernel, or numpy
        for li in np.flatnonzero(status != OK):                             # the numpy route
            limb, th, jac = self.limbs[li], sol.limb_theta[li], sol.jacobians[li]
            M += jac.K.T @ crba(limb.tree, th, poses[li]) @ jac.K
        return M

    def task_space_dynamics(self, pose, twist, initial=None):
        """``(M_t, C_t, W_grav)`` of eqs. 40, 41, 43 at the task state ``(pose, V_t)`` as
        matrices/vector: ``C_t = sum_l K^T (M_l Kdot + C_l K) + P_p^T G_p M_p P_p`` with
        ``K = H F``, ``Kdot = Hdot F + H Fdot``, ``Fdot = -L_t^-1 Ldot_t F``,
        ``Ldot_t = P_t (Jdot_p H + J_p Hdot)``, ``G_p = -ad(V_p)^T`` (eq. 38); ``W_t = 0`` (no
        friction model)."""
        V = self._vec(twist, "twist")
        sol = self._solution(pose, None, None, initial)
        M = self.mass_matrix(sol)
        Vp = self.P_p @ V
        Ct = self.P_p.T @ (-ad(Vp).T @ self.M_p) @ self.P_p
        Wg = self._platform_wrench(sol, np.zeros(self.dof), np.zeros(self.dof))
        for limb, th, jac in zip(self.limbs, sol.limb_theta, sol.jacobians):
            limb, jac = step_partition(limb, th, limb_state(limb, th), self.singularity_threshold,   # jac's H
                                       self.loop_singularity_threshold, check=False)
            thd = jac.K @ V
            Hd = constraint_resolution_derivative(limb, th, thd, jac.H)
            _, C, Vb, _ = kinematics(limb.tree, th, thd)
            Jd = Ad_inv(limb.platform_offset) @ body_jacobian_derivative(limb.tree, C, Vb, limb.platform_body)
            Ltd = (Jd @ jac.H + jac.J_p @ Hd)[limb.task_rows]
            Fd = -np.linalg.solve(jac.L_t, Ltd @ jac.F)
            Kd = Hd @ jac.F + jac.H @ Fd
            Ml = crba(limb.tree, th)
            Ct += jac.K.T @ (Ml @ Kd + tree_coriolis_matrix(limb.tree, th, thd) @ jac.K)
            Wg += jac.K.T @ rnea(limb.tree, th, np.zeros(limb.n), np.zeros(limb.n))
        return M, Ct, Wg
