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

By concept: this module (the robot: limbs, platform, task space, the robot interface),
:mod:`.pkm_kinematics` (inverse and forward kinematics), :mod:`.pkm_task_dynamics` (inverse and
forward dynamics, ``M_t``, the actuation check), :mod:`.pkm_solution` (IK solutions and their
batches).
"""
from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from ..description.robot_description import as_description
from ..errors import DescriptionError
from ..gravity import check_gravity
from ..hoid.higher_order import build_hoid_model, higher_order_inverse_dynamics, hoid_model_with_gravity
from ..hoid.jet_dynamics import jet_model
from .limb_tables import (LimbTables, robot_constants)
from ..limb.limb_model import TWIST_COMPONENTS, build_limbs
from ..interface import IKSolution, SolverOptions
from ..limits import ActuatorLimits
from ..hydraulics.hydraulic_feedforward import cylinder_limits, robot_hydraulics
from ..hydraulics.valve_cylinder import HydraulicModel
from ..reactions.reactions import reaction_model
from ..spatial.se3 import Ad, exp_se3, log_se3, pose_inv
from ..tree.tree_dynamics import forward_kinematics
from .pkm_forward_kinematics import PkmForwardKinematics
from .pkm_kinematics import PkmKinematics
from .pkm_solution import PkmIKSolution, sample  # noqa: F401 (sample: a public helper)
from .pkm_task_dynamics import TaskSpaceDynamics

#: default threshold on kappa(F_(l)), kappa(J_IK) and kappa(M_t) above which the robot reports
#: an input or output singularity (:class:`~.interface.SolverOptions`)
SINGULARITY_THRESHOLD = SolverOptions.singularity_threshold


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


class ParallelRobot(PkmKinematics, PkmForwardKinematics, TaskSpaceDynamics):
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
    compiled kernels (:mod:`~pkm_dynamics.core.pkm.limb_tables`); False runs the numpy reference route for
    every limb (the same results to round-off: for comparisons).

    Every IK solution is refined to round-off (so rates and accelerations are exact for it),
    lies on the working mode of its start and within the joint limits (:mod:`.working_mode`).

    Public API (numpy in/out, leading batch axis allowed): :meth:`inverse_kinematics`,
    :meth:`inverse_dynamics`, :meth:`forward_dynamics`, :meth:`forward_kinematics`,
    :meth:`task_space_dynamics`, :meth:`task_pose`; attributes ``actuated_joints``,
    ``tree_joints``, ``task_space``, ``limbs``, ``reference_pose``.
    """

    kind = "parallel"
    #: the first derivatives are numpy jets (:mod:`..derivatives.pkm_derivatives`)
    compiled_derivatives = False
    state_space = "task"
    passive_joints = ()

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
        self.limits = ActuatorLimits.from_description(desc)     # per actuator (core/limits.py)
        self.limb_names = tuple(limb.name for limb in self.limbs)
        self._limb_tables = LimbTables.build(self.limbs, self.max_iter)
        #: ``singularity_threshold``, ``loop_singularity_threshold`` as the kernels take them (< 0: none)
        self._kernel_thresholds = tuple(-1.0 if t is None else float(t) for t in
                                        (self.singularity_threshold, self.loop_singularity_threshold))
        self.compiled = True
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
        #: the shapes of a task twist (delta_p,) and of the actuator forces (n_act,)
        self._input_shapes = ((dp,), (len(self._act),))
        toff = self._limb_tables.toff
        self._act_flat = np.array([toff[li] + j for li, j in self._act], dtype=int)
        self._K_rows = self._limb_tables.rows_of_K(self._act)
        src = [toff[li] + j for li, limb in enumerate(self.limbs) for j in range(limb.n) if limb.whole_index[j] >= 0]
        self._whole_src = np.array(src, dtype=int)
        self._whole_dst = np.concatenate([limb.whole_index[limb.whole_index >= 0] for limb in self.limbs]).astype(int)
        covered = np.full(tree.nq, -1)          # the flat entry each tree joint takes its value from
        covered[self._whole_dst] = self._whole_src
        self._whole_gather = covered if (covered >= 0).all() else None
        self._rc = robot_constants(self.reference_pose, self.P_p, self.M_p, self.tree.gravity)
        #: joint friction (:class:`~..friction.JointFriction`, None: none) and its rows per flat
        #: limb joint (:mod:`.pkm_friction`), read-only
        self.friction = desc.friction
        self.friction_table = None if desc.friction is None else flat_friction_table(
            desc.friction.table, toff, self._whole_src, self._whole_dst, tree.nq)
        self.reaction_model = reaction_model(self)        # read-only: built here, not at a call
        self.jet_model = jet_model(desc)                  # the general route of the derivatives, read-only
        # paper 002's model (its recursion compiled, the Taylor route on jet_model), read-only
        self.hoid_model = build_hoid_model(desc, self.jet_model, (self.reference_pose, self.P_p))
        self.hydraulic_model = HydraulicModel.build(desc.hydraulics, desc.actuated_joints)   # read-only
        self.limits = cylinder_limits(self.limits, self.hydraulic_model)   # supply x area, valve flow

    def with_gravity(self, gravity) -> "ParallelRobot":
        """This robot under ``gravity`` (3,) [m/s^2, root link frame] (a base on a vehicle: see
        :mod:`~pkm_dynamics.core.gravity`): a light copy that shares every model array but those
        gravity enters -- each limb tree's base acceleration in a copy of the limb tables' float
        pack, the robot constants (eq. 38's platform gravity), the description's and the limbs'
        trees, the jet and higher-order models -- without rebuilding the model or compiling a
        kernel.  This robot is unchanged.  Bad gravity raises
        :class:`~pkm_dynamics.core.errors.StateError` naming it."""
        other = copy.copy(self)
        other._use_gravity(check_gravity(gravity))
        return other

    def _use_gravity(self, g) -> None:
        """Replace the gravity-dependent models of a fresh copy (:meth:`with_gravity` only)."""
        desc = as_description(self.description, g)
        self.description, self.tree = desc, desc.tree
        self.limbs = tuple(replace(limb, tree=limb.tree.with_gravity(g)) for limb in self.limbs)
        self._limb_tables = self._limb_tables.with_limbs(self.limbs)
        self._rc = robot_constants(self.reference_pose, self.P_p, self.M_p, g)
        self.jet_model = replace(self.jet_model, desc=desc)
        self.hoid_model = hoid_model_with_gravity(self.hoid_model, desc, self.jet_model)

    @property
    def gravity(self) -> np.ndarray:
        """Gravity (3,) [m/s^2] in the root link frame."""
        return self.tree.gravity

    # -- names and solver options (read-only: ``options`` is fixed) ----------------------------
    @property
    def limb_tables(self) -> LimbTables:
        """The limbs' packed model and per-thread scratch of the compiled kernels (read only)."""
        return self._limb_tables

    @property
    def reference_constants(self) -> np.ndarray:
        """``C_ref``, ``P_p``, ``M_p`` and gravity packed for the compiled reference
        (:func:`~pkm_dynamics.core.pkm.limb_tables.robot_constants`; a read-only array)."""
        return self._rc

    @property
    def J_IK_positions(self) -> np.ndarray:
        """(n_act, delta_p) positions in the limbs' scratch (``limb_tables.data()[0]``) of the
        entries of ``J_IK`` (eq. 30: the actuators' rows of the limbs' ``K``); read only."""
        return self._K_rows

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

    def joint_reactions(self, x, xd, u, wrench=None):
        """Wrench transmitted by every tree and cut joint (the loops' constraint forces) at the
        task state ``(pose, V_t)`` under the actuator forces ``u``: see :mod:`.reactions`."""
        from ..reactions.reactions import joint_reactions
        return joint_reactions(self, x, xd, u, wrench)

    def simulate(self, x0, xd0, duration, **kw):
        """Integrate the forward dynamics in task space: see :mod:`.simulation`."""
        from ..simulation import simulate
        return simulate(self, x0, xd0, duration, **kw)

    def higher_order_inverse_dynamics(self, x, xd, xdd, xddd, xdddd, **kw):
        """``u, du, ddu`` (+ SEA motor feedforward), paper 002, for the platform pose ``x``, task
        twist ``xd`` and its 1st..3rd derivatives: see :mod:`.higher_order` (one kernel call,
        :mod:`.hoid_robot_kernels`, with the checks of :meth:`admissible_task_state`)."""
        return higher_order_inverse_dynamics(self, x, xd, xdd, xddd, xdddd, **kw)

    def hydraulics(self, x, xd, xdd, xddd=None, check: bool = True, times=None):
        """Chamber pressures, flows, spool commands and hydraulic power of the cylinders for the
        task motion (pose, ``V_t`` and its derivatives): see :mod:`.hydraulic_feedforward`."""
        return robot_hydraulics(self, x, xd, xdd, xddd, check, times)

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

from .limb_chain import LimbChainRobot  # noqa: E402,F401
from .pkm_friction import flat_friction_table  # noqa: E402
