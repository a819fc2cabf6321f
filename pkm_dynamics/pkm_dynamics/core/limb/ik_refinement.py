"""Refinement of a limb IK solution (configuration, rates, accelerations) to round-off and the
loop-conditioning monitor (paper 001 Sec. 4, eqs. 27-29, Remarks 2-3).

Both IK schemes stop once the pose error and the loop residual are below the accuracy goal
``tol`` (Algorithms 1-3).  The velocity and acceleration IK (eqs. 27-29) are exact only on the
constraint manifold: they solve with ``G_y`` and ``L_t`` at the returned ``theta``, so a
configuration that is ``tol`` off the manifold puts errors of about ``kappa(G_y) tol`` into the
rates and more into the accelerations (near ill-conditioned loops, e.g. IRSBot-2's distal 4U
loop, the platform then "rotates" by 1e-7 rad/s^2 where it cannot).  The remedy here: a few
more compound Newton steps (:func:`.limb_ik.compound_newton_step`, the exact Newton step of the
stacked system ``(g, Delta x_t) = 0``) after convergence, for either scheme, until pose error
and loop residual are at round-off; quadratic convergence makes that one step.  Then the rates
and accelerations of eqs. 27-29, which solve through the partition ``G_y``, ``L_t`` and inherit
its amplification of round-off, are refined on the limb's full linear equations
(:func:`limb_rates`, :func:`refine_rates`).

The monitor: ``kappa(G_y)`` of every FC at the solution.  Beyond a threshold the loop is near a
singularity (its dependent coordinates are not determined to the accuracy of the request) and
:func:`check_loop_conditions` raises :class:`~.errors.SingularityError` naming limb and loop.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from ..errors import SingularityError
from .limb_ik import (LimbJacobians, compound_newton_step, limb_acceleration_ik, limb_jacobians,
                      limb_velocity_ik, pose_error)
from .limb_kinematics import limb_platform_pose, limb_state
from .limb_model import Limb
from .loop_constraints import _cut_bias, _resolve
from .loop_partition import partition_at
from ..spatial.se3 import Ad_inv
from ..status import REFINEMENT_STEPS, ROUND_OFF
from ..tree.tree_dynamics import kinematics


def refine_to_round_off(limb: Limb, C_target, theta, state=None, max_steps: int = REFINEMENT_STEPS):
    """Compound Newton steps on ``(g(theta), Delta x_t(theta)) = 0`` from a converged ``theta``
    (n_l,) towards ``C_target`` (4, 4) until the pose error and every loop residual are at most
    :data:`ROUND_OFF` (at most ``max_steps``; from a residual of ``tol`` = 1e-10 quadratic
    convergence needs one step).  Returns ``(theta, state)`` with ``state = limb_state(limb,
    theta)`` at the refined configuration."""
    theta = np.array(theta, dtype=float)
    state = limb_state(limb, theta) if state is None else state
    for _ in range(max_steps):
        dx = pose_error(limb, limb_platform_pose(limb, theta, state[0]), C_target)
        g = max([np.abs(g).max(initial=0.0) for g, _, _ in state[2]], default=0.0)
        if max(np.abs(dx).max(initial=0.0), g) <= ROUND_OFF:
            break
        lk = partition_at(limb, state)            # Remarks 2-3: G_y well conditioned here
        theta = theta + compound_newton_step(lk, state, limb_jacobians(lk, theta, state), dx)
        state = limb_state(limb, theta)
    return theta, state


def limb_rates(limb: Limb, theta, V_t, Vdot_t, P_p, jac: LimbJacobians, state=None, poses=None):
    """``(thetad, thetadd)`` (n_l,) of eqs. 27-29 at ``theta`` for the task twist ``V_t`` and
    acceleration ``Vdot_t`` (delta_p,) (None: ``thetadd`` is None), each refined on the whole
    platform motion (:func:`refine_rates`; ``P_p`` (6, delta_p), eq. 11).  ``poses``: the limb
    tree's relative poses and adjoints at ``theta`` for :func:`~.tree_dynamics.kinematics`."""
    state = limb_state(limb, theta) if state is None else state
    S = np.vstack([G for _, G, _ in state[2]] + [jac.J_p])
    QR = np.linalg.qr(S)
    thd = limb_velocity_ik(limb, theta, V_t, jac)[1]
    thd = refine_rates(limb, thd, P_p @ V_t, S, QR)
    if Vdot_t is None:
        return thd, None
    motion = kinematics(limb.tree, theta, thd, poses=poses)[1:]
    thdd = limb_acceleration_ik(limb, theta, thd, Vdot_t, jac, state, motion)[1]
    return thd, refine_rates(limb, thdd, P_p @ Vdot_t, S, QR, motion)


def refine_rates(limb: Limb, x, platform_target, S, QR, motion=None) -> np.ndarray:
    """One refinement step of a solution ``x`` (n_l,) of the limb's linear equations at the
    velocity level (``motion`` None; eqs. 13, 5: ``G x = 0``, ``J_p x = V_p``) or the
    acceleration level (``motion = (C, V, A0)`` of the tree motion ``(theta, thetad, 0)``; eq.
    14: ``G x + Gdot thetad = 0``, ``J_p x + Jdot_p thetad = Vdot_p``); ``platform_target``:
    the platform frame's twist ``V_p`` or its derivative (6,) -- all six components, also those
    outside the limb's ``P_t`` rows, which eqs. 27-29 do not use.  ``S = [G; J_p]`` (all
    constraint rows of every FC, then the platform Jacobian) and its ``numpy.linalg.qr``.

    Eqs. 27-29 solve through the partition ``G_y`` and ``L_t = P_t J_p H``; near an
    ill-conditioned loop that amplifies round-off (accelerations off by 1e-9 relative, the
    platform "rotating" where it cannot), while the stacked system (full column rank,
    consistent) determines ``x`` to round-off: ``x + R^-1 Q^T (rhs - S x)``, the least-squares
    correction for the residuals of all rows."""
    bias, platform = np.zeros(len(S) - 6), np.zeros(6)
    if motion is not None:
        C, V, A0 = motion
        bias = np.concatenate([_cut_bias(geo, C, V, A0) for lp in limb.loops for geo in lp.cuts] + [bias[:0]])
        platform = Ad_inv(limb.platform_offset) @ A0[limb.platform_body]
    rhs = np.concatenate([-bias, np.asarray(platform_target, dtype=float) - platform])
    Q, R = QR
    return x + scipy.linalg.solve_triangular(R, Q.T @ (rhs - S @ x))


def loop_conditions(limb: Limb, state) -> np.ndarray:
    """``kappa(G_y)`` (n_loops,) of each FC of ``limb`` at ``state = limb_state(limb, theta)``
    (the ratio of the extreme singular values of the selected rows and dependent columns,
    eq. 18; inf when singular)."""
    out = []
    for lp, (_, G, _) in zip(limb.loops, state[2]):
        Gy, _ = _resolve(lp, G)
        if Gy.size == 0:
            out.append(1.0)
            continue
        s = np.linalg.svd(Gy, compute_uv=False)
        out.append(float(s[0] / s[-1]) if s[-1] > 0 else np.inf)
    return np.array(out)


def check_loop_conditions(limb: Limb, state, threshold) -> np.ndarray:
    """:func:`loop_conditions`; raises :class:`SingularityError` naming the limb and the first
    loop whose ``kappa(G_y)`` exceeds ``threshold`` (None: never)."""
    kappa = loop_conditions(limb, state)
    if threshold is not None:
        for lp, k in zip(limb.loops, kappa):
            if not k <= threshold:
                raise SingularityError(
                    f"{limb.name} loop {', '.join(lp.names)}: the loop is near a singularity at the "
                    f"requested pose (kappa(G_y) = {k:.3g} > loop singularity threshold {threshold:.3g}); "
                    "its passive joints are not determined to the requested accuracy")
    return kappa
