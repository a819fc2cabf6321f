"""The robot object of a module chain (paper 000): :class:`ModuleChainRobot`, the robot
interface of :mod:`.interface` in actuator space on the compiled kernels
(:mod:`~pkm_dynamics.core.module_chain.chain_model`), with the numpy route (:mod:`.module_chain_dynamics`) as their
independent check."""
from __future__ import annotations

import copy
from functools import partial

import numpy as np

from .chain_friction import (derivatives_with_friction, forward_dynamics_with_friction, friction_one,
                             inverse_dynamics_with_friction)
from .chain_model import ChainModel
from ..reactions.chain_reactions_model import ReactionsModel, chain_joint_reactions
from .chain_model import chain_forward_dynamics as compiled_forward_dynamics
from .chain_model import chain_forward_kinematics as compiled_forward_kinematics
from .chain_model import chain_inverse_dynamics as compiled_inverse_dynamics
from .chain_model import chain_tree_state as compiled_tree_state
from ..description.robot_description import as_description
from ..gravity import check_gravity
from ..hoid.higher_order import build_hoid_model, hoid_model_with_gravity
from ..interface import IKSolution, SolverOptions
from ..limits import ActuatorLimits
from ..hydraulics.hydraulic_feedforward import cylinder_limits, robot_hydraulics
from ..hydraulics.valve_cylinder import HydraulicModel

from .module_chain import recognise_modules

_asc, _empty = np.ascontiguousarray, np.empty


class ModuleChainRobot:
    """A heavy-duty parallel-serial manipulator (module chain of paper 000) built from a robot
    description; see :func:`pkm_dynamics.core.load_robot`.  It follows the robot interface of
    :mod:`.interface` in actuator space: ``x``, ``xd``, ``xdd`` are the actuator positions,
    rates and accelerations (n,).

    Attributes: those of :class:`~.interface.Robot` (``actuated_joints`` in chain order,
    ``tree_joints`` the order of :meth:`tree_state`, ``options``, ...), ``modules`` (model
    data), ``chain``, ``gravity`` (3,), ``limits`` (:class:`~pkm_dynamics.core.limits.ActuatorLimits`,
    chain order), ``compiled`` and ``reactions`` (the flat models of the
    compiled calls, built here, read-only).

    Every method takes one state (arrays of shape ``(n,)``) or a batch (leading axis,
    ``(batch, n)``) and returns arrays of matching leading shape.  Singular or infeasible
    states raise :class:`~pkm_dynamics.core.errors.SingularityError` /
    :class:`~pkm_dynamics.core.errors.StateError` naming the module and the value."""

    kind = "module_chain"
    #: the first derivatives are compiled kernels (forward mode, :mod:`..derivatives`)
    compiled_derivatives = True
    state_space = "actuator"
    task_space = ()
    passive_joints = ()
    twist_components = ("wx", "wy", "wz", "vx", "vy", "vz")

    def __init__(self, description, gravity=None, options: SolverOptions | None = None):
        desc = as_description(description, gravity)
        self._options = SolverOptions() if options is None else options
        self.description = desc
        self.tree = desc.tree
        self.chain = recognise_modules(desc)
        self.compiled = ChainModel.build(self.chain, self.tree.nq)
        self.reactions = ReactionsModel.build(desc, self.compiled, self.chain.end_effector)
        self.modules = self.chain.modules
        self.actuated_joints = tuple(i.joint for i in self.chain.info)
        self.limits = ActuatorLimits.from_description(desc, self.actuated_joints)
        self.tree_joints = tuple(self.tree.joint_names)
        self.end_effector = self.chain.end_effector
        self.gravity = self.chain.gravity.copy()
        self.name = desc.name
        self.root_link = self.tree.root_link
        self.limb_names = (self.name,)          # the whole chain is one serial limb
        self.seed_joints = self.actuated_joints
        self.hoid_model = build_hoid_model(desc)   # paper 002 (its Taylor route here), read-only
        #: joint / actuator friction (:class:`~..friction.JointFriction`), None: none (every call
        #: then takes the frictionless path unchanged)
        self.friction = desc.friction
        self.hydraulic_model = HydraulicModel.build(desc.hydraulics, self.actuated_joints)   # read-only
        self.limits = cylinder_limits(self.limits, self.hydraulic_model)   # supply x area, valve flow

    @property
    def n(self) -> int:
        return self.chain.n

    def with_gravity(self, gravity) -> "ModuleChainRobot":
        """This robot under ``gravity`` (3,) [m/s^2, root link frame] (a base on a slope: see
        :mod:`~pkm_dynamics.core.gravity`): a light copy that shares every model array but those
        gravity enters -- the chain's ``nud_0`` (Algorithm 1 line 1) in a copy of the flat chain
        model, ``a0`` of the reactions, the description's tree and the higher-order model --
        without rebuilding the model or compiling a kernel; each thread allocates the copy's
        scratch on its first call.  This robot is unchanged.  Bad gravity (NaN, Inf, not 3
        values, beyond :data:`~pkm_dynamics.core.gravity.MAX_GRAVITY`) raises
        :class:`~pkm_dynamics.core.errors.StateError` naming it."""
        other = copy.copy(self)
        other._use_gravity(check_gravity(gravity))
        return other

    def _use_gravity(self, g) -> None:
        """Replace the gravity-dependent models of a fresh copy (:meth:`with_gravity` only)."""
        desc = as_description(self.description, g)
        self.description, self.tree = desc, desc.tree
        self.chain = self.chain.with_gravity(g)
        self.compiled = self.compiled.with_chain(self.chain)
        self.reactions = self.reactions.with_gravity(desc, self.compiled)
        self.gravity = self.chain.gravity.copy()
        self.hoid_model = hoid_model_with_gravity(self.hoid_model, desc)

    @property
    def options(self) -> SolverOptions:
        """The solver options, fixed at construction."""
        return self._options

    def forward_dynamics(self, x, xd, u, wrench=None):
        """Actuator accelerations ``xdd`` from positions, velocities and actuator forces ``u``
        (Algorithm 1, O(n), compiled: :mod:`~pkm_dynamics.core.module_chain.chain_kernels`).  ``wrench`` (6,) or
        (batch, 6): (moment, force) acting on the end effector, in its frame.

        One state of float arrays (n,) without a wrench goes straight to the kernel's entry
        point (the calling thread's ``compiled.one_call()``, :func:`~pkm_dynamics.core.module_chain.chain_model._one`);
        everything else, and a state the kernel refuses (to raise the named exception), through
        :func:`~pkm_dynamics.core.module_chain.chain_model.chain_forward_dynamics`.  With joint
        friction (``friction``): under ``u - u_f(x, xd)`` (:mod:`.chain_friction`), one state
        in one kernel call (:func:`.chain_friction.friction_one`)."""
        if self.friction is not None:
            out = None if wrench is not None else friction_one(self.compiled, self.friction.table, False, x, xd, u)
            if out is not None:
                return out
            return forward_dynamics_with_friction(partial(compiled_forward_dynamics, self.compiled),
                                                  self.compiled, self.friction.table, x, xd, u, wrench)
        try:
            run, mflat, dflat, fe, status, n, shape1 = self.compiled.one_call()
            x, xd, u = _asc(x, float), _asc(xd, float), _asc(u, float)
        except (TypeError, ValueError):                      # no array
            return compiled_forward_dynamics(self.compiled, x, xd, u, wrench)
        if run is not None and wrench is None and shape1 == x.shape == xd.shape == u.shape:
            out = _empty(n)
            if not run(False, mflat, dflat, x, xd, u, fe, out, status):
                return out
        return compiled_forward_dynamics(self.compiled, x, xd, u, wrench)

    def inverse_dynamics(self, x, xd, xdd, wrench=None):
        """Actuator forces ``u`` for positions, velocities and accelerations (analytic, O(n),
        compiled: :mod:`~pkm_dynamics.core.module_chain.chain_kernels`).  ``x`` may be an
        :class:`~.interface.IKSolution` (its actuators).  One state goes straight to the kernel
        as in :meth:`forward_dynamics`.  With joint friction: ``u_0 + u_f(x, xd)``."""
        if self.friction is not None:
            if isinstance(x, IKSolution):
                x = x.actuators
            out = None if wrench is not None else friction_one(self.compiled, self.friction.table, True, x, xd, xdd)
            if out is not None:
                return out
            return inverse_dynamics_with_friction(partial(compiled_inverse_dynamics, self.compiled),
                                                  self.compiled, self.friction.table, x, xd, xdd, wrench)
        try:
            run, mflat, dflat, fe, status, n, shape1 = self.compiled.one_call()
            x, xd, xdd = _asc(x, float), _asc(xd, float), _asc(xdd, float)
        except (TypeError, ValueError):                      # also an IKSolution
            if isinstance(x, IKSolution):
                x = x.actuators
            return compiled_inverse_dynamics(self.compiled, x, xd, xdd, wrench)
        if run is not None and wrench is None and shape1 == x.shape == xd.shape == xdd.shape:
            out = _empty(n)
            if not run(True, mflat, dflat, x, xd, xdd, fe, out, status):
                return out
        return compiled_inverse_dynamics(self.compiled, x, xd, xdd, wrench)

    def forward_dynamics_derivatives(self, x, xd, u, wrench=None):
        """``xdd`` and its exact derivatives ``d_x``, ``d_xd``, ``d_u = M^-1`` (n, n) each (batched:
        a leading axis): a :class:`~.derivatives.DynamicsDerivatives`; compiled (forward mode)."""
        from ..derivatives.derivatives import chain_forward_dynamics_derivatives
        if self.friction is not None:
            return derivatives_with_friction(partial(chain_forward_dynamics_derivatives, self.compiled), False,
                                             self.compiled, self.friction.table, x, xd, u, wrench)
        return chain_forward_dynamics_derivatives(self.compiled, x, xd, u, wrench)

    def inverse_dynamics_derivatives(self, x, xd, xdd, wrench=None):
        """``f`` and its exact derivatives ``d_x``, ``d_xd``, ``d_u = M`` (n, n) each (batched:
        a leading axis): a :class:`~.derivatives.DynamicsDerivatives`; compiled (forward mode)."""
        from ..derivatives.derivatives import chain_inverse_dynamics_derivatives
        if self.friction is not None:
            return derivatives_with_friction(partial(chain_inverse_dynamics_derivatives, self.compiled), True,
                                             self.compiled, self.friction.table, x, xd, xdd, wrench)
        return chain_inverse_dynamics_derivatives(self.compiled, x, xd, xdd, wrench)

    def forward_kinematics(self, actuators):
        """End-effector pose (4, 4) in the URDF root frame (batched: (batch, 4, 4)); compiled."""
        return compiled_forward_kinematics(self.compiled, actuators)

    def tree_state(self, x, xd=None, xdd=None):
        """``(positions, velocities, accelerations)`` of every tree joint (order ``tree_joints``)
        with all loops closed.  ``xd``/``xdd`` default to zero; compiled."""
        return compiled_tree_state(self.compiled, x, xd, xdd)

    def joint_motion(self, x, xd=None, xdd=None, initial=None) -> IKSolution:
        """The whole chain at the actuator state ``(x, xd, xdd)`` (n,): the actuators and every
        tree joint (:meth:`tree_state`); rates not given stay None.  ``initial`` is not needed
        (the loop closures are explicit, eqs. 2, 4-5)."""
        q, qd, qdd = self.tree_state(x, xd, xdd)
        xd = None if xd is None else np.asarray(xd, dtype=float)
        xdd = None if xdd is None else np.asarray(xdd, dtype=float)
        return IKSolution(actuators=np.asarray(x, dtype=float), q=q, qd=None if xd is None else qd,
                          qdd=None if xdd is None else qdd, actuators_d=xd, actuators_dd=xdd)

    @property
    def seed_reference(self) -> np.ndarray:
        """Where :meth:`inverse_kinematics` starts without ``initial``: mid-stroke (n,)."""
        return mid_stroke(self.chain)

    def inverse_kinematics(self, pose, twist=None, acceleration=None, initial=None, *,
                           search: bool = True) -> IKSolution:
        """Actuator values (and rates, accelerations) for an end-effector pose (4, 4) in the
        URDF root frame: the solution nearest ``initial`` (actuator values (n,) or a previous
        :class:`~.interface.IKSolution`; default: mid-stroke), with every solution found in
        ``solutions``; tolerance and iteration limit from ``options``; see :mod:`.chain_ik`.
        Batched: ``pose`` (N, 4, 4) (``twist``, ``acceleration`` (N, 6)), each pose on its own
        (:func:`.chain_ik.batched_chain_inverse_kinematics`)."""
        if isinstance(initial, IKSolution):
            initial = initial.actuators
        if np.ndim(pose) == 3:
            return batched_chain_inverse_kinematics(self, np.asarray(pose, dtype=float), twist, acceleration,
                                                    initial, self.options.tolerance, self.options.max_iterations,
                                                    search)
        return chain_inverse_kinematics(self, pose, twist, acceleration, initial, self.options.tolerance,
                                        self.options.max_iterations, search)

    def joint_reactions(self, x, xd, u, wrench=None):
        """Wrench transmitted by every tree and cut joint (the 4-bars' pin loads) at the state
        under the actuator forces ``u`` (frames and signs of :mod:`.reactions`): paper 000's
        analytic route, O(n), compiled (:mod:`~pkm_dynamics.core.reactions.chain_reactions`)."""
        return chain_joint_reactions(self.reactions, x, xd, u, wrench)

    def simulate(self, x0, xd0, duration, **kw):
        """Integrate the forward dynamics in actuator space: see :mod:`.simulation`."""
        from ..simulation import simulate
        return simulate(self, x0, xd0, duration, **kw)

    def higher_order_inverse_dynamics(self, x, xd, xdd, xddd, xdddd, **kw):
        """``u, du, ddu`` (+ SEA motor feedforward), paper 002: see :mod:`.higher_order`."""
        from ..hoid.higher_order import higher_order_inverse_dynamics
        return higher_order_inverse_dynamics(self, x, xd, xdd, xddd, xdddd, **kw)

    def hydraulics(self, x, xd, xdd, xddd=None, check: bool = True, times=None):
        """Chamber pressures, flows, spool commands and hydraulic power of the cylinders (the
        actuated prismatic joints of ``<hydraulics>``) for the actuator motion ``(x, xd, xdd)``
        and, where given, its third derivative ``xddd`` (the compressibility term): see
        :mod:`.hydraulic_feedforward` and :mod:`.valve_cylinder`."""
        return robot_hydraulics(self, x, xd, xdd, xddd, check, times)


from .chain_ik import (batched_chain_inverse_kinematics, chain_inverse_kinematics,  # noqa: E402 (chain_ik uses
                       mid_stroke)                                                # this module's neighbours)
