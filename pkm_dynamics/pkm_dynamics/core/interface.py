"""One robot interface for every robot kind: what :func:`~.robot.load_robot` returns.

Module chains (:class:`~.module_chain_robot.ModuleChainRobot`, paper 000) and parallel manipulators
(:class:`~.pkm.ParallelRobot`, paper 001) answer the same calls with the same argument names
and result types; only the robot's *minimal coordinates* differ, and the robot says which
(``state_space``):

* ``"actuator"`` (module chains and the other chains of loops,
  :class:`~.loop_chain.loop_chain_robot.LoopChainRobot`): the state ``x`` is the actuator positions (n_act,), ``xd``,
  ``xdd`` their rates and accelerations (n_act,);
* ``"task"`` (parallel manipulators): ``x`` is the platform pose (4, 4) in the root link frame
  (or the :class:`IKSolution` of one), ``xd`` the task twist ``V_t`` (the ``task_space``
  components of the platform's body-fixed twist) and ``xdd`` its derivative (delta,).

Efforts ``u`` are always actuator forces/torques (n_act,) in the order of ``actuated_joints``;
an external ``wrench`` (6,) (moment, force) acts on the end effector / platform, body-fixed in
its frame.  Every call takes a leading batch axis.  Solver settings are a :class:`SolverOptions`
given once at construction (``options``) and never changed: a robot with other settings is a
new robot.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from .errors import StateError
from .status import LOOP_SINGULARITY_THRESHOLD

#: the inverse kinematics schemes of parallel manipulators (paper 001 Algorithms 1+2, 3)
IK_SCHEMES = ("nested", "compound")


@dataclass(frozen=True)
class SolverOptions:
    """Solver settings of a robot, fixed at construction.

    ``ik_scheme``: parallel manipulators' inverse kinematics, ``"nested"`` (Algorithms 1+2) or
    ``"compound"`` (Algorithm 3); ``tolerance``: accuracy goal of every inverse kinematics
    (pose error [m, rad] and loop residual); ``max_iterations``: iteration limit of the inverse
    kinematics (per limb) and the PKM forward kinematics; ``singularity_threshold``: largest
    admissible condition number of a limb's IK Jacobian and of ``J_IK`` (PKM; None: never
    refuse); ``loop_singularity_threshold``: largest admissible condition number of a loop's
    ``G_y`` at a PKM IK solution (None: never refuse).  Invalid values raise
    :class:`StateError` naming the option."""

    ik_scheme: str = "nested"
    tolerance: float = 1e-10
    max_iterations: int = 50
    singularity_threshold: float | None = 1e4
    loop_singularity_threshold: float | None = LOOP_SINGULARITY_THRESHOLD

    def __post_init__(self):
        if self.ik_scheme not in IK_SCHEMES:
            raise StateError(f"ik_scheme '{self.ik_scheme}' is not one of {', '.join(IK_SCHEMES)}")
        if not (math.isfinite(self.tolerance) and self.tolerance > 0):
            raise StateError(f"tolerance {self.tolerance} must be positive and finite")
        if int(self.max_iterations) != self.max_iterations or self.max_iterations < 1:
            raise StateError(f"max_iterations {self.max_iterations} must be a positive integer")
        for name in ("singularity_threshold", "loop_singularity_threshold"):
            value = getattr(self, name)
            if value is not None and not value >= 1:
                raise StateError(f"{name} {value} must be at least 1 (or None)")


@dataclass
class IKSolution:
    """Inverse kinematics of one pose (a batch: every array gets a leading axis, the lists one
    entry per sample), for every robot kind.

    ``pose`` (4, 4): the end-effector / platform pose solved for; ``actuators`` (n_act,), with
    ``actuators_d``, ``actuators_dd`` (n_act,) when a twist / acceleration was given (else
    None); ``q``, ``qd``, ``qdd`` (nq,): every tree joint, order ``tree_joints``; per limb
    (order ``limb_names``; a module chain is one limb) ``iterations`` (ints) and ``condition``
    (the condition number of its IK Jacobian); ``residual``: the largest remaining error (PKM:
    loop residual; module chain: end-effector pose error) [m, rad].

    Module chains: ``solutions`` (k, n_act), every distinct solution found within the strokes,
    the returned one first.  Parallel manipulators: ``J_IK`` (n_act, delta) (paper 001 eq. 30),
    per limb its limb-tree joints ``limb_theta`` (the warm start of a next call) and rates
    ``limb_thetad``, ``limb_thetadd``, and ``inner`` (inner loop iterations of the nested scheme).
    Fields a kind does not have are None."""

    pose: np.ndarray | None = None
    actuators: np.ndarray | None = None
    q: np.ndarray | None = None
    J_IK: np.ndarray | None = None
    condition: np.ndarray | None = None
    iterations: np.ndarray | None = None
    residual: np.ndarray | float | None = None
    limb_theta: list | None = None
    limb_thetad: list | None = None
    limb_thetadd: list | None = None
    qd: np.ndarray | None = None
    qdd: np.ndarray | None = None
    actuators_d: np.ndarray | None = None
    actuators_dd: np.ndarray | None = None
    inner: list = field(default_factory=list)
    solutions: np.ndarray | None = None


@runtime_checkable
class Robot(Protocol):
    """The interface of every robot :func:`~.robot.load_robot` builds (see the module doc for
    ``x``, ``xd``, ``xdd``, ``u`` and ``wrench``; shapes without the optional batch axis).

    Attributes: ``name``; ``kind`` (``"module_chain"`` | ``"loop_chain"`` | ``"parallel"``); ``state_space``
    (``"actuator"`` | ``"task"``); ``description`` (the parsed
    :class:`~.description.RobotDescription`); ``options`` (:class:`SolverOptions`);
    ``actuated_joints`` (n_act names, the order of ``u``); ``tree_joints`` (nq names, the order
    of ``q``); ``root_link``; ``end_effector`` (the link of the end effector / platform);
    ``task_space`` (the task twist components, PKM; () for module chains);
    ``twist_components`` (the components of the end-effector twist that inverse kinematics
    takes: module chains all six ``wx wy wz vx vy vz``, PKM ``task_space``); ``limb_names``
    (the order of ``IKSolution.iterations`` / ``condition``); ``seed_joints`` (the joints an
    inverse kinematics ``initial`` (len(seed_joints),) gives values for: module chains the
    actuated joints, PKM every tree joint) and ``seed_reference`` (len(seed_joints),): where
    inverse kinematics starts without ``initial`` (module chains: mid-stroke; PKM: the reference
    configuration, all zero); ``gravity`` (3,): the gravity it computes with [m/s^2, root link
    frame]; ``limits``: the per-actuator limits every answer is checked against
    (:class:`~.limits.ActuatorLimits`); ``passive_joints``: the joints that move freely (no
    actuator, outside every loop: a chain of loops' ``<passive>`` joints, () for the others),
    whose positions and velocities follow the actuators' in ``x``, ``xd``; a robot with passive
    joints also answers ``force_rate(x, xd, xdd, xddd) -> (u, du)``: the hybrid dynamics' efforts
    and their exact time derivative (the hydraulic feedforward's rate); ``compiled_derivatives``:
    whether ``inverse_dynamics_derivatives`` runs compiled (module chains) or as numpy jets (chains
    of loops, parallel manipulators: tens to hundreds of ms)."""

    name: str
    kind: str
    state_space: str
    options: SolverOptions
    actuated_joints: tuple
    tree_joints: tuple
    root_link: str
    end_effector: str
    task_space: tuple
    twist_components: tuple
    limb_names: tuple
    seed_joints: tuple
    seed_reference: np.ndarray
    gravity: np.ndarray
    limits: object
    passive_joints: tuple
    compiled_derivatives: bool

    def with_gravity(self, gravity) -> "Robot":
        """This robot under another ``gravity`` (3,) (a tilted base: see :mod:`.gravity`): a
        light copy sharing every model array gravity does not enter, without rebuilding the
        model or compiling a kernel; this robot is unchanged."""

    def forward_dynamics(self, x, xd, u, wrench=None) -> np.ndarray:
        """The state's acceleration ``xdd`` under actuator efforts ``u`` (n_act,)."""

    def inverse_dynamics(self, x, xd, xdd, wrench=None) -> np.ndarray:
        """Actuator efforts ``u`` (n_act,) of the motion ``(x, xd, xdd)``."""

    def joint_motion(self, x, xd=None, xdd=None, initial=None) -> IKSolution:
        """The whole robot at the state ``(x, xd, xdd)``: actuators with their rates and
        accelerations, every tree joint (rates given: their rates); ``initial`` (a previous
        :class:`IKSolution`): where a PKM's inverse kinematics starts.  ``inverse_dynamics``
        takes the result as its ``x``."""

    def tree_state(self, x, xd=None, xdd=None) -> tuple:
        """``(q, qd, qdd)`` (nq,) each: every tree joint with the loops closed (rates zero when
        not given)."""

    def forward_kinematics(self, actuators) -> np.ndarray:
        """The end-effector / platform pose (4, 4) for actuator positions (n_act,)."""

    def inverse_kinematics(self, pose, twist=None, acceleration=None, initial=None) -> IKSolution:
        """Actuators and every tree joint for an end-effector / platform pose (4, 4), twist
        and acceleration (``twist_components``); ``initial`` (len(seed_joints),) or a previous
        :class:`IKSolution`: where to start (which solution)."""

    def higher_order_inverse_dynamics(self, x, xd, xdd, xddd, xdddd, **kw):
        """``u``, ``du``, ``ddu`` (n_act,) and the series-elastic motor feedforward
        (:class:`~.higher_order.HigherOrderResult`) of a motion given to its 4th derivative."""

    def forward_dynamics_derivatives(self, x, xd, u, wrench=None):
        """:meth:`forward_dynamics` and its exact first derivatives with respect to ``x``,
        ``xd`` and ``u`` (:class:`~.derivatives.DynamicsDerivatives`)."""

    def inverse_dynamics_derivatives(self, x, xd, xdd, wrench=None):
        """:meth:`inverse_dynamics` and its exact first derivatives with respect to ``x``,
        ``xd`` and ``xdd`` (:class:`~.derivatives.DynamicsDerivatives`)."""

    def joint_reactions(self, x, xd, u, wrench=None):
        """The wrench every tree and cut joint transmits at the state under the efforts ``u``
        (:class:`~.reactions.JointReactions`)."""

    def hydraulics(self, x, xd, xdd, xddd=None, check: bool = True, times=None):
        """Chamber pressures, flows, spool commands and hydraulic power of the robot's cylinders
        (``<hydraulics>``; none: empty arrays) for the motion ``(x, xd, xdd)`` and, where given,
        ``xddd``; ``times`` of a sampled trajectory: the pressures carried along it as a state
        (:class:`~.hydraulics.valve_cylinder.HydraulicState`)."""

    def simulate(self, x0, xd0, duration, **kw):
        """The forward dynamics integrated in the robot's state space from ``(x0, xd0)``
        (:class:`~.simulation.SimulationResult`)."""
