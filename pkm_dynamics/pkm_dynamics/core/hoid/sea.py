"""Series-elastic actuation (paper 002, eqs. 1-2): motor feedforward from the joint forces.

The mechanism is driven by the spring forces ``u = K (q_m - theta_a)`` (eq. 1's right-hand
side); the drive units obey ``M_m qdd_m = tau - u`` (eq. 2).  For a desired motion the
inverse dynamics gives ``u`` and its derivatives, so that (flatness-based feedforward,
relative degree 4)::

    q_m    = theta_a    + K^-1 u
    qd_m   = thetad_a   + K^-1 ud
    qdd_m  = thetadd_a  + K^-1 udd
    tau    = u + M_m qdd_m

``K`` and ``M_m`` are diagonal (one stiffness and one reduced motor inertia per actuated joint,
from ``<series_elastic stiffness=".." motor_inertia=".."/>`` in the robot description).
An actuator without series elasticity is rigid: ``q_m = theta_a`` and ``tau = u``.
"""
from __future__ import annotations

import numpy as np

from ..errors import DescriptionError

#: the motor feedforward fields of a result, in the order of eqs. 1-2 below
MOTOR_FIELDS = ("motor_position", "motor_velocity", "motor_acceleration", "motor_torque")


def sea_parameters(desc) -> tuple:
    """``(K, M_m, elastic)``: stiffnesses (na,), motor inertias (na,) and the mask of the
    series-elastic actuators (rigid actuators get ``K = inf``, ``M_m = 0``)."""
    K = np.array([a.stiffness if a.series_elastic else np.inf for a in desc.actuators], dtype=float)
    Mm = np.array([a.motor_inertia if a.series_elastic and a.motor_inertia is not None else 0.0
                   for a in desc.actuators], dtype=float)
    elastic = np.array([a.series_elastic for a in desc.actuators], dtype=bool)
    if np.any(K <= 0):
        bad = [a.joint for a, k in zip(desc.actuators, K) if k <= 0]
        raise DescriptionError(f"series-elastic actuators {bad} have non-positive stiffness")
    return K, Mm, elastic


def sea_feedforward(theta_a, dtheta_a, ddtheta_a, u, du, ddu, K, Mm) -> dict:
    """Motor position, velocity, acceleration and torque (eqs. 1-2) from the actuated joint
    motion and the joint forces with their first two derivatives.  Arrays broadcast over a
    leading batch axis; ``K`` (na,) stiffnesses (``inf`` = rigid), ``Mm`` (na,) inertias."""
    c = np.where(np.isfinite(K), 1.0 / np.where(np.isfinite(K), K, 1.0), 0.0)
    qm = theta_a + c * u
    qmd = dtheta_a + c * du
    qmdd = ddtheta_a + c * ddu
    tau = u + Mm * qmdd
    return {"motor_position": qm, "motor_velocity": qmd, "motor_acceleration": qmdd, "motor_torque": tau}
