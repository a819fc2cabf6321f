"""Higher-order inverse dynamics (paper 002, Mueller, Kumar, Kordik): the public call
:func:`higher_order_inverse_dynamics` for every robot kind, its result and its per-robot model.

Two routes give ``u, du, ddu`` (and the series-elastic motor feedforward, :mod:`.sea`):

* ``"recursive"``: paper 002's recursion for a non-redundant PKM with simple limbs --
  the limbs (:mod:`.simple_limb`), their zeroth-order inverse kinematics, the four-pass
  4th-order kinematics and the second-order inverse dynamics (:mod:`.hoid_recursion`), run by
  the compiled kernels of :mod:`~pkm_dynamics.core.hoid.hoid_kernels` in one call per request;
* ``"taylor"``: the general route (:mod:`.jet_dynamics`, Taylor polynomials) for every robot
  kind: module chains (heavy-duty manipulators, actuator-space motion) and PKM with hybrid
  limbs.  It stays numpy and is the independent check of the recursion.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from . import jet_dynamics as JD
from ..spatial import taylor as T
from ..bounds import check_bound, check_limits, check_position, check_rate
from ..description.robot_description import RobotDescription
from .hoid_model import HoidKernelModel, hoid_full_call, hoid_one
from ..status import BAD_INPUT, NO_CONVERGENCE, OK, SINGULAR, SINGULAR_NEWTON, STROKE
from ..errors import ConvergenceError, DescriptionError, SingularityError, StateError
from .hoid_recursion import fourth_order_kinematics, second_order_inverse_dynamics, tree_motion_from_limbs
from .friction_jets import with_friction
from .sea import MOTOR_FIELDS, sea_feedforward, sea_parameters
from .simple_limb import SimpleLimbModel, simple_limb_inverse_kinematics, simple_limb_model


@dataclass
class HigherOrderResult:
    """Result of :func:`higher_order_inverse_dynamics` (attribute or key access).

    ``u, du, ddu``: actuator forces and their first two time derivatives (na,) (or
    (batch, na)); ``tree_motion``: derivatives of every tree joint, orders 0..4, (5, n)
    (or (batch, 5, n)); ``actuator_motion``: the actuated joints' rows of it; ``method``:
    ``"recursive"`` (paper 002) or ``"taylor"``; with series-elastic actuators also
    ``motor_position, motor_velocity, motor_acceleration, motor_torque`` (eqs. 1-2); a chain of
    loops with passive joints also ``passive_motion`` (5, n_pass) (or (batch, 5, n_pass)): their
    position, rate, acceleration, jerk and snap, the last three from the hybrid dynamics
    (:mod:`~pkm_dynamics.core.loop_chain.loop_chain_passive`)."""

    u: np.ndarray
    du: np.ndarray
    ddu: np.ndarray
    tree_motion: np.ndarray
    actuator_motion: np.ndarray
    method: str
    motor_position: np.ndarray | None = None
    motor_velocity: np.ndarray | None = None
    motor_acceleration: np.ndarray | None = None
    motor_torque: np.ndarray | None = None
    passive_motion: np.ndarray | None = None

    def __getitem__(self, key):
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)

    def keys(self):
        return [k for k in self.__dataclass_fields__ if getattr(self, k) is not None]


@dataclass
class HoidModel:
    """Constant data of both routes for one robot description."""

    desc: RobotDescription
    jets: JD.JetModel
    limbs: SimpleLimbModel | None
    limb_reason: str
    K: np.ndarray
    Mm: np.ndarray
    elastic: np.ndarray
    kernel: HoidKernelModel | None = None     # the recursion compiled (paper 002 robots only)
    has_sea: bool = False                     # any series-elastic actuator: results carry the motor feedforward
    gravity: np.ndarray | None = None         # the description's gravity (3,), the kernel's layout


def hoid_model_with_gravity(m: HoidModel, desc: RobotDescription, jets: JD.JetModel | None = None) -> HoidModel:
    """``m`` for ``desc``, the same robot under another gravity (``desc.tree.gravity``): the
    description, the jet model (``jets``, else ``m.jets`` on ``desc``) and the simple-limb model
    replaced, the compiled kernel model shared (gravity is an argument of its calls)."""
    jets = replace(m.jets, desc=desc) if jets is None else jets
    limbs = None if m.limbs is None else replace(m.limbs, desc=desc)
    return replace(m, desc=desc, jets=jets, limbs=limbs, gravity=np.array(desc.tree.gravity, dtype=float))


def hoid_model(robot_or_desc) -> HoidModel:
    """The :class:`HoidModel` of a robot object (built with the robot, its attribute
    ``hoid_model``: read-only, shared by every thread, each with its own kernel scratch,
    :meth:`~pkm_dynamics.core.hoid.hoid_model.HoidKernelModel.data`), or of a bare
    :class:`RobotDescription`, built on the spot at each call (milliseconds: for repeated calls
    load the robot, :func:`~pkm_dynamics.core.robot.load_robot`); another object with a
    ``description`` likewise."""
    model = getattr(robot_or_desc, "hoid_model", None)
    if isinstance(model, HoidModel):
        return model
    desc = getattr(robot_or_desc, "description", robot_or_desc)
    if not isinstance(desc, RobotDescription):
        raise StateError(f"expected a robot or a RobotDescription, got {type(robot_or_desc).__name__}")
    return build_hoid_model(desc)


def build_hoid_model(desc: RobotDescription, jets: JD.JetModel | None = None, task_frame=None) -> HoidModel:
    """The constant data of both routes for ``desc``: the simple-limb model and its compiled
    form where paper 002's recursion applies (else the reason why not), the jet model of the
    Taylor route (``jets``: the robot's own, else built here), and the SEA parameters.
    ``task_frame``: a parallel robot's ``(C_ref (4, 4), P_p (6, delta))``, the task manifold
    its admissibility checks test a pose against (:func:`.hoid_model.hoid_robot_call`)."""
    limbs, reason = None, ""
    if desc.platform is not None:
        try:
            limbs = simple_limb_model(desc)
        except DescriptionError as exc:
            reason = str(exc)
    else:
        reason = "a module chain (no platform): the recursion of paper 002 is for PKM"
    K, Mm, elastic = sea_parameters(desc)
    kern = None if limbs is None else HoidKernelModel.build(limbs, K, Mm, task_frame)
    g = np.array(desc.tree.gravity, dtype=float)
    jets = JD.jet_model(desc) if jets is None else jets
    return HoidModel(desc, jets, limbs, reason, K, Mm, elastic, kern, bool(elastic.any()), g)


def _one(m: HoidModel, x, derivs, method, q_guess, gravity):
    """One sample by the numpy functions: the Taylor route, or the recursion's reference
    (:mod:`.simple_limb`, :mod:`.hoid_recursion`) that names what the compiled call refuses."""
    jm = m.jets
    if method == "recursive":
        q0 = simple_limb_inverse_kinematics(m.limbs, x, q_guess)
    else:
        q0 = JD.close_loops(jm, x, q_guess)
    if jm.is_pkm:                       # a pose the actuators reach only beyond a stroke
        check_limits(m.desc.tree, jm.actuated, q0[jm.actuated], "actuator position")
    if method == "recursive":
        kin = fourth_order_kinematics(m.limbs, q0, np.asarray(derivs, dtype=float))
        U = second_order_inverse_dynamics(m.limbs, kin, gravity)
        qder = tree_motion_from_limbs(m.limbs, kin)
    else:
        if jm.is_pkm:
            xj = T.from_derivatives(derivs)                    # jet of V_t, degree 3
        else:
            xj = T.from_derivatives([x] + list(derivs))       # jet of x, degree 4
        qj = JD.tree_motion_jet(jm, q0, xj)
        U = T.to_derivatives(JD.actuator_force_jet(jm, qj, gravity))
        qder = T.to_derivatives(qj)
    return U, qder


def _recursive(m: HoidModel, X, Vt, q_guess, gravity) -> tuple:
    """Paper 002's recursion for a batch (``X`` (B, 4, 4), ``Vt`` (B, 4, delta)) by the compiled
    kernel (:func:`~pkm_dynamics.core.hoid.hoid_model.hoid_full_call`: limb closure, recursion and SEA in one
    call); without ``q_guess`` row 0 is first closed from the zero configuration by
    continuation (:func:`.simple_limb.simple_limb_inverse_kinematics`).  A refused row goes
    through the numpy route (:func:`_one`, same start), which raises the named error; the
    status words it if that does not.  Returns ``U`` (B, 3, na), ``Q`` (B, 5, n), ``motor``
    (B, 4, na)."""
    nq = m.desc.tree.nq
    g = m.desc.tree.gravity if gravity is None else np.asarray(gravity, dtype=float)
    if g.shape != (3,):
        raise StateError(f"gravity has shape {g.shape}, expected (3,)")
    if q_guess is None:
        q_guess = simple_limb_inverse_kinematics(m.limbs, X[0])
    q_guess = np.asarray(q_guess, dtype=float)
    if q_guess.shape != (nq,):
        raise StateError(f"q_guess has shape {q_guess.shape}, expected ({nq},)")
    status, Q, U, motor = hoid_full_call(m.kernel, X, Vt, q_guess, g)
    code, row, culprit = (int(v) for v in status)
    if code == OK:
        return U, Q, motor
    if code == BAD_INPUT:
        _check_bounds(m, X, Vt)
        raise StateError(f"row {row} of the motion is not finite or beyond the bounds of this package")
    with np.errstate(all="ignore"):
        _one(m, X[row], Vt[row], "recursive", q_guess if row == 0 else Q[row - 1, 0], gravity)
    if code == STROKE:
        joint = m.desc.tree.joint_names[m.jets.actuated[culprit]]
        raise StateError(f"actuator position[{culprit}] is beyond the limits of joint '{joint}' (its stroke), "
                         f"row {row}")
    name = m.limbs.limbs[culprit].name
    if code == NO_CONVERGENCE:
        raise ConvergenceError(f"limb inverse kinematics of robot '{m.desc.name}' did not converge at limb "
                               f"'{name}' (row {row}); give a closer starting configuration (q_guess)")
    if code in (SINGULAR, SINGULAR_NEWTON):
        raise SingularityError(f"limb '{name}': task-space Jacobian J_t is singular (row {row})")
    raise StateError(f"the higher-order inverse dynamics is not finite at row {row}: the state is too large "
                     "or the actuation singular")


_NAMES = ("xd", "xdd", "xddd", "xdddd")


def _check_bounds(m: HoidModel, x, V) -> None:
    """The bounds of :mod:`.bounds` entry by entry, naming the field: rates ``V[..., k-1, :]`` of
    order k against the k-th bound, the pose ``x`` finite with its position bounded (PKM) or the
    actuator coordinates within their strokes and bounds (module chain)."""
    for order, name in enumerate(_NAMES, start=1):
        check_rate(V[..., order - 1, :], name, order)
    check_bound(x, np.inf, "x")
    if m.jets.is_pkm:
        check_position(x[..., :3, 3], "x (platform position)")
    else:                               # beyond a stroke: as inverse dynamics (INVALID_STATE)
        for row in x.reshape(-1, x.shape[-1]):
            check_limits(m.desc.tree, m.jets.actuated, row)
        check_position(x, "x", "m or rad")      # a joint without limits (continuous)


def _checked_inputs(m: HoidModel, x, ders, bounds: bool) -> tuple:
    """``x`` as a float array, the rates ``ders`` stacked as ``V`` (4, width) or
    (B, 4, width), and whether the call is batched, after checking the shapes (naming the
    field) and, with ``bounds``, :func:`_check_bounds` (the compiled route checks the bounds in
    its kernel instead)."""
    x = np.asarray(x, dtype=float)
    pkm = m.jets.is_pkm
    single_ndim = 2 if pkm else 1
    width = m.jets.Pt.shape[0] if pkm else len(m.jets.actuated)
    if x.ndim not in (single_ndim, single_ndim + 1) or (pkm and x.shape[-2:] != (4, 4)):
        raise StateError(f"x has shape {x.shape}: expected " + ("a 4x4 platform pose" if pkm else f"({width},)")
                         + " or a batch of them")
    batched = x.ndim == single_ndim + 1
    want = (x.shape[0], width) if batched else (width,)
    for name, a in zip(_NAMES, ders):
        shape = np.shape(a)
        if shape != want:
            raise StateError(f"{name} has shape {shape}, expected {want}")
    V = np.array(ders, dtype=float)
    if batched:
        V = np.moveaxis(V, 0, 1)
    if bounds:
        _check_bounds(m, x, V)
    return x, V, batched


def higher_order_inverse_dynamics(robot, x, xd, xdd, xddd, xdddd, method: str = "auto",
                                  q_guess=None, gravity=None) -> HigherOrderResult:
    """Actuator forces ``u`` and their derivatives ``du, ddu`` for a motion given up to its
    4th derivative, plus the series-elastic motor feedforward (paper 002 eqs. 1-2, 19-20).

    Module chains (actuator space): ``x, xd, xdd, xddd, xdddd`` are the actuator coordinates
    and their derivatives, each (na,) or (batch, na).  PKM (task space): ``x`` is the pose of
    the platform frame (4, 4) (or (batch, 4, 4)) and ``xd, xdd, xddd, xdddd`` are the task
    twist ``V_t`` (body-fixed components named in ``<task_space>``) and its first three
    derivatives, each (delta,) or (batch, delta).

    ``method``: ``"recursive"`` (paper 002, PKM with simple limbs), ``"taylor"`` (general
    route, every robot), ``"auto"`` (recursive where it applies).  ``q_guess``: tree
    configuration to start the loop closure from (default: the zero configuration; batch
    rows start from the previous row's solution).  ``gravity``: override (3,).

    Where the recursion applies, one kernel call (a parallel robot's: with the checks of its
    inverse kinematics, :mod:`.hoid_robot_kernels`); a sample it refuses goes through
    :func:`reference_route`, which raises the named error (or, for a parallel robot, takes the
    continuation of its inverse kinematics along the task path)."""
    m = hoid_model(robot)
    ders = (xd, xdd, xddd, xdddd)
    if method in ("auto", "recursive") and m.kernel is not None:
        parallel = hasattr(robot, "admissible_task_state")
        threshold = _threshold(robot) if parallel else None
        res = _one_sample(m, x, ders, q_guess, threshold) if gravity is None else None
        if res is None and parallel:
            res = _robot_call(m, x, ders, q_guess, gravity, threshold)
        if res is not None:
            return res
    return reference_route(robot, x, ders, method, q_guess, gravity)


def reference_route(robot, x, ders, method: str = "auto", q_guess=None, gravity=None) -> HigherOrderResult:
    """:func:`higher_order_inverse_dynamics` (``ders`` = ``(xd, xdd, xddd, xdddd)``) by the route
    that words every refusal: the input checks in Python; for a parallel robot its inverse
    kinematics with every check (``ParallelRobot.admissible_task_state``: limits,
    singularities, working mode) before the recursion; the recursion's compiled call, whose
    refused rows the numpy route names; or the Taylor route."""
    m = hoid_model(robot)
    xd, xdd, xddd, xdddd = ders
    if method == "auto":
        method = "recursive" if m.limbs is not None else "taylor"
    if method == "recursive" and m.limbs is None:
        raise DescriptionError(f"robot '{m.desc.name}': paper 002's recursion does not apply ({m.limb_reason})")
    if method not in ("recursive", "taylor"):
        raise StateError(f"method '{method}' is not one of auto, recursive, taylor")
    compiled = method == "recursive" and not hasattr(robot, "admissible_task_state")
    x, V, batched = _checked_inputs(m, x, (xd, xdd, xddd, xdddd), bounds=not compiled)
    if hasattr(robot, "admissible_task_state"):
        # a ParallelRobot: refuse poses beyond the joint limits or near input, loop or output
        # singularities before the recursion, and close the loops on the IK's working mode
        sol = robot.admissible_task_state(x, initial=q_guess)
        q_guess = sol.q[0] if batched else sol.q
    motor = None
    if method == "recursive":
        U, Qd, motor = _recursive(m, x if batched else x[None], V if batched else V[None], q_guess, gravity)
    else:
        rows = zip(x, *np.moveaxis(V, -2, 0)) if batched else [(x, *V)]
        Us, Qs = [], []
        guess = q_guess
        for r in rows:
            U, qder = _one(m, r[0], r[1:], method, guess, gravity)
            guess = qder[0]
            Us.append(U)
            Qs.append(qder)
        U = np.stack(Us)
        Qd = np.stack(Qs)
    if not batched:
        U, Qd, motor = U[0], Qd[0], None if motor is None else motor[0]
    return _result(m, U, Qd, motor, method)


def _result(m: HoidModel, U, Qd, motor, method: str) -> HigherOrderResult:
    """The :class:`HigherOrderResult` of ``U`` (..., 3, na), ``Qd`` (..., 5, n) and the motor
    feedforward ``motor`` (..., 4, na) (None: computed here, eqs. 1-2, if the robot has SEA).
    A robot with joint friction gets its share added to ``U`` here, whichever route computed it
    (:mod:`.friction_jets`), and its motor feedforward from the sum."""
    if m.desc.friction is not None:
        U, motor = with_friction(m.jets, m.desc.friction.table, U, Qd), None
    Am = Qd.take(m.jets.actuated, axis=-1)
    res = HigherOrderResult(U[..., 0, :], U[..., 1, :], U[..., 2, :], Qd, Am, method)
    if m.has_sea:
        if motor is None:
            ff = sea_feedforward(Am[..., 0, :], Am[..., 1, :], Am[..., 2, :], U[..., 0, :], U[..., 1, :],
                                 U[..., 2, :], m.K, m.Mm)
            motor = np.stack([ff[k] for k in MOTOR_FIELDS], axis=-2)
        res.motor_position, res.motor_velocity = motor[..., 0, :], motor[..., 1, :]
        res.motor_acceleration, res.motor_torque = motor[..., 2, :], motor[..., 3, :]
    return res


#: the one dtype of the kernels' arrays
_FLOAT = np.dtype(np.float64)


def _plain(a, shape) -> bool:
    """``a`` is a C-contiguous writeable float64 array of ``shape`` (the one layout the kernels
    are compiled for)."""
    if type(a) is not np.ndarray or a.shape != shape or a.dtype != _FLOAT:
        return False
    flags = a.flags
    return flags.c_contiguous and flags.writeable


def _one_sample(m: HoidModel, x, ders, q_guess, threshold):
    """The compiled route's short path: one sample given as arrays that need no conversion
    (``x`` (4, 4), the rates ``ders`` (D,) each, ``q_guess`` (nq,), float64; the description's
    gravity) straight to the kernel (:func:`~pkm_dynamics.core.hoid.hoid_model.hoid_one`, which checks the
    bounds; with a ``threshold`` (float) that of a parallel robot, which checks what its inverse
    kinematics would, :mod:`.hoid_robot_kernels`; ``q_guess`` None starts it from the reference
    configuration) and its arrays into the result.  None for any other input or when the
    kernel refuses the sample: the full route then runs and names the error as before."""
    k = m.kernel
    if q_guess is None and threshold is not None:
        q_guess = np.zeros(k.nq)
    if not (_plain(x, (4, 4)) and _plain(q_guess, (k.nq,))):
        return None
    shape = (k.D,)
    for a in ders:
        if type(a) is not np.ndarray or a.shape != shape:
            return None
    code, Q, U, motor = hoid_one(k, x, np.array(ders, dtype=float), q_guess, m.gravity, threshold)
    if code != OK:
        return None
    return _result(m, U, Q, motor, "recursive")


def _threshold(robot) -> float:
    """The robot's ``singularity_threshold`` as the kernels take it (< 0: none)."""
    t = robot.singularity_threshold
    return -1.0 if t is None else float(t)


def _robot_call(m: HoidModel, x, ders, q_guess, gravity, threshold: float):
    """A parallel robot's call in one kernel (:func:`~pkm_dynamics.core.hoid.hoid_model.hoid_full_call`
    with its ``threshold``: paper 002's closure and recursion with the checks of the robot's
    inverse kinematics) for inputs of any array type, one sample or a batch; ``q_guess`` None:
    from the reference configuration.  None when the kernel refuses (or ``q_guess``,
    ``gravity`` are not plain arrays): the robot's reference route then runs, which raises the
    named error or continues along the task path (its working mode)."""
    x, V, batched = _checked_inputs(m, x, ders, bounds=False)
    nq = m.desc.tree.nq
    q0 = np.zeros(nq) if q_guess is None else np.asarray(q_guess)
    g = m.gravity if gravity is None else np.asarray(gravity)
    if q0.shape != (nq,) or q0.dtype.kind not in "fi" or g.shape != (3,) or g.dtype.kind not in "fi":
        return None
    status, Q, U, motor = hoid_full_call(m.kernel, x if batched else x[None], V if batched else V[None], q0, g,
                                         threshold=threshold)
    if status[0] != OK:
        return None
    if not batched:
        U, Q, motor = U[0], Q[0], motor[0]
    return _result(m, U, Q, motor, "recursive")
