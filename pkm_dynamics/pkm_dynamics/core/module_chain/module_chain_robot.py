"""The robot object of a module chain (paper 000): :class:`ModuleChainRobot`, the robot
interface of :mod:`.interface` in actuator space on the compiled kernels
(:mod:`~pkm_dynamics.core.module_chain.chain_model`), with the numpy route (:mod:`.module_chain_dynamics`) as their
independent check."""
from __future__ import annotations

import numpy as np

from .chain_model import ChainModel
from ..reactions.chain_reactions_model import ReactionsModel, chain_joint_reactions
from .chain_model import chain_forward_dynamics as compiled_forward_dynamics
from .chain_model import chain_forward_kinematics as compiled_forward_kinematics
from .chain_model import chain_inverse_dynamics as compiled_inverse_dynamics
from .chain_model import chain_tree_state as compiled_tree_state
from ..description.robot_description import as_description
from ..hoid.higher_order import build_hoid_model
from ..interface import IKSolution, SolverOptions
from ..hydraulics.hydraulic_feedforward import robot_hydraulics
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
    data), ``chain``, ``gravity`` (3,), ``compiled`` and ``reactions`` (the flat models of the
    compiled calls, built here, read-only).

    Every method takes one state (arrays of shape ``(n,)``) or a batch (leading axis,
    ``(batch, n)``) and returns arrays of matching leading shape.  Singular or infeasible
    states raise :class:`~pkm_dynamics.core.errors.SingularityError` /
    :class:`~pkm_dynamics.core.errors.StateError` naming the module and the value."""

    kind = "module_chain"
    state_space = "actuator"
    task_space = ()
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
        self.tree_joints = tuple(self.tree.joint_names)
        self.end_effector = self.chain.end_effector
        self.gravity = self.chain.gravity.copy()
        self.name = desc.name
        self.root_link = self.tree.root_link
        self.limb_names = (self.name,)          # the whole chain is one serial limb
        self.seed_joints = self.actuated_joints
        self.hoid_model = build_hoid_model(desc)   # paper 002 (its Taylor route here), read-only
        self.hydraulic_model = HydraulicModel.build(desc.hydraulics, self.actuated_joints)   # read-only

    @property
    def n(self) -> int:
        return self.chain.n

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
        :func:`~pkm_dynamics.core.module_chain.chain_model.chain_forward_dynamics`."""
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
        as in :meth:`forward_dynamics`."""
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
        return chain_forward_dynamics_derivatives(self.compiled, x, xd, u, wrench)

    def inverse_dynamics_derivatives(self, x, xd, xdd, wrench=None):
        """``f`` and its exact derivatives ``d_x``, ``d_xd``, ``d_u = M`` (n, n) each (batched:
        a leading axis): a :class:`~.derivatives.DynamicsDerivatives`; compiled (forward mode)."""
        from ..derivatives.derivatives import chain_inverse_dynamics_derivatives
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
        ``solutions``; tolerance and iteration limit from ``options``; see :mod:`.chain_ik`."""
        if isinstance(initial, IKSolution):
            initial = initial.actuators
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


from .chain_ik import chain_inverse_kinematics, mid_stroke  # noqa: E402 (chain_ik uses this module's neighbours)
