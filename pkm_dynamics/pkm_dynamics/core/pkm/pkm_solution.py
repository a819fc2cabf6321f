"""The inverse kinematics result of a parallel robot and its batches: one sample of a batch,
a batch of samples, the limb Jacobians of the kernel's views."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ..interface import IKSolution
from ..limb.limb_ik import LimbJacobians
from .limb_tables import LazyLimbs


class MotionValue(NamedTuple):
    """A value the inverse kinematics computed for one task motion: ``twist`` ``V_t`` and
    ``acceleration`` ``Vdot_t`` (delta_p,) it belongs to, under ``gravity`` (3,) (a robot's
    :meth:`with_gravity` copy does not take another gravity's forces), ``value`` the numbers."""
    twist: np.ndarray
    acceleration: np.ndarray
    value: np.ndarray
    gravity: np.ndarray

    def of(self, twist, acceleration, gravity):
        """``value`` if it belongs to the motion ``(twist, acceleration)`` under ``gravity``,
        else None."""
        same = (_equal(self.twist, twist) and _equal(self.acceleration, acceleration)
                and (self.gravity is gravity or _equal(self.gravity, gravity)))
        return self.value if same else None


def _equal(value, given) -> bool:
    """``numpy.array_equal(value, given)``; for arrays of one shape as lists of Python numbers
    (equal where ``==`` is: a NaN differs from itself), quicker on a few values."""
    if isinstance(given, np.ndarray) and isinstance(value, np.ndarray) and given.shape == value.shape:
        return value.tolist() == given.tolist()
    return np.array_equal(value, given)


@dataclass
class PkmIKSolution(IKSolution):
    """The inverse kinematics of a parallel robot (:class:`~.interface.IKSolution`) with what
    its dynamics reuse, set by the code that makes it: ``flat`` (n_theta,) the limbs' tree
    joints end to end; per limb ``jacobians`` (:class:`~.limb_ik.LimbJacobians`) and
    ``limb_states`` (:func:`~.limb_kinematics.limb_state`), None: not computed; for a task
    motion given with its acceleration, ``limb_forces`` (:class:`MotionValue` of
    ``sum_l K_l^T Q_l`` (delta_p,), the limbs' share of eq. 45) and ``efforts`` (:class:`MotionValue`
    of the actuator forces ``u`` (n_act,) of eq. 45 the compiled IK computed for that motion,
    without platform wrench, ``J_IK`` checked; None where it did not)."""

    flat: np.ndarray | None = None
    jacobians: list | None = None
    limb_states: list | None = None
    limb_forces: MotionValue | None = None
    efforts: MotionValue | None = None


class KernelIKSolution(PkmIKSolution):
    """The :class:`PkmIKSolution` of one reference the compiled reference completed
    (:meth:`~.pkm_kinematics.PkmKinematics._kernel_solution`): ``pose``, ``J_IK``, ``flat``,
    ``limb_forces`` and ``efforts`` as given, every other field made on its first read (the
    same numbers as a solution made with every field) from the kernel's flat joint rates
    ``thd``, ``thdd`` (n_theta,; None: not computed), the copies ``out`` (L, 3), ``idt``, ``fd``
    of its scratch, and the robot's ``tables`` (:class:`~.limb_tables.LimbTables`), actuators'
    flat positions ``act`` (n_act,), ``whole`` (the tree-joint values of a flat vector) and
    scheme (``nested``).  A field once made or assigned is the solution's own
    (:func:`functools.cached_property`)."""

    def __init__(self, pose, J_IK, flat, thd, thdd, out, idt, fd, tables, act, whole, nested: bool):
        self.pose, self.J_IK, self.flat, self.solutions = pose, J_IK, flat, None
        self.limb_forces = self.efforts = None
        self._rates, self._out, self._scratch = (thd, thdd), out, (idt, fd)
        self._tables, self._act, self._whole, self._nested = tables, act, whole, nested

    def _gather(self, k: int, to):
        """``to`` (a gather of a flat vector) of the joints (k 0), rates (1) or accelerations (2)."""
        v = self.flat if k == 0 else self._rates[k - 1]
        return None if v is None else to(v)

    actuators = cached_property(lambda self: self.flat[self._act])
    actuators_d = cached_property(lambda self: self._gather(1, lambda v: v[self._act]))
    actuators_dd = cached_property(lambda self: self._gather(2, lambda v: v[self._act]))
    q = cached_property(lambda self: self._whole(self.flat))
    qd = cached_property(lambda self: self._gather(1, self._whole))
    qdd = cached_property(lambda self: self._gather(2, self._whole))
    limb_theta = cached_property(lambda self: self._tables.split(self.flat))
    limb_thetad = cached_property(lambda self: self._gather(1, self._tables.split))
    limb_thetadd = cached_property(lambda self: self._gather(2, self._tables.split))
    iterations = cached_property(lambda self: self._out[:, 0].astype(int))
    condition = cached_property(lambda self: self._out[:, 1].copy())
    residual = cached_property(lambda self: np.array(max(0.0, *self._out[:, 2].tolist())))
    jacobians = cached_property(lambda self: LazyLimbs(len(self._out), lambda l: jacobians_of_views(
        self._tables.state(l, self._scratch[1])[1])))
    limb_states = cached_property(lambda self: LazyLimbs(len(self._out), lambda l: self._tables.state(
        l, self._scratch[1])[0]))

    @cached_property
    def inner(self) -> list:
        """Per limb the inner iterations of each FC per outer step (nested scheme; else empty)."""
        L, T, idt, its = len(self._out), self._tables, self._scratch[0], self.iterations
        return LazyLimbs(L, lambda l: T.inner(l, idt, its[l])) if self._nested else [[] for _ in range(L)]


def pkm_solution(sol: IKSolution, **fields) -> PkmIKSolution:
    """``sol`` as a :class:`PkmIKSolution` (a copy) with ``fields`` replaced."""
    kind = PkmIKSolution if isinstance(sol, PkmIKSolution) else IKSolution
    base = {f.name: getattr(sol, f.name) for f in dataclasses.fields(kind)}
    return PkmIKSolution(**{**base, **fields})


def flat_theta(sol: IKSolution) -> np.ndarray:
    """The limbs' tree joints of ``sol`` end to end (n_theta,): its ``flat`` where it has it."""
    flat = getattr(sol, "flat", None)
    return np.concatenate(sol.limb_theta) if flat is None else flat


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


def stack_solutions(sols: list) -> PkmIKSolution:
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


def jacobians_of_views(views) -> LimbJacobians:
    """:class:`~.limb_ik.LimbJacobians` from the kernel's ``(H, J_p, L_t, F, K)``."""
    H, J_p, L_t, F, K = views
    return LimbJacobians(H, J_p, J_p @ H, L_t, F, K)
