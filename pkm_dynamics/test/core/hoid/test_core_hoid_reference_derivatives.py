"""Jerk and snap of a reference given by position, velocity, acceleration
(:mod:`pkm_dynamics.core.reference_derivatives`), for the series-elastic motor feedforward.

Independent checks: the Hermite estimate against polynomials differentiated by numpy; the
motor torque of the higher-order inverse dynamics with the estimated jerk and snap against
the one with the exact derivatives of the pick-and-place path (paper 002 Sec. VI-B)."""
import os

import numpy as np
from numpy.polynomial import polynomial as P
import pytest

from pkm_dynamics.core.description.robot_description import parse_description
from pkm_dynamics.core.hoid.higher_order import higher_order_inverse_dynamics
from pkm_dynamics.core.hoid.hoid_motions import pick_and_place
from pkm_dynamics.core.hoid.reference_derivatives import MAX_GAP, StreamRates, hermite_rates

RRR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "robots", "planar_3rrr.urdf")
#: a reference time as ROS stamps it (ns since 1970): the spacing must stay exact
EPOCH = 1_795_000_000 * 10**9
MS = 10**6


def derivatives(coef, t, orders):
    """(len(orders), n): derivatives ``orders`` at ``t`` of the polynomials ``coef`` (deg+1, n)."""
    return np.array([[P.polyval(t, P.polyder(c, k)) for c in coef.T] for k in orders])


@pytest.mark.parametrize("m", [2, 3])
def test_hermite_rates_are_exact_for_polynomials_of_their_degree(m):
    """Derivatives m, m+1 of the two-point Hermite polynomial (degree 2m-1) at either point
    equal those of any polynomial of that degree through the data."""
    rng = np.random.default_rng(m)
    coef = rng.normal(size=(2 * m, 3))
    t0, h = 0.3, 0.1                       # the differences lose ~eps / h^(m+1)
    first, second = derivatives(coef, t0, range(m)), derivatives(coef, t0 + h, range(m))
    for at_end, t in ((False, t0), (True, t0 + h)):
        want = derivatives(coef, t, (m, m + 1))
        np.testing.assert_allclose(hermite_rates(h, first, second, at_end), want, rtol=1e-8,
                                   atol=1e-8 * np.abs(want).max())


def test_stream_rates_restart_and_filter():
    """The stream's estimate: zero at its start and at every restart (a reference not later
    than the previous one, a gap beyond MAX_GAP, other dimensions, unstamped); exact for a
    quadratic twist (constant 2nd derivative, zero 3rd) from the second reference on, the
    low-pass included (it starts from the first estimate, not from zero)."""
    coef = np.array([[0.1, -0.2], [0.5, 0.3], [2.0, -1.0]])       # V(t), quadratic, (3, 2)
    want = derivatives(coef, 0.0, (2, 3))

    def data(t):                        # t in ns: the twist and its derivative at t - EPOCH
        return derivatives(coef, (t - EPOCH) * 1e-9, (0, 1))

    for tau in (0.0, 0.01):
        s = StreamRates(time_constant=tau)
        t = EPOCH
        np.testing.assert_array_equal(s.update(t, data(t)), np.zeros((2, 2)))
        for _ in range(5):
            t += 10 * MS
            np.testing.assert_allclose(s.update(t, data(t)), want, rtol=0, atol=1e-7)
        gap = int(2 * MAX_GAP * 1e9)
        for t_next in (t, t - 10 * MS, t + gap):                     # again, back, a gap
            np.testing.assert_array_equal(s.update(t_next, data(t_next)), np.zeros((2, 2)))
        t = t_next + 10 * MS
        np.testing.assert_allclose(s.update(t, data(t)), want, rtol=0, atol=1e-7)
        np.testing.assert_array_equal(s.update(t + 10 * MS, np.zeros((2, 3))), np.zeros((2, 3)))
    s = StreamRates()
    assert not s.update(0, data(EPOCH)).any() and not s.update(0, data(EPOCH + 10 * MS)).any()


def test_stream_rates_low_pass_is_first_order():
    """With ``time_constant`` tau the estimate moves by ``1 - exp(-h / tau)`` of the way to
    the new unfiltered one: a twist that turns from quadratic to cubic at t = 0 (V-dddot
    from 0 to 6 c) gives the first-order response of the unfiltered Hermite estimate."""
    tau, h = 0.004, MS
    c = 50.0
    raw, filtered = StreamRates(), StreamRates(time_constant=tau)

    def data(t):
        v = 1.0 + 0.5 * t + 2.0 * t * t + (c * t ** 3 if t > 0 else 0.0)
        a = 0.5 + 4.0 * t + (3 * c * t * t if t > 0 else 0.0)
        return np.array([[v], [a]])

    y = None
    for k in range(40):
        t, ns = (k - 10) * 1e-3, EPOCH + k * h
        x, got = raw.update(ns, data(t)), filtered.update(ns, data(t))
        if k:
            y = x if y is None else y + (1.0 - np.exp(-h * 1e-9 / tau)) * (x - y)
            np.testing.assert_allclose(got, y, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(y[1], 6 * c, rtol=0.05)               # settled


def test_motor_torque_with_estimated_jerk_and_snap_on_pick_and_place():
    """Over one pick-and-place cycle at 1 kHz: the motor torque (eqs. 1-2) with jerk and snap
    from the stream of single-point references (previous one) and from two-point references
    (the next point 1 ms later), against the exact derivatives of the path: within 0.5 % of
    the largest torque, where jerk = snap = 0 is 8 % off."""
    rrr = parse_description(RRR)
    dt = 1e-3
    stream = StreamRates()
    exact, zero, streamed, spline = [], [], [], []
    q = None
    for k in range(1000):
        t = k * dt
        C, V = pick_and_place(t)
        r = higher_order_inverse_dynamics(rrr, C, *V, q_guess=q)
        q = r.tree_motion[0]
        exact.append(r.motor_torque)
        for out, rates in ((zero, np.zeros((2, 3))), (streamed, stream.update(EPOCH + k * MS, V[:2])),
                           (spline, hermite_rates(dt, V[:2], pick_and_place(t + dt)[1][:2]))):
            out.append(higher_order_inverse_dynamics(rrr, C, V[0], V[1], *rates, q_guess=q).motor_torque)
    exact, zero, streamed, spline = map(np.array, (exact, zero, streamed, spline))
    scale = np.abs(exact).max()
    assert np.abs(zero - exact).max() > 0.08 * scale
    assert np.abs(streamed[1:] - exact[1:]).max() < 5e-3 * scale
    assert np.abs(spline - exact).max() < 5e-3 * scale
