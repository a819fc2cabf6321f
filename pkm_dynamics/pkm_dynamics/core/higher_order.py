"""Higher-order inverse dynamics (paper 002, Mueller, Kumar, Kordik): the public call
:func:`higher_order_inverse_dynamics` for every robot kind, its result and its per-robot model.

Two routes give ``u, du, ddu`` (and the series-elastic motor feedforward, :mod:`.sea`):

* ``"recursive"``: paper 002's recursion for a non-redundant PKM with simple limbs --
  the limbs (:mod:`.simple_limb`), their zeroth-order inverse kinematics, the four-pass
  4th-order kinematics and the second-order inverse dynamics (:mod:`.hoid_recursion`);
* ``"taylor"``: the general route (:mod:`.jet_dynamics`, Taylor polynomials) for every robot
  kind: module chains (heavy-duty manipulators, actuator-space motion) and PKM with hybrid
  limbs.  It is the independent check of the recursion.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import jet_dynamics as JD
from . import taylor as T
from .bounds import check_bound, check_limits, check_position, check_rate
from .description import RobotDescription
from .errors import DescriptionError, StateError
from .hoid_recursion import fourth_order_kinematics, second_order_inverse_dynamics, tree_motion_from_limbs
from .sea import sea_feedforward, sea_parameters
from .simple_limb import SimpleLimbModel, simple_limb_inverse_kinematics, simple_limb_model


@dataclass
class HigherOrderResult:
    """Result of :func:`higher_order_inverse_dynamics` (attribute or key access).

    ``u, du, ddu``: actuator forces and their first two time derivatives (na,) (or
    (batch, na)); ``tree_motion``: derivatives of every tree joint, orders 0..4, (5, n)
    (or (batch, 5, n)); ``actuator_motion``: the actuated joints' rows of it; ``method``:
    ``"recursive"`` (paper 002) or ``"taylor"``; with series-elastic actuators also
    ``motor_position, motor_velocity, motor_acceleration, motor_torque`` (eqs. 1-2)."""

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


_CACHE: dict = {}


def hoid_model(robot_or_desc) -> HoidModel:
    """The (cached) :class:`HoidModel` of a robot object or a :class:`RobotDescription`."""
    desc = getattr(robot_or_desc, "description", robot_or_desc)
    if not isinstance(desc, RobotDescription):
        raise StateError(f"expected a robot or a RobotDescription, got {type(robot_or_desc).__name__}")
    hit = _CACHE.get(id(desc))
    if hit is not None and hit.desc is desc:
        return hit
    limbs, reason = None, ""
    if desc.platform is not None:
        try:
            limbs = simple_limb_model(desc)
        except DescriptionError as exc:
            reason = str(exc)
    else:
        reason = "a module chain (no platform): the recursion of paper 002 is for PKM"
    K, Mm, elastic = sea_parameters(desc)
    m = HoidModel(desc, JD.jet_model(desc), limbs, reason, K, Mm, elastic)
    if len(_CACHE) > 32:
        _CACHE.clear()
    _CACHE[id(desc)] = m
    return m


def _one(m: HoidModel, x, derivs, method, q_guess, gravity):
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
    rows start from the previous row's solution).  ``gravity``: override (3,)."""
    m = hoid_model(robot)
    if method == "auto":
        method = "recursive" if m.limbs is not None else "taylor"
    if method == "recursive" and m.limbs is None:
        raise DescriptionError(f"robot '{m.desc.name}': paper 002's recursion does not apply ({m.limb_reason})")
    if method not in ("recursive", "taylor"):
        raise StateError(f"method '{method}' is not one of auto, recursive, taylor")
    x = np.asarray(x, dtype=float)
    ders = [np.asarray(a, dtype=float) for a in (xd, xdd, xddd, xdddd)]
    pkm = m.jets.is_pkm
    single_ndim = 2 if pkm else 1
    width = m.jets.Pt.shape[0] if pkm else len(m.jets.actuated)
    if x.ndim not in (single_ndim, single_ndim + 1):
        raise StateError(f"x has shape {x.shape}: expected " + ("a 4x4 platform pose" if pkm else f"({width},)")
                         + " or a batch of them")
    batched = x.ndim == single_ndim + 1
    for order, (name, a) in enumerate(zip(("xd", "xdd", "xddd", "xdddd"), ders), start=1):
        want = (x.shape[0], width) if batched else (width,)
        if a.shape != want:
            raise StateError(f"{name} has shape {a.shape}, expected {want}")
        check_rate(a, name, order)
    check_bound(x, np.inf, "x")
    if pkm:
        check_position(x[..., :3, 3], "x (platform position)")
    else:                               # beyond a stroke: as inverse dynamics (INVALID_STATE)
        for row in (x if batched else [x]):
            check_limits(m.desc.tree, m.jets.actuated, row)
        check_position(x, "x", "m or rad")      # a joint without limits (continuous)
    if hasattr(robot, "admissible_task_state"):
        # a ParallelRobot: refuse poses beyond the joint limits or near input, loop or output
        # singularities before the recursion, and close the loops on the IK's working mode
        sol = robot.admissible_task_state(x, initial=q_guess)
        q_guess = sol.q[0] if batched else sol.q
    rows = zip(x, *ders) if batched else [(x, *ders)]
    Us, Qs = [], []
    guess = q_guess
    for r in rows:
        U, qder = _one(m, r[0], r[1:], method, guess, gravity)
        guess = qder[0]
        Us.append(U)
        Qs.append(qder)
    U = np.stack(Us)
    Qd = np.stack(Qs)
    act = m.jets.actuated
    Am = Qd[:, :, act]
    res = HigherOrderResult(U[:, 0], U[:, 1], U[:, 2], Qd, Am, method)
    if np.any(m.elastic):
        ff = sea_feedforward(Am[:, 0], Am[:, 1], Am[:, 2], U[:, 0], U[:, 1], U[:, 2], m.K, m.Mm)
        for k, v in ff.items():
            setattr(res, k, v)
    if not batched:
        for k in res.keys():
            v = getattr(res, k)
            if isinstance(v, np.ndarray):
                setattr(res, k, v[0])
    return res
