"""The inverse kinematics result of a parallel robot and its batches: one sample of a batch,
a batch of samples, the limb Jacobians of the kernel's views."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..interface import IKSolution
from ..limb.limb_ik import LimbJacobians


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
                and _equal(self.gravity, gravity))
        return self.value if same else None


def _equal(value, given) -> bool:
    """``numpy.array_equal(value, given)``; for arrays of one shape and dtype as lists of
    Python numbers (equal where ``==`` is: a NaN differs from itself), quicker on a few values."""
    if isinstance(given, np.ndarray) and isinstance(value, np.ndarray) and given.shape == value.shape \
            and given.dtype == value.dtype:
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


def pkm_solution(sol: IKSolution, **fields) -> PkmIKSolution:
    """``sol`` as a :class:`PkmIKSolution` (a copy) with ``fields`` replaced."""
    if isinstance(sol, PkmIKSolution):
        return dataclasses.replace(sol, **fields)
    base = {f.name: getattr(sol, f.name) for f in dataclasses.fields(IKSolution)}
    return PkmIKSolution(**base, **fields)


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
