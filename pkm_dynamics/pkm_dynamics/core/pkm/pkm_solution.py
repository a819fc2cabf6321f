"""The inverse kinematics result of a parallel robot and its batches: one sample of a batch,
a batch of samples, the limb Jacobians of the kernel's views."""
from __future__ import annotations

import numpy as np

from ..interface import IKSolution
from ..limb.limb_ik import LimbJacobians

#: the inverse kinematics result (:class:`~.interface.IKSolution`, one type for every robot kind)
PkmIKSolution = IKSolution


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
