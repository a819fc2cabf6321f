"""Parallel kinematic manipulators with hybrid limbs in task space (paper 001 Secs. 3.6-5).

A :class:`ParallelRobot` is built from a robot description with a ``<platform>`` element: its
limbs (:func:`~.limb_model.build_limbs`), the platform (mass matrix ``M_p`` about the platform frame
F_p) and the task space, the ``delta_p`` selected components of the platform's body-fixed
twist ``V_p = P_p V_t`` (eq. 11).  The algorithms:

* inverse kinematics of the PKM: each limb's IK (nested Algorithms 1-2 or the compound
  Algorithm 3), velocity and acceleration IK (eqs. 27-29) and ``J_IK`` (eq. 30);
* task-space EOM (eq. 39) ``M_t Vdot_t + C_t V_t + W_grav + W_t = W_EE + J_IK^T u`` with
  ``M_t``, ``C_t``, ``W_grav`` of eqs. 40-43 from the limbs' tree dynamics (RNEA/CRBA of each
  limb tree, the platform massless there) and the platform's Newton-Euler equations (eq. 38);
* inverse dynamics ``u = J_IK^-T (...)`` (eq. 45) and forward dynamics (eq. 39 solved for
  ``Vdot_t``); forward kinematics from actuator values by Newton's method on the IK.

Conventions: poses are 4x4 (platform frame in the base/root-link frame); ``V_t`` and
``Vdot_t`` are the task components of the platform frame's body-fixed twist and its time
derivative; a platform wrench is body-fixed (moment, force) in the platform frame.
Batched calls take a leading axis (a trajectory): inverse kinematics then warm-starts each
sample from the previous one, as the paper does along its paths (Sec. 6.4.1).
"""
from __future__ import annotations

import numpy as np

from .bounds import MAX_RATE, check_effort, check_limits, check_rate
from .description import as_description
from .errors import ConvergenceError, DescriptionError, SingularityError, StateError
from .compiled.limb_tables import (CompiledIK, LazyLimbs, LimbTables, compiled_ik, compiled_rates, compiled_reference,
                                   compiled_task_inertia, robot_constants)
from .compiled.robot_dynamics import (FD_BAD_EFFORT, FD_BAD_TWIST, FD_BAD_WRENCH, FD_OK,
                                      compiled_forward_dynamics)
from .compiled.robot_kernels import BAD_INPUT as REFERENCE_BAD_INPUT
from .compiled.robot_kernels import MANIFOLD_TOLERANCE, ORTHONORMAL_TOLERANCE, task_manifold_offset
from .compiled.small_linalg import condition
from .compiled.warmup import load_kernels
from .limb_ik import LimbJacobians, limb_inverse_kinematics_compound, limb_inverse_kinematics_nested, limb_jacobians
from .limb_kinematics import body_jacobian_derivative, limb_platform_pose, tree_coriolis_matrix
from .limb_model import TWIST_COMPONENTS, build_limbs
from .loop_constraints import constraint_resolution_derivative
from .ik_refinement import check_loop_conditions, limb_rates, refine_to_round_off
from .interface import IKSolution, SolverOptions
from .reactions import reaction_model
from .spatial import Ad, Ad_inv, ad, exp_se3, log_se3, pose_inv
from .tree_dynamics import crba, forward_kinematics, kinematics, rnea
from .working_mode import apply_joint_limits, solve_on_working_mode

#: default threshold on kappa(F_(l)), kappa(J_IK) and kappa(M_t) above which the robot reports
#: an input or output singularity (:class:`~.interface.SolverOptions`)
SINGULARITY_THRESHOLD = SolverOptions.singularity_threshold
#: largest deviation (m, rad) of a requested pose from the task manifold C_ref exp(P_p x)
TASK_MANIFOLD_TOLERANCE = MANIFOLD_TOLERANCE


#: the inverse kinematics result (:class:`~.interface.IKSolution`, one type for every robot kind)
PkmIKSolution = IKSolution


def parabolic_trajectory(t, reference_pose, dx, dz, cycles: float = 3.0, period: float = 1.0):
    """Platform path of paper 001 Sec. 6.4: ``r(t) = r_0 + (dx s, 0, dz 4 s (1 - s))`` with
    ``s(t) = sin^2(nu pi t / T)``.  Returns ``(poses (N,4,4), V_t (N,2), Vdot_t (N,2))`` for the
    task space ``(vx, vz)`` (the platform does not rotate, so body-fixed = base-frame)."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    w = cycles * np.pi / period
    s = np.sin(w * t) ** 2
    sd = w * np.sin(2 * w * t)
    sdd = 2 * w**2 * np.cos(2 * w * t)
    x, xd, xdd = dx * s, dx * sd, dx * sdd
    z = 4 * dz * s * (1 - s)
    zd = 4 * dz * (1 - 2 * s) * sd
    zdd = 4 * dz * ((1 - 2 * s) * sdd - 2 * sd**2)
    P = np.repeat(np.asarray(reference_pose, dtype=float)[None], len(t), axis=0)
    R0 = P[0, :3, :3]
    P[:, :3, 3] += np.stack([x, np.zeros_like(x), z], axis=1) @ R0
    return P, np.stack([xd, zd], axis=1), np.stack([xdd, zdd], axis=1)


class ParallelRobot:
    """A PKM with hybrid limbs (paper 001), built from a robot description with a platform.

    Parameters: ``description`` (URDF text, path or :class:`RobotDescription`), ``gravity``;
    ``options`` (:class:`~.interface.SolverOptions`, fixed for the robot's life):
    ``ik_scheme`` ``"nested"`` (Algorithms 1+2) or ``"compound"`` (Algorithm 3),
    ``tolerance``: IK accuracy goal epsilon (pose error norm and loop residual),
    ``max_iterations``, ``singularity_threshold``: largest admissible ``kappa(F_(l))`` of a limb
    (input singularity) and ``kappa(J_IK)`` (output singularity; ID, FD and HOID) (None: never
    raise), ``loop_singularity_threshold``: largest admissible ``kappa(G_y)`` of a loop at an
    IK solution (:mod:`.ik_refinement`; None: never raise); ``independent``: optional
    tree-joint names to use as independent loop coordinates.  The robot interface of
    :mod:`.interface` in task space: ``x`` is the platform pose (4, 4) (or its
    :class:`~.interface.IKSolution`), ``xd``, ``xdd`` the task twist ``V_t`` and its derivative.

    ``compiled`` (attribute, default True): the IK, rates, limb forces and ``M_t`` run in the
    compiled kernels (:mod:`.compiled.limb_tables`); False runs the numpy reference route for
    every limb (the same results to round-off: for comparisons).

    Every IK solution is refined to round-off (so rates and accelerations are exact for it),
    lies on the working mode of its start and within the joint limits (:mod:`.working_mode`).

    Public API (numpy in/out, leading batch axis allowed): :meth:`inverse_kinematics`,
    :meth:`inverse_dynamics`, :meth:`forward_dynamics`, :meth:`forward_kinematics`,
    :meth:`task_space_dynamics`, :meth:`task_pose`; attributes ``actuated_joints``,
    ``tree_joints``, ``task_space``, ``limbs``, ``reference_pose``.
    """

    kind = "parallel"
    state_space = "task"

    def __init__(self, description, gravity=None, options: SolverOptions | None = None, independent=None):
        desc = as_description(description, gravity)
        if desc.platform is None:
            raise DescriptionError(f"robot '{desc.name}' has no <platform>: not a parallel manipulator")
        self._options = SolverOptions() if options is None else options
        self.description = desc
        self.tree = desc.tree
        self.name = desc.name
        self.root_link = desc.tree.root_link
        self.end_effector = desc.platform.link
        self.limbs: tuple = build_limbs(desc, independent)
        self.limb_names = tuple(limb.name for limb in self.limbs)
        self._limb_tables = LimbTables.build(self.limbs, self.max_iter)
        self.compiled = True
        load_kernels("pkm")             # once per process, not at the first request;
        load_kernels("hoid")            # a parallel robot does not load the chain kernels
        self.task_space = tuple(desc.platform.task_space)
        dp = len(self.task_space)
        self.P_p = np.zeros((6, dp))
        for k, c in enumerate(self.task_space):
            self.P_p[TWIST_COMPONENTS.index(c), k] = 1.0
        tree = self.tree
        self._p_body, off = tree.frame(desc.platform.link)
        self._p_offset = off @ desc.platform.origin
        A = Ad(self._p_offset)
        self.M_p = A.T @ tree.M[self._p_body] @ A          # platform inertia about F_p (eq. 38)
        self.reference_pose = forward_kinematics(tree, np.zeros(tree.nq))[self._p_body] @ self._p_offset
        self._act = []
        for name in desc.actuated_joints:
            w = tree.joint_index(name)
            for li, limb in enumerate(self.limbs):
                hit = np.flatnonzero(limb.whole_index == w)
                if len(hit):
                    self._act.append((li, int(hit[0])))
                    break
            else:
                raise DescriptionError(f"actuated joint '{name}' belongs to no limb")
        if len(self._act) < dp:
            raise DescriptionError(f"robot '{desc.name}' has {len(self._act)} actuators for a "
                                   f"{dp}-DOF task space: under-actuated")
        toff = self._limb_tables.toff
        self._act_flat = np.array([toff[li] + j for li, j in self._act], dtype=int)
        self._K_rows = self._limb_tables.rows_of_K(self._act)
        src = [toff[li] + j for li, limb in enumerate(self.limbs) for j in range(limb.n) if limb.whole_index[j] >= 0]
        self._whole_src = np.array(src, dtype=int)
        self._whole_dst = np.concatenate([limb.whole_index[limb.whole_index >= 0] for limb in self.limbs]).astype(int)
        self._rc = robot_constants(self.reference_pose, self.P_p, self.M_p, self.tree.gravity)
        self.reaction_model = reaction_model(self)        # read-only: built here, not at a call

    # -- names and solver options (read-only: ``options`` is fixed) ----------------------------
    @property
    def actuated_joints(self) -> tuple:
        return self.description.actuated_joints

    @property
    def tree_joints(self) -> tuple:
        return self.tree.joint_names

    seed_joints = tree_joints

    @property
    def twist_components(self) -> tuple:
        return self.task_space

    @property
    def options(self) -> SolverOptions:
        """The solver options, fixed at construction."""
        return self._options

    ik_scheme = property(lambda self: self.options.ik_scheme)
    tol = property(lambda self: self.options.tolerance)
    max_iter = property(lambda self: self.options.max_iterations)
    singularity_threshold = property(lambda self: self.options.singularity_threshold)
    loop_singularity_threshold = property(lambda self: self.options.loop_singularity_threshold)

    @property
    def dof(self) -> int:
        return len(self.task_space)

    def task_pose(self, x) -> np.ndarray:
        """Platform pose ``C_ref exp(P_p x)`` for task coordinates ``x`` (delta_p,) or (N, delta_p)
        (exponential coordinates about the reference pose; for translations: displacements
        along the platform frame's axes)."""
        x = np.asarray(x, dtype=float)
        if x.ndim == 2:
            return np.stack([self.task_pose(r) for r in x])
        return self.reference_pose @ exp_se3(self.P_p @ x)

    def task_coordinates(self, pose) -> np.ndarray:
        """Inverse of :meth:`task_pose`: ``P_p^T log(C_ref^-1 C)``."""
        pose = np.asarray(pose, dtype=float)
        if pose.ndim == 3:
            return np.stack([self.task_coordinates(p) for p in pose])
        return self.P_p.T @ log_se3(pose_inv(self.reference_pose) @ pose)

    # -- inverse kinematics -------------------------------------------------------------------
    def _initial_thetas(self, initial):
        if initial is None:
            return [np.zeros(limb.n) for limb in self.limbs]
        if isinstance(initial, PkmIKSolution):
            th = initial.limb_theta
            if np.asarray(th[0]).ndim == 2:
                th = [t[-1] for t in th]
            return [np.array(t, dtype=float) for t in th]
        q = np.asarray(initial, dtype=float)
        if q.shape != (self.tree.nq,):
            raise StateError(f"initial configuration has shape {q.shape}, expected ({self.tree.nq},)")
        return [np.where(limb.whole_index >= 0, q[np.maximum(limb.whole_index, 0)], 0.0)
                for limb in self.limbs]

    def _whole_flat(self, flat):
        """Tree-joint values (n,) from the flat joint vector of the limbs (:meth:`_whole`)."""
        out = np.zeros(self.tree.nq)
        out[self._whole_dst] = flat[self._whole_src]
        return out

    def _check_pose(self, pose):
        pose = np.array(pose, dtype=float)          # a copy, of the one type the kernels take
        if pose.shape != (4, 4) or not np.isfinite(pose).all():
            raise StateError(f"platform pose must be a finite 4x4 matrix, got shape {pose.shape}")
        R = pose[:3, :3]
        if np.linalg.norm(R.T @ R - np.eye(3)) > ORTHONORMAL_TOLERANCE:
            raise StateError("platform pose: the rotation part is not orthonormal")
        return pose

    def _check_task_manifold(self, pose):
        """A pose must be ``C_ref exp(P_p x)`` for task coordinates ``x``: the platform of a
        ``delta_p < 6`` PKM cannot leave that manifold (e.g. a planar robot its plane)."""
        if self.dof == 6:
            return
        off = np.empty(6)
        task_manifold_offset(self.reference_pose, self.P_p, pose, off, np.empty((3, 4, 4)), np.empty(6))
        if np.abs(off).max() > TASK_MANIFOLD_TOLERANCE:
            bad = [f"{c} {v:.3g}" for c, v in zip(TWIST_COMPONENTS, off) if abs(v) > TASK_MANIFOLD_TOLERANCE]
            raise StateError(f"platform pose is off the task manifold of robot '{self.description.name}': "
                             f"its platform moves only in ({', '.join(self.task_space)}) from the reference "
                             f"pose, the requested pose departs from it by {', '.join(bad)} (m, rad; "
                             "body-fixed components)")

    def _vec(self, v, name):
        v = np.asarray(v, dtype=float)
        bound = MAX_RATE[2 if name == "acceleration" else 1]
        if v.shape == (self.dof,) and np.abs(v).max() <= bound:     # finite, within the bound
            return v
        if v.shape != (self.dof,) or not np.isfinite(v).all():
            raise StateError(f"{name} must be {self.dof} finite task-space values "
                             f"({' '.join(self.task_space)}), got shape {v.shape}")
        return check_rate(v, name, 2 if name == "acceleration" else 1)

    def _limb_ik_reference(self, limb, pose, th0, scheme, tol):
        """One limb's IK by the numpy route (:mod:`.limb_ik`, :mod:`.working_mode`,
        :mod:`.ik_refinement`) with every refusal: ``(theta, outer, inner, jac, state, kappa(F))``.
        The compiled kernel (:func:`.compiled.limb_tables.compiled_ik`) does the same for the
        common case and hands every other one over to this."""
        solver = limb_inverse_kinematics_nested if scheme == "nested" else limb_inverse_kinematics_compound
        try:
            theta, info = solve_on_working_mode(solver, limb, pose, th0, tol=tol, max_iter=self.max_iter,
                                                singularity_threshold=self.singularity_threshold)
        except ConvergenceError as exc:
            k0 = limb_jacobians(limb, th0).condition
            raise ConvergenceError(
                f"{exc}; the platform pose (position {np.round(pose[:3, 3], 6).tolist()}) is out of "
                f"reach of {limb.name} or too far from the start configuration (kappa(F) there: "
                f"{k0:.3g})") from None
        theta, state = refine_to_round_off(limb, pose, theta, info.state)
        full = pose_inv(limb_platform_pose(limb, theta, state[0])) @ pose
        miss = np.linalg.norm(log_se3(full))
        if miss > 1e-6:
            raise ConvergenceError(
                f"{limb.name}: inverse kinematics converged on its {len(limb.task_rows)} platform "
                f"coordinates to a configuration whose platform pose is {miss:.3g} away from the "
                "requested one (another assembly branch of the separated limb); start closer")
        check_loop_conditions(limb, state, self.loop_singularity_threshold)
        theta = apply_joint_limits(limb, theta, th0)
        jac = limb_jacobians(limb, theta, state)
        k = jac.condition
        if self.singularity_threshold is not None and not k <= self.singularity_threshold:
            raise SingularityError(f"{limb.name}: inverse kinematics Jacobian F is ill-conditioned "
                                   f"(kappa(F) = {k:.3g} > threshold {self.singularity_threshold:.3g}) "
                                   "at the requested pose: near an input singularity")
        return theta, info.outer, info.inner, jac, state, k

    def _reference_kernel(self, pose, twist, acceleration, thetas, scheme, tol):
        """The compiled reference (:func:`.compiled.limb_tables.compiled_reference`) when the
        inputs have the shapes it takes; None where the Python checks must run first."""
        pose = np.asarray(pose, dtype=float)
        level = 0 if twist is None else (1 if acceleration is None else 2)
        V = A = np.zeros(self.dof)
        if level:
            V = np.asarray(twist, dtype=float)
            if level == 2:
                A = np.asarray(acceleration, dtype=float)
        if pose.shape != (4, 4) or V.shape != (self.dof,) or A.shape != (self.dof,):
            return None
        thr, lthr = self.singularity_threshold, self.loop_singularity_threshold
        r = compiled_reference(self._limb_tables, self._rc, self._K_rows, pose,
                               np.concatenate(thetas), scheme == "nested", tol, -1.0 if thr is None else float(thr),
                               -1.0 if lthr is None else float(lthr), V, A, level)
        return None if r.code == REFERENCE_BAD_INPUT else r

    def _ik_one(self, pose, twist, acceleration, thetas, scheme, tol=None):
        tol = self.tol if tol is None else tol
        T = self._limb_tables
        r = self._reference_kernel(pose, twist, acceleration, thetas, scheme, tol) if self.compiled else None
        if r is None:                            # the checks word a refusal
            pose = self._check_pose(pose)
            self._check_task_manifold(pose)
        else:
            pose = np.array(pose, dtype=float)
        if r is None and self.compiled:
            r = compiled_ik(T, pose, np.concatenate(thetas), scheme == "nested", tol, self.singularity_threshold,
                            self.loop_singularity_threshold)
        elif r is None:                          # every limb by the reference route
            r = CompiledIK(np.concatenate(thetas), np.ones(len(self.limbs), dtype=int), np.zeros((len(self.limbs), 3)),
                           None, np.zeros(self._K_rows.max() + 1))
        flat = r.theta
        its, cond = r.out[:, 0].astype(int), r.out[:, 1].copy()
        res = float(r.out[:, 2].max(initial=0.0))
        fd = r.fd
        jacs = LazyLimbs(len(self.limbs), lambda l: _jacobians(T.state(l, fd)[1]))
        states = LazyLimbs(len(self.limbs), lambda l: T.state(l, fd)[0])
        inner = [T.inner(l, r.inner, its[l]) if scheme == "nested" and r.status[l] == 0 else []
                 for l in range(len(self.limbs))]
        J_IK = fd[self._K_rows] if r.J is None else r.J
        for li in np.flatnonzero(r.status != 0) if r.J is None else ():   # a refusal or the continuation
            limb, th0 = self.limbs[li], thetas[li]
            theta, its[li], inner[li], jacs[li], states[li], cond[li] = \
                self._limb_ik_reference(limb, pose, th0, scheme, tol)
            flat[T.toff[li]:T.toff[li + 1]] = theta
            res = max([res] + [np.max(np.abs(g)) for g, _, _ in states[li][2] if len(g)])
            for a, (l, j) in enumerate(self._act):
                if l == li:
                    J_IK[a] = jacs[li].K[j]
        sol = PkmIKSolution(pose, flat[self._act_flat], self._whole_flat(flat), J_IK, cond, its,
                            np.array(res), T.split(flat), inner=inner)
        sol._jacs, sol._states, sol._flat = jacs, states, flat
        if twist is not None:
            if r.thd is None:
                V = self._vec(twist, "twist").copy()
                A = None if acceleration is None else self._vec(acceleration, "acceleration").copy()
            else:                        # checked by the kernel
                V = np.array(twist, dtype=float)
                A = None if acceleration is None else np.array(acceleration, dtype=float)
            if r.thd is None:
                thd, thdd, W = self._rates(sol, V, A)
            else:                        # the kernel's (its checks of V, A passed)
                thd, thdd, W = r.thd, r.thdd, r.W
            if A is not None:            # the limbs' forces of this motion, for the ID of sol
                sol._limb_forces = (V, A, W)
                if r.u is not None:      # and the ID itself (eq. 45, J_IK checked)
                    sol._u = (V, A, r.u)
            sol.limb_thetad, sol.qd = T.split(thd), self._whole_flat(thd)
            sol.actuators_d = thd[self._act_flat]
            if A is not None:
                sol.limb_thetadd, sol.qdd = T.split(thdd), self._whole_flat(thdd)
                sol.actuators_dd = thdd[self._act_flat]
        elif acceleration is not None:
            raise StateError("an acceleration needs a twist")
        return sol

    def inverse_kinematics(self, pose, twist=None, acceleration=None, initial=None, *,
                           scheme: str | None = None, tol: float | None = None) -> IKSolution:
        """Actuator values and every tree-joint value for the platform pose ``pose`` (4, 4)
        (paper 001 eq. 23 per limb, Algorithms 1-3), plus their rates and accelerations when the
        task twist ``V_t`` (delta_p,) and acceleration ``Vdot_t`` (delta_p,) are given (eqs.
        27-30).  Batched: ``pose`` (N, 4, 4), ``twist``/``acceleration`` (N, delta_p); each
        sample starts from the previous solution.  ``initial``: start configuration (a previous
        :class:`PkmIKSolution` or tree-joint values (n,); default: the reference configuration).
        ``scheme``: ``"nested"`` or ``"compound"``, ``tol``: accuracy goal (defaults: the robot's
        ``options``; per call, for comparing schemes and for the forward kinematics' inner solves)."""
        scheme = self.ik_scheme if scheme is None else scheme
        if scheme not in ("nested", "compound"):
            raise StateError(f"IK scheme '{scheme}' is not 'nested' or 'compound'")
        pose = np.asarray(pose, dtype=float)
        thetas = self._initial_thetas(initial)
        if pose.ndim == 2:
            return self._ik_one(pose, twist, acceleration, thetas, scheme, tol)
        N = pose.shape[0]
        tw = [None] * N if twist is None else np.asarray(twist, dtype=float)
        ac = [None] * N if acceleration is None else np.asarray(acceleration, dtype=float)
        sols = []
        for i in range(N):
            s = self._ik_one(pose[i], tw[i], ac[i], thetas, scheme, tol)
            thetas = s.limb_theta
            sols.append(s)
        return _stack(sols)

    # -- task-space dynamics ------------------------------------------------------------------
    def _solution(self, pose, twist, acceleration, initial):
        if isinstance(pose, PkmIKSolution):
            if getattr(pose, "_jacs", None) is None:
                pose._jacs = [limb_jacobians(limb, th) for limb, th in zip(self.limbs, pose.limb_theta)]
            return pose
        return self.inverse_kinematics(pose, twist, acceleration, initial)

    def _platform_wrench(self, sol, V_t, Vdot_t):
        """Eq. 38 projected: ``P_p^T (M_p Vdot_p - ad(V_p)^T M_p V_p - M_p (0, R^T g))``."""
        Vp, Ap = self.P_p @ V_t, self.P_p @ Vdot_t
        g = sol.pose[:3, :3].T @ self.tree.gravity
        Wp = self.M_p @ (Ap - np.concatenate([np.zeros(3), g])) - ad(Vp).T @ self.M_p @ Vp
        return self.P_p.T @ Wp

    def _generalized_force(self, sol, V_t, Vdot_t, poses=None):
        """Left side of eq. 39 minus ``W_EE``: ``sum_l K_l^T Q_l + platform``, with ``Q_l`` the
        RNEA of limb l along ``thetadd = K Vdot_t + Kdot V_t`` (eqs. 28-29)."""
        known = getattr(sol, "_limb_forces", None)
        if known is not None and np.array_equal(known[0], V_t) and np.array_equal(known[1], Vdot_t):
            return self._platform_wrench(sol, V_t, Vdot_t) + known[2]
        return self._platform_wrench(sol, V_t, Vdot_t) + self._rates(sol, V_t, Vdot_t, poses)[2]

    def _rates(self, sol, V_t, Vdot_t, poses=None):
        """``(thetad, thetadd, sum_l K_l^T Q_l)`` of every limb (flat joint vectors) at the IK
        solution ``sol`` (eqs. 27-29, refined, and the limbs' share of eq. 45; ``Vdot_t`` None:
        ``thetadd`` and the sum None): the compiled kernels
        (:func:`.compiled.limb_tables.compiled_rates`), and for a limb where they stop with a
        status the numpy route (:func:`.ik_refinement.limb_rates`, RNEA)."""
        flat = getattr(sol, "_flat", None)
        if flat is None:
            flat = sol._flat = np.concatenate(sol.limb_theta)
        if self.compiled:
            thd, thdd, W, status = compiled_rates(self._limb_tables, flat, V_t, Vdot_t, self.P_p)
        else:                                    # every limb by the reference route
            thd, status = np.zeros(len(flat)), np.ones(len(self.limbs), dtype=int)
            thdd, W = (None, None) if Vdot_t is None else (np.zeros(len(flat)), np.zeros(self.dof))
        T = self._limb_tables
        for li in np.flatnonzero(status != 0):
            limb, jac, th = self.limbs[li], sol._jacs[li], sol.limb_theta[li]
            st = (getattr(sol, "_states", None) or [None] * len(self.limbs))[li]
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

    def admissible_task_state(self, pose, initial=None) -> PkmIKSolution:
        """The IK solution of ``pose`` (4, 4) (or a batch) with every check the dynamics need:
        those of :meth:`inverse_kinematics` (limits, working mode, limb and loop conditioning)
        and :meth:`check_actuation` of each sample (ID, FD, HOID)."""
        sol = self.inverse_kinematics(pose, initial=initial)
        for J in np.asarray(sol.J_IK).reshape(-1, *np.shape(sol.J_IK)[-2:]):
            self.check_actuation(J)
        return sol

    def _one(self, fn, pose, *arrays, initial=None, **kw):
        if isinstance(pose, PkmIKSolution):
            if np.asarray(pose.pose).ndim == 2:
                return fn(pose, *arrays, initial=initial, **kw)
            samples = [sample(pose, i) for i in range(len(pose.pose))]
        else:
            samples = np.asarray(pose, dtype=float)
            if samples.ndim == 2:
                return fn(samples, *arrays, initial=initial, **kw)
        out = []
        init = initial
        for i in range(len(samples)):
            row = [None if a is None else np.asarray(a)[i] for a in arrays]
            kwi = {k: (None if v is None else np.asarray(v)[i]) for k, v in kw.items()}
            r, init = fn(samples[i], *row, initial=init, _return_solution=True, **kwi)
            out.append(r)
        return np.stack(out)

    def inverse_dynamics(self, x, xd, xdd, wrench=None, *, initial=None):
        """Inverse-dynamics feedforward ``u`` (n_act,) (paper 001 eq. 45) for the task motion
        ``(x = pose (4,4), xd = V_t, xdd = Vdot_t)``, optional platform wrench ``W_EE`` (6,)
        (body-fixed, in the platform frame).  ``x`` may be an :class:`~.interface.IKSolution`;
        ``initial``: where its IK starts.  Batched over a leading axis of x/xd/xdd/wrench."""
        return self._one(self._inverse_dynamics_one, x, xd, xdd, initial=initial, wrench=wrench)

    def _inverse_dynamics_one(self, pose, twist, acceleration, initial=None, wrench=None,
                              _return_solution=False):
        V, A = self._vec(twist, "twist"), self._vec(acceleration, "acceleration")
        if wrench is not None:
            check_effort(wrench, "wrench")
        sol = self._solution(pose, V, A, initial)
        known = getattr(sol, "_u", None)         # the ID the IK of this motion computed (J_IK checked)
        if wrench is None and known is not None and np.array_equal(known[0], V) and np.array_equal(known[1], A):
            return (known[2].copy(), sol) if _return_solution else known[2].copy()
        W = self._generalized_force(sol, V, A)
        if wrench is not None:
            W = W - self.P_p.T @ np.asarray(wrench, dtype=float).reshape(6)
        u = self._solve_u(sol.J_IK, W)
        return (u, sol) if _return_solution else u

    def forward_dynamics(self, x, xd, u, wrench=None, *, initial=None):
        """Task acceleration ``xdd = Vdot_t`` (delta_p,) from eq. 39 for actuator forces ``u``
        (n_act,) at the task state ``(x = pose, xd = V_t)``: ``M_t Vdot_t = J_IK^T u + W_EE -
        (C_t V_t + W_grav)``.  Batched over a leading axis."""
        return self._one(self._forward_dynamics_one, x, xd, u, initial=initial, wrench=wrench)

    def _forward_dynamics_one(self, pose, twist, u, initial=None, wrench=None, _return_solution=False):
        """One state of :meth:`forward_dynamics`: the IK of ``pose`` (warm-started from ``initial``)
        unless it is a solution, then one compiled call (:func:`.compiled.robot_dynamics.
        compiled_forward_dynamics`: inputs checked, limbs' bias and ``M_t``, platform, conditioning,
        solve); a status hands over to the checks that word the error or to the reference route
        (:meth:`_forward_dynamics_reference`)."""
        V, u = np.asarray(twist, dtype=float), np.asarray(u, dtype=float)
        W = None if wrench is None else np.asarray(wrench, dtype=float)
        if V.shape != (self.dof,):
            self._vec(twist, "twist")
        if u.shape != (len(self._act),):
            raise StateError(f"u must hold {len(self._act)} finite actuator forces "
                             f"({', '.join(self.actuated_joints)}), got shape {u.shape}")
        if isinstance(pose, PkmIKSolution):
            sol = pose
        else:                                    # inputs first, as before the IK
            self._fd_inputs(V, u, W)
            sol = self.inverse_kinematics(pose, initial=initial)
        if not self.compiled or (W is not None and W.shape != (6,)):
            return self._forward_dynamics_reference(sol, V, u, W, _return_solution)
        flat = getattr(sol, "_flat", None)
        if flat is None:
            flat = sol._flat = np.concatenate(sol.limb_theta)
        a, status, _ = compiled_forward_dynamics(
            self._limb_tables, flat, V, u, W, self.P_p, self.M_p, sol.pose, self.tree.gravity,
            np.ascontiguousarray(sol.J_IK, dtype=float), self.singularity_threshold)
        if status in (FD_BAD_TWIST, FD_BAD_EFFORT, FD_BAD_WRENCH):
            self._fd_inputs(V, u, W)             # raises the named StateError
        if status != FD_OK:                      # a limb's fallback or a singularity: the numpy route
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
            limb = max(zip(self.limbs, sol._jacs), key=lambda lj: np.linalg.norm(lj[1].K))[0]
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
        from .pkm_derivatives import pkm_forward_dynamics_derivatives
        return pkm_forward_dynamics_derivatives(self, x, xd, u, wrench, initial)

    def inverse_dynamics_derivatives(self, x, xd, xdd, wrench=None, *, initial=None):
        """``u`` of :meth:`inverse_dynamics` at the pose ``x`` (4, 4), twist ``xd``, task
        acceleration ``xdd`` (``wrench`` on the platform) and its exact derivatives ``d_x``, ``d_xd``,
        ``d_u`` (n_act, delta) each: a :class:`~.derivatives.DynamicsDerivatives` (forward mode,
        :mod:`.pkm_derivatives`); batched over a leading axis."""
        from .pkm_derivatives import pkm_inverse_dynamics_derivatives
        return pkm_inverse_dynamics_derivatives(self, x, xd, xdd, wrench, initial)

    def mass_matrix(self, sol: PkmIKSolution, poses=None) -> np.ndarray:
        """``M_t`` (delta_p, delta_p), eq. 40: ``sum_l F_l^T H_l^T M_l H_l F_l + P_p^T M_p P_p``.
        ``poses``: per limb ``(P, Ad(P)^-1)`` at the solution if already known."""
        M = self.P_p.T @ self.M_p @ self.P_p
        poses = [None] * len(self.limbs) if poses is None else poses
        flat = getattr(sol, "_flat", None)
        if flat is None:
            flat = sol._flat = np.concatenate(sol.limb_theta)
        status = compiled_task_inertia(self._limb_tables, flat, M) if self.compiled else \
            np.ones(len(self.limbs), dtype=int)                             # the kernel, or numpy
        for li in np.flatnonzero(status != 0):                              # the numpy route
            limb, th, jac = self.limbs[li], sol.limb_theta[li], sol._jacs[li]
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
        for limb, th, jac in zip(self.limbs, sol.limb_theta, sol._jacs):
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

    def joint_reactions(self, x, xd, u, wrench=None):
        """Wrench transmitted by every tree and cut joint (the loops' constraint forces) at the
        task state ``(pose, V_t)`` under the actuator forces ``u``: see :mod:`.reactions`."""
        from .reactions import joint_reactions
        return joint_reactions(self, x, xd, u, wrench)

    def simulate(self, x0, xd0, duration, **kw):
        """Integrate the forward dynamics in task space: see :mod:`.simulation`."""
        from .simulation import simulate
        return simulate(self, x0, xd0, duration, **kw)

    def higher_order_inverse_dynamics(self, x, xd, xdd, xddd, xdddd, **kw):
        """``u, du, ddu`` (+ SEA motor feedforward), paper 002, for the platform pose ``x``, task
        twist ``xd`` and its 1st..3rd derivatives: see :mod:`.higher_order`."""
        from .higher_order import higher_order_inverse_dynamics
        return higher_order_inverse_dynamics(self, x, xd, xdd, xddd, xdddd, **kw)

    def joint_motion(self, x, xd=None, xdd=None, initial=None) -> IKSolution:
        """The whole robot at the task state ``(x = pose, xd = V_t, xdd = Vdot_t)``: its inverse
        kinematics (:meth:`inverse_kinematics`, from ``initial``)."""
        return self.inverse_kinematics(x, xd, xdd, initial=initial)

    @property
    def seed_reference(self) -> np.ndarray:
        """Where :meth:`inverse_kinematics` starts without ``initial``: the reference
        configuration of the description, all tree joints 0 (nq,)."""
        return np.zeros(self.tree.nq)

    def tree_state(self, x, xd=None, xdd=None):
        """``(q, qd, qdd)`` of every tree joint (order ``tree_joints``) at the platform pose
        ``x`` (4, 4), task twist ``xd`` and its derivative (delta_p,) (default zero): the inverse
        kinematics of the motion (eqs. 23, 27-29).  Batched over a leading axis."""
        pose = np.asarray(x, dtype=float)
        zero = np.zeros(pose.shape[:-2] + (self.dof,))
        sol = self.inverse_kinematics(pose, zero if xd is None else xd, zero if xdd is None else xdd)
        return sol.q, sol.qd, sol.qdd

    # -- forward kinematics -------------------------------------------------------------------
    def forward_kinematics(self, actuators, *, initial=None, tol: float | None = None,
                           max_iter: int | None = None, return_solution: bool = False):
        """Platform pose (4, 4) for actuator values (n_act,): Newton's method on the inverse
        kinematics, ``x <- x + J_IK^-1 (theta_act - f_IK(x))`` with the pose updated as
        ``C <- C exp(P_p dx)`` (body-fixed increment, consistent with eq. 30) until the actuator
        error is below ``tol`` (default 10 x the IK accuracy goal).  ``initial``: a
        start pose (4,4) or a :class:`PkmIKSolution` (default: the reference pose).  Batched over
        a leading axis (each sample starts from the previous result).  Actuator values beyond a
        stroke raise :class:`StateError` naming the joint."""
        a = np.asarray(actuators, dtype=float)
        if a.ndim == 2:
            out, init = [], initial
            for row in a:
                C, s = self.forward_kinematics(row, initial=init, tol=tol, max_iter=max_iter, return_solution=True)
                out.append(C)
                init = s
            return np.stack(out)
        if a.shape != (len(self._act),) or not np.isfinite(a).all():
            raise StateError(f"actuator values must be {len(self._act)} finite numbers, got shape {a.shape}")
        tree = self.description.tree      # a value beyond a stroke is no state of the robot
        check_limits(tree, [tree.joint_index(n) for n in self.actuated_joints], a, "actuator position")
        tol = 10 * self.tol if tol is None else tol
        ik_tol = min(self.tol, 1e-3 * tol)
        max_iter = self.max_iter if max_iter is None else max_iter
        if isinstance(initial, PkmIKSolution):
            C, sol0 = np.asarray(initial.pose, dtype=float), initial
            if C.ndim == 3:
                C = C[-1]
        else:
            C = self.reference_pose.copy() if initial is None else self._check_pose(initial)
            sol0 = None
        sol = self.inverse_kinematics(C, initial=sol0, tol=ik_tol)
        for _ in range(max_iter):
            err = a - sol.actuators
            if np.linalg.norm(err) <= tol:
                return (C, sol) if return_solution else C
            dx = np.linalg.lstsq(sol.J_IK, err, rcond=None)[0]
            C = C @ exp_se3(self.P_p @ dx)
            sol = self.inverse_kinematics(C, initial=sol, tol=ik_tol)
        raise ConvergenceError(f"forward kinematics did not converge in {max_iter} iterations "
                               f"(actuator error {np.linalg.norm(a - sol.actuators):.3g} > {tol:g})")


def sample(sol: PkmIKSolution, i: int) -> PkmIKSolution:
    """Sample ``i`` of a batched :class:`PkmIKSolution`."""
    def at(name):
        v = getattr(sol, name)
        return None if v is None else v[i]

    return PkmIKSolution(at("pose"), at("actuators"), at("q"), at("J_IK"), at("condition"),
                         at("iterations"), at("residual"), [t[i] for t in sol.limb_theta],
                         None if sol.limb_thetad is None else [t[i] for t in sol.limb_thetad],
                         None if sol.limb_thetadd is None else [t[i] for t in sol.limb_thetadd],
                         at("qd"), at("qdd"), at("actuators_d"), at("actuators_dd"),
                         sol.inner[i] if sol.inner else [])


def _stack(sols: list) -> PkmIKSolution:
    def st(name):
        v = [getattr(s, name) for s in sols]
        return None if v[0] is None else np.stack(v)

    out = PkmIKSolution(st("pose"), st("actuators"), st("q"), st("J_IK"), st("condition"),
                        st("iterations"), st("residual"),
                        [np.stack([s.limb_theta[l] for s in sols]) for l in range(len(sols[0].limb_theta))],
                        qd=st("qd"), qdd=st("qdd"), actuators_d=st("actuators_d"),
                        actuators_dd=st("actuators_dd"), inner=[s.inner for s in sols])
    if sols[0].limb_thetad is not None:
        out.limb_thetad = [np.stack([s.limb_thetad[l] for s in sols]) for l in range(len(sols[0].limb_thetad))]
    if sols[0].limb_thetadd is not None:
        out.limb_thetadd = [np.stack([s.limb_thetadd[l] for s in sols]) for l in range(len(sols[0].limb_thetadd))]
    return out


# The module chain as one hybrid limb lives in its own module; importable from here as before.
from .limb_chain import LimbChainRobot  # noqa: E402,F401


def _jacobians(views) -> LimbJacobians:
    """:class:`~.limb_ik.LimbJacobians` from the kernel's ``(H, J_p, L_t, F, K)``."""
    H, J_p, L_t, F, K = views
    return LimbJacobians(H, J_p, J_p @ H, L_t, F, K)
