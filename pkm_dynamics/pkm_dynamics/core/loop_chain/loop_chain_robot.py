"""The robot object of a serial chain of loops (:class:`LoopChainRobot`): the robot interface of
:mod:`..interface` in actuator space on the constraint-embedding route of paper 001 (Secs.
3.4-5.2: ``H``, ``Hdot``, loop closure by Newton on the assembly branch of the reference
configuration, :class:`~..pkm.limb_chain.LimbChainRobot`), for the descriptions the module-chain
recogniser of paper 000 refuses (an excavator's bucket linkage: two loops for one cylinder)."""
from __future__ import annotations

import numpy as np

from ..bounds import MAX_EFFORT, MAX_RATE, check_bound, check_limits
from ..description.robot_description import as_description
from ..errors import StateError
from ..gravity import check_gravity
from ..hoid.higher_order import build_hoid_model
from ..hydraulics.hydraulic_feedforward import cylinder_limits, robot_hydraulics
from ..hydraulics.valve_cylinder import HydraulicModel
from ..interface import IKSolution, SolverOptions
from ..limb.limb_model import build_limbs
from ..limits import ActuatorLimits
from ..pkm.limb_chain import LimbChainRobot
from ..reactions.reactions import ReactionModel, joint_reactions
from ..spatial.se3 import Ad_inv
from ..status import LIMIT_SLACK
from ..tree.compiled_tree import CompiledTree
from ..tree.tree_dynamics import forward_kinematics
from .loop_chain_checks import check_loop_chain
from .loop_chain_compiled import CompiledLoopChain
from .loop_chain_passive import (coordinate_jet_model, hybrid_rate, passive_derivatives,
                                 passive_higher_order_inverse_dynamics)

#: accuracy of the loop closure (largest constraint residual, m and rad)
CLOSURE_TOLERANCE = 1e-12


#: the package's bound (:mod:`..bounds`) and unit of each named state array: the rates and the
#: efforts (positions: the strokes and joint limits)
STATE_BOUNDS = {"xd": (MAX_RATE[1], "(m or rad)/s"), "xdd": (MAX_RATE[2], "(m or rad)/s^2"),
                "xddd": (MAX_RATE[3], "(m or rad)/s^3"), "xdddd": (MAX_RATE[4], "(m or rad)/s^4"),
                "u": (MAX_EFFORT, "(N or N m)")}

class LoopChainRobot:
    """A serial chain of loops and actuated joints with a free end effector, in actuator space:
    ``x``, ``xd``, ``xdd`` are the actuator positions, rates and accelerations (n,), order
    ``actuated_joints`` (the description's).  Every call takes one state or a batch (leading
    axis).  Built by :func:`~..robot.load_robot` when the module-chain recogniser refuses the
    description; refused here (:func:`.loop_chain_checks.check_loop_chain`) when a loop lacks an
    actuator, an actuator has nothing to drive, or a joint outside the loops is neither actuated nor
    declared passive.

    Attributes: those of :class:`~..interface.Robot`, ``route`` (the constraint-embedding
    route in numpy, the reference), ``compiled`` (the same route compiled,
    :mod:`.loop_chain_compiled`: it serves the dynamics, the tree state and the IK's pose and
    Jacobian, handing the route a state it cannot close directly), ``hoid_model`` (the Taylor
    route of paper 002's quantities), ``reaction_model`` (:mod:`..reactions.reactions`),
    ``gravity`` (3,), ``lower`` / ``upper`` (n,): the strokes."""

    kind = "loop_chain"
    #: the first derivatives are numpy jets (tens to hundreds of ms), not compiled kernels: the
    #: stream's hydraulic rate takes a central difference of compiled calls instead
    #: (:func:`..hydraulics.hydraulic_feedforward.force_rate` with ``exact`` False)
    compiled_derivatives = False
    state_space = "actuator"
    task_space = ()
    twist_components = ("wx", "wy", "wz", "vx", "vy", "vz")

    def __init__(self, description, gravity=None, options: SolverOptions | None = None):
        desc = as_description(description, gravity)
        (free,) = build_limbs(desc)
        check_loop_chain(desc, free)
        self._options = SolverOptions() if options is None else options
        self.description = desc
        self.tree = desc.tree
        self.passive_joints = tuple(desc.passive)
        self.coordinates = tuple(desc.actuated_joints) + self.passive_joints
        self.route = LimbChainRobot(desc, tol=CLOSURE_TOLERANCE, max_iter=self._options.max_iterations,
                                    warm_start=False, coordinates=self.coordinates)
        self.compiled_tree = CompiledTree.build(self.tree)       # the IK's acceleration bias
        self.name = desc.name
        self.root_link = self.tree.root_link
        self.end_effector = desc.end_effector
        self.actuated_joints = tuple(desc.actuated_joints)
        self.tree_joints = tuple(self.tree.joint_names)
        self.limb_names = (self.name,)
        self.seed_joints = self.actuated_joints
        self.gravity = np.array(self.tree.gravity, dtype=float)
        self.actuated = np.array([self.tree.joint_index(j) for j in self.actuated_joints], dtype=int)
        self.coordinate_index = np.array([self.tree.joint_index(j) for j in self.coordinates], dtype=int)
        self.lower = np.array(self.tree.lower, dtype=float)[self.coordinate_index]
        self.upper = np.array(self.tree.upper, dtype=float)[self.coordinate_index]
        self._floor, self._ceiling = self.lower - LIMIT_SLACK, self.upper + LIMIT_SLACK    # check_limits'
        self.compiled = CompiledLoopChain(self.route, (self._floor, self._ceiling))
        self.hoid_model = build_hoid_model(desc)
        self.coordinate_jets = coordinate_jet_model(self)      # the Taylor route over every coordinate
        self.reaction_model = ReactionModel(self)
        self.ee_body, off = self.tree.frame(self.end_effector)
        self.ee_offset = off
        self.ee_map = Ad_inv(off).T
        self.hydraulic_model = HydraulicModel.build(desc.hydraulics, self.actuated_joints)   # read-only
        self.limits = cylinder_limits(ActuatorLimits.from_description(desc, self.actuated_joints),
                                      self.hydraulic_model)

    def hydraulics(self, x, xd, xdd, xddd=None, check: bool = True, times=None):
        """Chamber pressures, flows, spool commands and hydraulic power of the cylinders of
        ``<hydraulics>`` for the actuator motion (:mod:`..hydraulics.hydraulic_feedforward`)."""
        return robot_hydraulics(self, x, xd, xdd, xddd, check, times)

    def with_gravity(self, gravity) -> "LoopChainRobot":
        """This robot under ``gravity`` (3,) [m/s^2, root link frame] (see
        :mod:`~pkm_dynamics.core.gravity`).  The copy is built again from the same description
        (its packed model anew; the kernels, already in memory, are shared).  Bad
        gravity raises :class:`~pkm_dynamics.core.errors.StateError` naming it."""
        return LoopChainRobot(self.description, check_gravity(gravity), self._options)

    @property
    def n(self) -> int:
        """The state's size: the actuators, then the passive joints."""
        return len(self.coordinates)

    @property
    def n_act(self) -> int:
        return len(self.actuated_joints)

    @property
    def options(self) -> SolverOptions:
        return self._options

    @property
    def seed_reference(self) -> np.ndarray:
        """Where :meth:`inverse_kinematics` starts without ``initial``: mid-stroke (0 for a
        joint without limits)."""
        lo, hi = self.lower[:self.n_act], self.upper[:self.n_act]
        bounded = np.isfinite(lo) & np.isfinite(hi)
        return np.where(bounded, 0.5 * (np.where(bounded, lo, 0) + np.where(bounded, hi, 0)), 0.0)

    # ------------------------------------------------------------------ input checks
    def checked_state(self, name, v, batch=None, limits=False, size=None):
        """``v`` as a float array (size,) or (batch, size) (default size: the state's, ``n``),
        finite, within the package's bound of ``name`` (:data:`STATE_BOUNDS`: the rates and the
        efforts, as every robot kind's) and with ``limits`` within the strokes and joint limits;
        else :class:`StateError` naming it.  ``name``: the argument's name in the messages (``x``,
        ``xd``, ..., ``u``); ``batch``: the leading shape it must have (that of ``x``); ``size``:
        n_act for the actuators' arrays.  Every public call checks its inputs with it, and so do
        the routes of :mod:`.loop_chain_passive` and :mod:`.loop_chain_ik`."""
        size = self.n if size is None else size
        a = np.asarray(v.actuators if isinstance(v, IKSolution) else v, dtype=float)
        bound, unit = STATE_BOUNDS.get(name, (np.inf, ""))
        if a.shape[-1:] == (size,) and a.ndim in (1, 2) and (batch is None or a.shape[:-1] == batch) and \
                (np.isfinite(a).all() if bound == np.inf else (np.abs(a) <= bound).all()) and \
                (not limits or ((a >= self._floor[:size]) & (a <= self._ceiling[:size])).all()):
            return a                             # the common case, in two array tests
        names = self.coordinates[:size]
        if self.passive_joints and size == self.n and a.shape[-1:] == (self.n_act,) and a.ndim in (1, 2):
            raise StateError(f"{name} holds the actuators only: the state of the passive joint(s) "
                             f"{', '.join(self.passive_joints)} is missing (give {', '.join(names)})")
        if a.shape[-1:] != (size,) or a.ndim not in (1, 2) or (batch is not None and a.shape[:-1] != batch):
            want = f"({size},)" if batch in (None, ()) else f"{batch + (size,)}"
            raise StateError(f"{name} has shape {a.shape}, expected {want}: {', '.join(names)}")
        bad = np.flatnonzero(~np.isfinite(a.reshape(-1, size)).all(axis=0))
        if bad.size:
            raise StateError(f"{name}[{bad[0]}] (joint '{names[bad[0]]}') is not finite")
        check_bound(a, bound, name, unit)
        if limits:
            for row in a.reshape(-1, size):
                check_limits(self.tree, self.coordinate_index[:size], row, name)
        return a

    def _wrench(self, wrench, batch):
        if wrench is None:
            return None
        w = np.asarray(wrench, dtype=float)
        if w.shape not in ((6,), batch + (6,)):
            raise StateError(f"wrench has shape {w.shape}, expected (6,)" + (f" or {batch + (6,)}" if batch else ""))
        check_bound(w, MAX_EFFORT, "wrench", "(N or N m)")
        return w

    @staticmethod
    def _batch(fn, arrays, *rest):
        """``fn`` of the compiled route on ``arrays`` (checked states) as batches (B, .) (one
        state: B = 1, the result without its leading axis)."""
        out = fn(*(v if v.ndim == 2 else v[None] for v in arrays), *rest)
        if arrays[0].ndim == 2:
            return out
        return tuple(o[0] for o in out) if isinstance(out, tuple) else out[0]

    def _kernel_call(self, fn, names, values, third_size, wrench):
        """``fn`` (FD, ID or the hybrid dynamics of :attr:`compiled`) at the state ``x``, ``xd`` and
        the third input (size ``third_size``) of ``values``, their finiteness, strokes and the rates'
        and efforts' bounds (:data:`STATE_BOUNDS`) checked in the kernel
        (:func:`.loop_chain_kernels.inputs_valid`); only the shapes here.  On a refusal
        :meth:`checked_state` of each input in turn names the culprit (the same checks, the
        same order: ``x`` with its limits, then ``xd``, then the third)."""
        x, xd, z = values
        x = np.asarray(x.actuators if isinstance(x, IKSolution) else x, dtype=float)
        xd, z = np.asarray(xd, dtype=float), np.asarray(z, dtype=float)
        b = x.shape[:-1]

        def refuse():
            a = self.checked_state(names[0], values[0], limits=True)
            self.checked_state(names[1], values[1], a.shape[:-1])
            self.checked_state(names[2], values[2], a.shape[:-1], size=third_size)
        if x.ndim not in (1, 2) or x.shape[-1:] != (self.n,) or xd.shape != x.shape or z.shape != b + (third_size,):
            refuse()
        return self._batch(fn, (x, xd, z), self._wrench(wrench, b), refuse)

    # ------------------------------------------------------------------ dynamics
    def inverse_dynamics(self, x, xd, xdd, wrench=None):
        """Actuator efforts ``u`` (n,) by constraint embedding (paper 001 eqs. 20, 36-37:
        ``u = H^T rnea(theta, thetad, H xdd + Hdot xd)``); ``wrench`` (6,): (moment, force) on the
        end effector, in its frame.  ``x`` may be an :class:`IKSolution`.  With passive joints ``xdd``
        holds the actuators' accelerations only (n_act,): :meth:`hybrid_dynamics`'s ``u``."""
        if self.passive_joints:
            return self.hybrid_dynamics(x, xd, xdd, wrench)[0]
        return self._kernel_call(self.compiled.inverse_dynamics, ("x", "xd", "xdd"), (x, xd, xdd), self.n, wrench)

    def hybrid_dynamics(self, x, xd, xdd, wrench=None) -> tuple:
        """Featherstone's hybrid dynamics in the chain's coordinates: given the state ``(x, xd)``
        (n,: actuators then passive joints) and the actuators' accelerations ``xdd`` (n_act,), the
        actuator efforts ``u`` (n_act,) and the passive joints' accelerations (n_pass,), with no
        effort at the passive joints: their damping and friction (URDF ``<dynamics>``, :mod:`..friction`)
        are in ``b``, as every tree joint's.  With
        ``M_t = H^T M H``, ``b = H^T rnea(theta, thetad, Hdot xd)`` (eqs. 36-37) split into actuated
        (a) and passive (p) rows and columns: ``M_pp qdd_p = -b_p - M_pa xdd`` and
        ``u = M_aa xdd + M_ap qdd_p + b_a`` (one kernel call,
        :meth:`.loop_chain_compiled.CompiledLoopChain.hybrid_dynamics`;
        :func:`.loop_chain_compiled.hybrid_split` the same in numpy)."""
        return self._kernel_call(self.compiled.hybrid_dynamics, ("x", "xd", "xdd"), (x, xd, xdd), self.n_act, wrench)

    def forward_dynamics(self, x, xd, u, wrench=None):
        """Actuator accelerations ``xdd`` (n,) from ``H^T M H xdd = u - H^T rnea(theta, thetad,
        Hdot xd)`` (eqs. 36-37); with passive joints ``u`` (n_act,) drives the actuators, the passive
        joints no effort (their damping and friction are in the bias, as every tree
        joint's), and ``xdd`` holds every coordinate's acceleration (n,)."""
        return self._kernel_call(self.compiled.forward_dynamics, ("x", "xd", "u"), (x, xd, u), self.n_act, wrench)

    def forward_dynamics_derivatives(self, x, xd, u, wrench=None):
        """``xdd`` and its exact derivatives (forward-mode jets, :mod:`.loop_chain_derivatives`).
        With passive joints (:mod:`.loop_chain_passive`): ``u`` (n_act,) drives the actuators,
        ``value`` (n,), ``d_x``, ``d_xd`` (n, n), ``d_u`` (n, n_act)."""
        from .loop_chain_derivatives import loop_chain_derivatives
        if self.passive_joints:
            return passive_derivatives(self, False, x, xd, u, wrench)
        return loop_chain_derivatives(self, False, x, xd, u, wrench)

    def inverse_dynamics_derivatives(self, x, xd, xdd, wrench=None):
        """``u`` and its exact derivatives (forward-mode jets, :mod:`.loop_chain_derivatives`).
        With passive joints those of :meth:`hybrid_dynamics`' ``u`` (:mod:`.loop_chain_passive`):
        ``xdd`` (n_act,), ``value`` (n_act,), ``d_x``, ``d_xd`` (n_act, n), ``d_u`` (n_act, n_act)."""
        from .loop_chain_derivatives import loop_chain_derivatives
        if self.passive_joints:
            return passive_derivatives(self, True, x, xd, xdd, wrench)
        return loop_chain_derivatives(self, True, x, xd, xdd, wrench)

    def force_rate(self, x, xd, xdd, xddd) -> tuple:
        """``(u, du)``: the inverse dynamics' efforts (n_act,) and their time derivative along the
        motion with the actuators' jerk ``xddd`` (n_act,), exact (the hydraulic feedforward's rate,
        :func:`..hydraulics.hydraulic_feedforward.force_rate`).  With passive joints the hybrid
        dynamics' (:func:`.loop_chain_passive.hybrid_rate`: one first-order jet), else by the chain
        rule on :meth:`inverse_dynamics_derivatives`."""
        if self.passive_joints:
            return hybrid_rate(self, x, xd, xdd, xddd)[:2]
        d = self.inverse_dynamics_derivatives(x, xd, xdd)
        rate = (d.d_x @ np.asarray(xd, dtype=float)[..., None] + d.d_xd @ np.asarray(xdd, dtype=float)[..., None]
                + d.d_u @ np.asarray(xddd, dtype=float)[..., None])
        return d.value, rate[..., 0]

    def joint_reactions(self, x, xd, u, wrench=None):
        """The wrench every tree and cut joint transmits (:func:`..reactions.reactions.joint_reactions`:
        the minimum-norm cut-joint multipliers of the tree's equations of motion)."""
        x = self.checked_state("x", x, limits=True)
        return joint_reactions(self, x, xd, u, wrench, model=self.reaction_model)

    def simulate(self, x0, xd0, duration, **kw):
        """Integrate the forward dynamics in actuator space: see :mod:`..simulation`."""
        from ..simulation import simulate
        return simulate(self, x0, xd0, duration, **kw)

    def higher_order_inverse_dynamics(self, x, xd, xdd, xddd, xdddd, **kw):
        """``u, du, ddu`` of a motion given to its 4th derivative by the Taylor route (paper 002's
        recursion is for PKM); the loops closed from the limb route's solution (its assembly
        branch) unless ``q_guess`` is given.  With passive joints ``x``, ``xd`` hold every
        coordinate (n,), ``xdd..xdddd`` the actuators' (n_act,) and the result also the passive
        joints' motion (``passive_motion``, :func:`.loop_chain_passive.passive_higher_order_inverse_dynamics`)."""
        from ..hoid.higher_order import higher_order_inverse_dynamics
        if self.passive_joints:
            return passive_higher_order_inverse_dynamics(self, x, xd, xdd, xddd, xdddd, kw.get("gravity"),
                                                         kw.get("q_guess"))
        if kw.get("q_guess") is None:
            xa = self.checked_state("x", x, limits=True)
            kw["q_guess"] = self.tree_state(xa if xa.ndim == 1 else xa[0])[0]
        return higher_order_inverse_dynamics(self, x, xd, xdd, xddd, xdddd, **kw)

    # ------------------------------------------------------------------ kinematics
    def tree_state(self, x, xd=None, xdd=None):
        """``(q, qd, qdd)`` (nq,) of every tree joint with the loops closed (Algorithm 2 of paper
        001 on the assembly branch of the reference configuration; eq. 20 for the rates)."""
        x = self.checked_state("x", x, limits=True)
        xd = np.zeros_like(x) if xd is None else self.checked_state("xd", xd, x.shape[:-1])
        xdd = np.zeros_like(x) if xdd is None else self.checked_state("xdd", xdd, x.shape[:-1])
        return self._batch(self.compiled.tree_state, (x, xd, xdd))

    def joint_motion(self, x, xd=None, xdd=None, initial=None) -> IKSolution:
        """The whole chain at ``(x, xd, xdd)``: the actuators and every tree joint."""
        q, qd, qdd = self.tree_state(x, xd, xdd)
        xd = None if xd is None else np.asarray(xd, dtype=float)
        xdd = None if xdd is None else np.asarray(xdd, dtype=float)
        return IKSolution(actuators=np.asarray(x, dtype=float), q=q, qd=None if xd is None else qd,
                          qdd=None if xdd is None else qdd, actuators_d=xd, actuators_dd=xdd)

    def end_effector_pose(self, q) -> np.ndarray:
        """The end-effector pose (4, 4) of the tree configuration ``q`` (nq,)."""
        return forward_kinematics(self.tree, q)[self.ee_body] @ self.ee_offset

    def forward_kinematics(self, actuators):
        """End-effector pose (4, 4) in the root link frame (batched: (batch, 4, 4)) of the state's
        positions ``actuators`` (n,): the actuators, then the passive joints (the grapple below its
        swing axes follows them; a state without them is refused naming them)."""
        x = self.checked_state("actuators", actuators, limits=True)
        if x.ndim == 2:
            return np.stack([self.forward_kinematics(r) for r in x])
        return self.end_effector_pose(self.tree_state(x)[0])

    def inverse_kinematics(self, pose, twist=None, acceleration=None, initial=None, *, search: bool = True,
                           passive=None):
        """Actuators (n_act,) (and rates, accelerations) for an end-effector pose: see
        :mod:`.loop_chain_ik`.  With passive joints the end effector's pose is reached with the
        passive joints held at ``passive`` (n_pass,) (default zero), at rest."""
        from .loop_chain_ik import loop_chain_inverse_kinematics
        if isinstance(initial, IKSolution):
            initial = initial.actuators
        held = np.zeros(self.n - self.n_act) if passive is None else self._passive_positions(passive)
        return loop_chain_inverse_kinematics(self, pose, twist, acceleration, initial, search, held)

    def _passive_positions(self, passive) -> np.ndarray:
        """``passive`` (n_pass,) as floats, finite and within the passive joints' limits; else
        :class:`StateError` naming the joint."""
        p = np.asarray(passive, dtype=float)
        names = self.passive_joints
        if p.shape != (len(names),):
            raise StateError(f"passive has shape {p.shape}, expected ({len(names)},): {', '.join(names) or 'none'}")
        bad = np.flatnonzero(~np.isfinite(p))
        if bad.size:
            raise StateError(f"passive[{bad[0]}] (joint '{names[bad[0]]}') is not finite")
        check_limits(self.tree, self.coordinate_index[self.n_act:], p, "passive")
        return p
