"""The HIAB XS 031 data's sinusoidal test motions (../shared/models/hiab_xs031/README.md, the
authors' free motions with a fixed base) in the actuator coordinates of ``heavy_duty_4dof``
(slew fixed at 0), with their first three time derivatives, written from the data's own
recipe, independently of the package: Petrovic's link angles give the loop angles
(``q1 = Theta1 - 2.0735``, ``q2 = Theta2 - 0.4116``, hiab031_model.json ``kinematics``) and
the cylinder coordinate ``x = sqrt(La^2 + Lb^2 + 2 La Lb cos q) - x0`` (``paz_notation_map``).

* case 1: Theta1 = 20 deg + 5 deg sin t, Theta2 = -50 deg + 15 deg sin 2t, x3 = 0.5 + 0.1 sin t m;
* case 2: Theta1 = 20 deg + 10 deg sin t, Theta2 = -70 deg + 15 deg sin 2t, x3 = 0.3 + 0.2 sin t m.
"""
import json
import math
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / 'robots' / 'hiab_xs031' / 'hiab031_model.json'


def loop_x(q, rates, La, Lb, x0):
    """Cylinder coordinate x of a loop angle ``q`` and its first three derivatives, from those
    of ``q`` (``rates`` = q', q'', q'''): ``d^2 = u = La^2 + Lb^2 + 2 La Lb cos q``, x = d - x0."""
    q1, q2, q3 = rates
    c0, c1 = La * La + Lb * Lb, 2 * La * Lb
    u = c0 + c1 * np.cos(q)
    u1 = -c1 * np.sin(q) * q1
    u2 = -c1 * (np.cos(q) * q1**2 + np.sin(q) * q2)
    u3 = -c1 * (-np.sin(q) * q1**3 + 3 * np.cos(q) * q1 * q2 + np.sin(q) * q3)
    d = np.sqrt(u)
    d1 = u1 / (2 * d)
    d2 = (u2 - 2 * d1**2) / (2 * d)
    d3 = (u3 - 6 * d1 * d2) / (2 * d)
    return d - x0, d1, d2, d3


def sinus(mean, amplitude, omega, t):
    """``mean + amplitude sin(omega t)`` and its first three derivatives."""
    s, c = np.sin(omega * t), np.cos(omega * t)
    return (mean + amplitude * s, amplitude * omega * c, -amplitude * omega**2 * s,
            -amplitude * omega**3 * c)


def hiab_test_motion(t, case=1):
    """``(4, len(t), 4)``: x, xd, xdd, xddd of the actuators [slew, lift, tilt, extension] at
    the times ``t`` [s] of test motion ``case`` (1 or 2)."""
    g = json.loads(DATA.read_text())['geometry']
    t = np.asarray(t, dtype=float)
    deg = math.pi / 180
    if case == 1:
        th1, th2, x3 = sinus(20 * deg, 5 * deg, 1, t), sinus(-50 * deg, 15 * deg, 2, t), sinus(0.5, 0.1, 1, t)
    else:
        th1, th2, x3 = sinus(20 * deg, 10 * deg, 1, t), sinus(-70 * deg, 15 * deg, 2, t), sinus(0.3, 0.2, 1, t)
    x1 = loop_x(th1[0] - 2.0735, th1[1:], g['L1'], g['L11'], g['x10'])
    x2 = loop_x(th2[0] - 0.4116, th2[1:], g['L2'], g['L21'], g['x20'])
    zero = np.zeros_like(t)
    return np.stack([np.stack([zero, a, b, c], -1) for a, b, c in zip(x1, x2, x3)])
