"""The kinematics of a :class:`~.pkm.ParallelRobot` (paper 001 Secs. 3.6-4): inverse
kinematics of every limb (nested Algorithms 1+2 or compound Algorithm 3, one compiled call per
reference where the kernels can take it: :mod:`~pkm_dynamics.core.pkm.robot_kernels`), velocity and
acceleration IK (eqs. 27-29) and ``J_IK`` (eq. 30); the IK of a Newton iterate of the forward
kinematics (:mod:`.pkm_forward_kinematics`).  :class:`PkmKinematics` is a part of
:class:`~.pkm.ParallelRobot` (a mixin: it uses the robot's limbs, platform, options and
compiled tables)."""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from ..bounds import MAX_RATE, check_rate
from ..errors import ConvergenceError, SingularityError, StateError
from .limb_tables import CompiledIK, LazyLimbs, compiled_ik
from .reference_call import compiled_motion, compiled_reference
from .robot_kernels import task_manifold_offset
from ..limb.limb_ik import (limb_inverse_kinematics_compound, limb_inverse_kinematics_nested, limb_jacobians,
                            step_partition)
from ..limb.limb_kinematics import limb_platform_pose, limb_state
from ..limb.limb_model import TWIST_COMPONENTS
from ..limb.ik_refinement import check_loop_conditions, refine_to_round_off
from ..limb.loop_partition import partition_at
from ..interface import IKSolution
from ..spatial.se3 import log_se3, pose_inv
from ..status import (BAD_INPUT, DIRECT_STEP, FAR_STEP, ILL_CONDITIONED, LIMB_STATUS, LIMITS, LOOP_CONDITION,
                      MANIFOLD_TOLERANCE, MISS_TOLERANCE, NO_CONVERGENCE, OK, ORTHONORMAL_TOLERANCE, OTHER_BRANCH,
                      SINGULAR)
from .working_mode import apply_joint_limits, solve_direct, solve_on_working_mode
from .pkm_solution import (KernelIKSolution, MotionValue, PkmIKSolution, jacobians_of_views, pkm_solution,
                           stack_solutions)


class ReferenceMotion(NamedTuple):
    """The actuator motion of one feedforward reference (:meth:`PkmKinematics.reference_motion`):
    positions, rates, accelerations, forces (n_act,) each, the worst ``kappa(F)`` of the limbs,
    the flat limb joint vector ``theta`` (where the next reference's IK starts), and
    ``tree_q()``: the tree-joint values (n,), made when asked."""
    actuators: np.ndarray
    actuators_d: np.ndarray
    actuators_dd: np.ndarray
    u: np.ndarray
    condition: float
    theta: np.ndarray
    tree_q: Callable[[], np.ndarray]


#: the compiled limb IK's status codes (:mod:`~pkm_dynamics.core.status`) in words
LIMB_STATUS_WORDS = {OK: "solved", SINGULAR: "a singular matrix", NO_CONVERGENCE: "no convergence",
                     ILL_CONDITIONED: "kappa(F) beyond the threshold", FAR_STEP: "a joint moved beyond the direct step",
                     OTHER_BRANCH: "another assembly branch", LOOP_CONDITION: "a loop near a singularity",
                     LIMITS: "a joint beyond its limits"}
#: largest loop residual (m, rad) of a start configuration regarded as assembled
ASSEMBLED = 1e-6
#: pose gap (:func:`pose_gap`) beyond which a batch's sample is not a step along a path: it starts
#: from the batch's start where that is nearer (:meth:`PkmKinematics._ik_batch_sample`)
FAR_POSE = 0.02


def pose_gap(A, B) -> float:
    """A cheap distance of two poses (4, 4): the sum of the absolute differences of their
    rotation and translation entries (m and unitless)."""
    return float(np.abs(A[:3] - B[:3]).sum())


class PkmKinematics:
    """Inverse and forward kinematics of a parallel robot (part of the robot class)."""

    def _initial_flat(self, initial):
        """The flat limb joint vector (n_theta,) where the IK starts (read, never written): zeros
        (the reference configuration), a previous :class:`PkmIKSolution`'s ``flat`` (one sample)
        or ``limb_theta`` (the last sample of a batch), or tree-joint values (n,)."""
        if initial is None:
            return np.zeros(self._limb_tables.n)
        if isinstance(initial, PkmIKSolution):
            if initial.flat is not None and initial.flat.ndim == 1:
                return initial.flat                 # one sample's joints end to end (read only here)
            th = initial.limb_theta
            if np.asarray(th[0]).ndim == 2:
                th = [t[-1] for t in th]
            return np.concatenate(th).astype(float, copy=False)
        q = np.asarray(initial, dtype=float)
        if q.shape != (self.tree.nq,):
            raise StateError(f"initial configuration has shape {q.shape}, expected ({self.tree.nq},)")
        return np.concatenate([np.where(limb.whole_index >= 0, q[np.maximum(limb.whole_index, 0)], 0.0)
                               for limb in self.limbs])

    def _whole_flat(self, flat):
        """Tree-joint values (n,) from the flat joint vector of the limbs: one gather where every
        tree joint is a limb's (``_whole_gather``), else the tree joints of no limb 0."""
        if self._whole_gather is not None:
            return flat[self._whole_gather]
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
        if np.abs(off).max() > MANIFOLD_TOLERANCE:
            bad = [f"{c} {v:.3g}" for c, v in zip(TWIST_COMPONENTS, off) if abs(v) > MANIFOLD_TOLERANCE]
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

    def _limb_ik_reference(self, limb, pose, th0, scheme, tol, iterate=False):
        """One limb's IK by the numpy route (:mod:`.limb_ik`, :mod:`.working_mode`,
        :mod:`.ik_refinement`) with every refusal: ``(theta, outer, inner, jac, state, kappa(F))``.
        The compiled kernel (:func:`~pkm_dynamics.core.pkm.limb_tables.compiled_ik`) does the same for the
        common case and hands every other one over to this.  ``iterate``: a Newton iterate of the
        forward kinematics: the direct solve only (:func:`.working_mode.solve_direct`), the
        joint limits not enforced (they are checked on the forward kinematics' solution)."""
        solver = limb_inverse_kinematics_nested if scheme == "nested" else limb_inverse_kinematics_compound
        solve = solve_direct if iterate else solve_on_working_mode
        try:
            theta, info = solve(solver, limb, pose, th0, tol=tol, max_iter=self.max_iter,
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
        if miss > MISS_TOLERANCE:
            raise ConvergenceError(
                f"{limb.name}: inverse kinematics converged on its {len(limb.task_rows)} platform "
                f"coordinates to a configuration whose platform pose is {miss:.3g} away from the "
                "requested one (another assembly branch of the separated limb); start closer")
        # Remarks 2-3: a loop whose partition is singular here takes the best one; refused only
        # where that is singular too (:mod:`.loop_partition`)
        lthr = self.loop_singularity_threshold
        check_loop_conditions(partition_at(limb, state, lthr), state, lthr)
        theta = apply_joint_limits(limb, theta, th0, check=not iterate)
        jac = step_partition(limb, theta, state, self.singularity_threshold, lthr, check=False)[1]
        k = jac.condition
        if self.singularity_threshold is not None and not k <= self.singularity_threshold:
            raise SingularityError(f"{limb.name}: inverse kinematics Jacobian F is ill-conditioned "
                                   f"(kappa(F) = {k:.3g} > threshold {self.singularity_threshold:.3g}) "
                                   "at the requested pose: near an input singularity")
        return theta, info.outer, info.inner, jac, state, k

    def _reference_kernel(self, pose, twist, acceleration, theta0, scheme, tol):
        """The compiled reference (:func:`~pkm_dynamics.core.pkm.reference_call.compiled_reference`)
        from the flat limb joint vector ``theta0`` when the inputs have the shapes it takes; None
        where the Python checks must run first.  The kernel reads copies of the pose, twist and
        acceleration (``inputs`` of its result: a solution's own)."""
        shape = self._input_shapes[0]
        pose = np.array(pose, dtype=float)
        if twist is None:
            level, V = 0, np.zeros(shape)
            A = V
        else:
            V = np.array(twist, dtype=float)
            level, A = (1, np.zeros(shape)) if acceleration is None else (2, np.array(acceleration, dtype=float))
        if pose.shape != (4, 4) or V.shape != shape or A.shape != shape:
            return None
        thr, lthr = self._kernel_thresholds
        r = compiled_reference(self._limb_tables, self._rc, self._K_rows, self._act_flat, pose, theta0,
                               scheme == "nested", tol, thr, lthr, V, A, level)
        return None if r.code == BAD_INPUT else r

    def _ik_one(self, pose, twist, acceleration, start, scheme, tol=None, iterate=False):
        """One reference's :class:`PkmIKSolution` from the flat limb joint vector ``start``
        (n_theta,; read, not written): the compiled reference where it runs, then
        :meth:`_ik_solution`."""
        tol = self.tol if tol is None else tol
        r = self._reference_kernel(pose, twist, acceleration, start, scheme, tol) if self.compiled else None
        return self._ik_solution(pose, twist, acceleration, start, scheme, tol, r, iterate)

    def _ik_solution(self, pose, twist, acceleration, start, scheme, tol, r, iterate=False):
        """The :class:`PkmIKSolution` of one reference from the compiled reference's result
        ``r`` (:meth:`_reference_kernel`; None: it did not run or refused the input's shape):
        the checks that word a refusal, and the reference route for every limb the kernel
        handed over (``start``: the flat limb joint vector the IK starts from).  ``iterate``: a
        Newton iterate of the forward kinematics (:meth:`_limb_ik_reference`): a limb the
        kernel stopped for another reason than its joint limits is refused at once
        (:class:`ConvergenceError`).  The solution is built once with every field; where the
        kernel completed the rates (its checks of ``V_t``, ``Vdot_t`` passed) they are its own."""
        if r is not None and r.code == OK:
            return self._kernel_solution(pose, twist, acceleration, r, scheme)
        T = self._limb_tables
        if iterate and r is not None:
            for li in np.flatnonzero((r.status != OK) & (r.status != LIMITS)):
                raise ConvergenceError(f"{self.limbs[li].name}: no direct inverse kinematics solve from "
                                       f"the previous iterate ({LIMB_STATUS_WORDS[r.status[li]]})")
        if r is None:                            # the checks word a refusal
            pose = self._check_pose(pose)
            self._check_task_manifold(pose)
        else:
            pose = np.array(pose, dtype=float)
        if r is None and self.compiled:
            r = compiled_ik(T, pose, start, scheme == "nested", tol, self.singularity_threshold,
                            self.loop_singularity_threshold)
        elif r is None:                          # every limb by the reference route
            r = CompiledIK(np.array(start, dtype=float), np.ones(len(self.limbs), dtype=int),
                           np.zeros((len(self.limbs), 3)), None, np.zeros(self._K_rows.max() + 1))
        flat, fd, L = r.theta, r.fd, len(self.limbs)
        its, cond = r.out[:, 0].astype(int), r.out[:, 1].copy()
        res = float(r.out[:, 2].max(initial=0.0))
        jacs = LazyLimbs(L, lambda l: jacobians_of_views(T.state(l, fd)[1]))
        states = LazyLimbs(L, lambda l: T.state(l, fd)[0])
        if scheme == "nested":
            inner = [T.inner(l, r.inner, its[l]) if r.status[l] == OK else [] for l in range(L)]
        else:
            inner = [[] for _ in range(L)]
        if r.J is None:                          # a limb's refusal or the continuation
            J_IK = fd[self._K_rows]
            res = self._limbs_by_reference(pose, start, scheme, tol, iterate, r, J_IK, its, cond, inner, jacs,
                                           states, res)
        else:
            J_IK = r.J
        if twist is None and acceleration is not None:
            raise StateError("an acceleration needs a twist")
        fields = dict(inner=inner, flat=flat, jacobians=jacs, limb_states=states)
        if twist is not None:
            if r.thd is None:
                V = self._vec(twist, "twist").copy()
                A = None if acceleration is None else self._vec(acceleration, "acceleration").copy()
                thd, thdd, W = self._rates(PkmIKSolution(limb_theta=T.split(flat), **fields), V, A)
            else:                                # the kernel's rates (its checks of V, A passed)
                V = np.array(twist, dtype=float)
                A = None if acceleration is None else np.array(acceleration, dtype=float)
                thd, thdd, W = r.thd, r.thdd, r.W
            fields.update(limb_thetad=T.split(thd), qd=self._whole_flat(thd), actuators_d=thd[self._act_flat])
            if A is not None:                    # the limbs' forces of this motion, for the ID of the solution
                g = self.tree.gravity
                fields.update(limb_thetadd=T.split(thdd), qdd=self._whole_flat(thdd),
                              actuators_dd=thdd[self._act_flat], limb_forces=MotionValue(V, A, W, g),
                              efforts=None if r.u is None else MotionValue(V, A, r.u, g))   # eq. 45, J_IK checked
        return PkmIKSolution(pose, flat[self._act_flat], self._whole_flat(flat), J_IK, cond, its, np.array(res),
                             T.split(flat), **fields)

    def _kernel_solution(self, pose, twist, acceleration, r, scheme):
        """:meth:`_ik_solution` where the compiled reference completed (``r.code`` OK: every limb
        solved, ``J_IK`` and the rates of its level, its checks of ``V_t``, ``Vdot_t`` passed): the
        same solution, its fields but the pose, ``J_IK``, ``flat`` and the limbs' forces made on
        their first read (:class:`~.pkm_solution.KernelIKSolution`)."""
        if twist is None and acceleration is not None:
            raise StateError("an acceleration needs a twist")
        P, V, A = r.inputs                               # copies of the pose, V_t, Vdot_t (_reference_kernel)
        sol = KernelIKSolution(P, r.J, r.theta, r.thd, r.thdd, r.out.copy(), r.inner,
                               r.fd, self._limb_tables, self._act_flat, self._whole_flat, scheme == "nested")
        if acceleration is not None:                     # the limbs' forces and eq. 45's u of this motion
            g = self.tree.gravity
            sol.limb_forces, sol.efforts = MotionValue(V, A, r.W, g), MotionValue(V, A, r.u, g)
        return sol

    def _limbs_by_reference(self, pose, start, scheme, tol, iterate, r, J_IK, its, cond, inner, jacs, states, res):
        """The reference route (:meth:`_limb_ik_reference`) for every limb the kernel stopped
        with a status in ``r``: its joints into ``r.theta``, its rows of ``J_IK`` and its
        entries of ``its``, ``cond``, ``inner``, ``jacs``, ``states`` (in place); the check of
        the assembly mode after a continuation.  Returns the largest loop residual (``res``
        and those of the limbs taken over)."""
        T = self._limb_tables
        thetas = T.split(np.asarray(start, dtype=float))
        continued = False
        for li in np.flatnonzero(r.status != OK):
            limb, th0 = self.limbs[li], thetas[li]
            theta, its[li], inner[li], jacs[li], states[li], cond[li] = \
                self._limb_ik_reference(limb, pose, th0, scheme, tol, iterate)
            continued = continued or np.abs(theta - th0).max(initial=0.0) > DIRECT_STEP
            r.theta[T.toff[li]:T.toff[li + 1]] = theta
            res = max([res] + [np.max(np.abs(g)) for g, _, _ in states[li][2] if len(g)])
            for a, (l, j) in enumerate(self._act):
                if l == li:
                    J_IK[a] = jacs[li].K[j]
        if continued:
            self._check_assembly_mode(thetas, J_IK)
        return res

    def _check_assembly_mode(self, thetas, J_IK):
        """The continuation of a limb's IK (:func:`.working_mode.solve_on_working_mode`) follows
        the straight task-space path from the start configuration ``thetas`` (per limb); a limb
        stays on its working mode, but the robot may cross an actuation singularity on the way
        (``J_IK`` singular, eq. 30: the platform moves with the actuators locked) onto another
        assembly mode, which the robot cannot reach from the start and the forward kinematics
        from the start's actuators does not return.  Raises :class:`SingularityError` when
        ``det J_IK`` (n_act = delta_p) at the solution (``J_IK``) and at the start have opposite
        signs.  A start that is not assembled (a loop open, or the limbs' platform poses apart:
        tree-joint values given as a seed) is on no assembly mode: not checked."""
        if J_IK.shape[0] != J_IK.shape[1]:
            return
        states = [limb_state(limb, th) for limb, th in zip(self.limbs, thetas)]
        poses = [limb_platform_pose(limb, th, st[0]) for limb, th, st in zip(self.limbs, thetas, states)]
        gap = max([np.abs(g).max(initial=0.0) for st in states for g, _, _ in st[2]]
                  + [np.abs(log_se3(pose_inv(poses[0]) @ C)).max() for C in poses])
        if gap > ASSEMBLED:
            return
        J0 = np.array([limb_jacobians(self.limbs[l], thetas[l], states[l]).K[j] for l, j in self._act])
        if np.linalg.det(J0) * np.linalg.det(J_IK) < 0:
            raise SingularityError("the straight task-space path from the start configuration to the requested "
                                   "pose crosses an actuation singularity (det J_IK changes sign: the platform "
                                   "would move with the actuators locked): the pose is on another assembly "
                                   "mode of the robot than the start; start on that mode, or closer")

    def reference_motion(self, pose, twist, acceleration, warm=None) -> ReferenceMotion:
        """One reference of a feedforward stream: the :class:`ReferenceMotion` (actuator
        positions, rates, accelerations and forces ``u`` of eq. 45) of the task motion ``pose``
        (4, 4), ``V_t``, ``Vdot_t`` (delta_p,), the same numbers as :meth:`inverse_kinematics`
        then :meth:`inverse_dynamics`.  ``warm``: the ``theta`` of the previous reference's
        result (where the IK starts; None: the reference configuration).  One compiled call
        (:func:`~pkm_dynamics.core.pkm.reference_call.compiled_motion`) when it completes; else
        the IK solution of its result and the ID of that, which word any refusal."""
        T, scheme, tol = self._limb_tables, self.ik_scheme, self.tol
        flat = np.zeros(T.n) if warm is None else np.ascontiguousarray(warm, dtype=float)
        r = None
        if self.compiled:
            c = np.ascontiguousarray
            P, V, A = c(pose, dtype=float), c(twist, dtype=float), c(acceleration, dtype=float)
            shape = self._input_shapes[0]
            if P.shape == (4, 4) and V.shape == shape and A.shape == shape and flat.shape == (T.n,):
                thr, lthr = self._kernel_thresholds
                r = compiled_motion(T, self._rc, self._K_rows, self._act_flat, P, flat, scheme == "nested", tol, thr,
                                    lthr, V, A)
                if type(r) is tuple:             # the kernel completed: the actuators' rows, u, kappa
                    theta, a, u, kappa = r
                    return ReferenceMotion(a[0], a[1], a[2], u, kappa, theta, lambda: self._whole_flat(theta))
                if r.code == BAD_INPUT:         # the Python checks word the refusal
                    r = None
        sol = self._ik_solution(pose, twist, acceleration, flat, scheme, tol, r)
        u = self.inverse_dynamics(sol, twist, acceleration)
        return ReferenceMotion(sol.actuators, sol.actuators_d, sol.actuators_dd, u, float(np.max(sol.condition)),
                               sol.flat, lambda: sol.q)

    def inverse_kinematics(self, pose, twist=None, acceleration=None, initial=None, *,
                           scheme: str | None = None, tol: float | None = None) -> IKSolution:
        """Actuator values and every tree-joint value for the platform pose ``pose`` (4, 4)
        (paper 001 eq. 23 per limb, Algorithms 1-3), plus their rates and accelerations when the
        task twist ``V_t`` (delta_p,) and acceleration ``Vdot_t`` (delta_p,) are given (eqs.
        27-30).  Batched: ``pose`` (N, 4, 4), ``twist``/``acceleration`` (N, delta_p); each
        sample starts from the previous solution (from ``initial`` where the compiled IK cannot
        take that step directly: :meth:`_ik_batch_sample`).  ``initial``: start configuration (a previous
        :class:`PkmIKSolution` or tree-joint values (n,); default: the reference configuration).
        ``scheme``: ``"nested"`` or ``"compound"``, ``tol``: accuracy goal (defaults: the robot's
        ``options``; per call, for comparing schemes and for the forward kinematics' inner solves)."""
        scheme = self.ik_scheme if scheme is None else scheme
        if scheme not in ("nested", "compound"):
            raise StateError(f"IK scheme '{scheme}' is not 'nested' or 'compound'")
        pose = np.asarray(pose, dtype=float)
        start = self._initial_flat(initial)
        if pose.ndim == 2:
            return self._ik_one(pose, twist, acceleration, start, scheme, tol)
        N = pose.shape[0]
        tw = [None] * N if twist is None else np.asarray(twist, dtype=float)
        ac = [None] * N if acceleration is None else np.asarray(acceleration, dtype=float)
        home = self._start_pose(initial)
        sols = [self._ik_one(pose[0], tw[0], ac[0], start, scheme, tol)]
        for i in range(1, N):
            home_first = home is not None and pose_gap(pose[i - 1], pose[i]) > FAR_POSE \
                and pose_gap(home, pose[i]) < pose_gap(pose[i - 1], pose[i])
            sols.append(self._ik_batch_sample(pose[i], tw[i], ac[i], sols[-1].flat, start, scheme, tol, home_first))
        return stack_solutions(sols)

    def inverse_kinematics_from(self, pose, flat, twist=None, acceleration=None) -> IKSolution:
        """:meth:`inverse_kinematics` of one pose (4, 4) (with ``V_t``, ``Vdot_t`` (delta_p,)
        when given) from the flat limb joint vector ``flat`` (n_theta,: a solution's ``flat``, a
        :class:`ReferenceMotion`'s ``theta``; read, not written), the robot's scheme and
        tolerance: the warm start of a sweep that keeps the joints of the last pose, not its
        solution."""
        flat = np.asarray(flat, dtype=float)
        if flat.shape != (self._limb_tables.n,):
            raise StateError(f"limb joint vector has shape {flat.shape}, expected ({self._limb_tables.n},)")
        return self._ik_one(pose, twist, acceleration, flat, self.ik_scheme)

    def _start_pose(self, initial):
        """The platform pose of the start configuration ``initial`` (None: the reference pose; a
        solution: its (last) pose; tree-joint values: None, unknown)."""
        if initial is None:
            return self.reference_pose
        P = getattr(initial, "pose", None)
        return None if P is None else np.asarray(P, dtype=float).reshape(-1, 4, 4)[-1]

    def _ik_batch_sample(self, pose, twist, acceleration, previous, initial, scheme, tol=None, home_first=False):
        """A batch's sample after the first: the compiled IK from the ``previous`` sample's
        solution (flat, the warm start along a path); where the kernel hands a limb over to the
        reference route (the step is beyond its direct step: the batch is not a path, e.g. a
        grid or random poses), the compiled IK from ``initial`` (the batch's start, as a one-pose
        call), and the continuation from ``previous`` only where that fails too.  ``home_first``
        (the pose is far from the previous one and nearer the start's): ``initial`` is tried
        first."""
        tol = self.tol if tol is None else tol
        if not self.compiled:
            return self._ik_one(pose, twist, acceleration, previous, scheme, tol)
        order = (initial, previous) if home_first else (previous, initial)
        r = self._reference_kernel(pose, twist, acceleration, order[0], scheme, tol)
        if r is not None and r.code == LIMB_STATUS:
            other = self._reference_kernel(pose, twist, acceleration, order[1], scheme, tol)
            if other is not None and other.code != LIMB_STATUS:
                return self._ik_solution(pose, twist, acceleration, order[1], scheme, tol, other)
            if order[0] is initial:                  # the continuation runs from the previous sample
                r = other
            else:
                r = self._reference_kernel(pose, twist, acceleration, previous, scheme, tol)  # its scratch again
        return self._ik_solution(pose, twist, acceleration, previous, scheme, tol, r)

    # -- task-space dynamics ------------------------------------------------------------------
    def _solution(self, pose, twist, acceleration, initial):
        if isinstance(pose, IKSolution):
            if getattr(pose, "jacobians", None) is None:
                return pkm_solution(pose, jacobians=[limb_jacobians(limb, th)
                                                     for limb, th in zip(self.limbs, pose.limb_theta)])
            return pose
        return self.inverse_kinematics(pose, twist, acceleration, initial)
