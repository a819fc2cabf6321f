"""The grapple crane's hybrid dynamics differentiated (:mod:`pkm_dynamics.core.loop_chain.loop_chain_passive`):
the FD and hybrid-ID derivatives against central differences of the public calls and against the
same crane with its swing axes actuated (the full-coordinate actuator-space route of
:mod:`~pkm_dynamics.core.loop_chain.loop_chain_derivatives`, another robot object) combined here by
the implicit-function formula; the higher-order inverse dynamics against the hybrid dynamics
integrated along a prescribed actuator motion (scipy's DOP853) and differenced in time (9-point
central stencils); the hydraulic feedforward's exact rate."""
from math import factorial

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from pkm_dynamics.core import StateError, load_robot
from pkm_dynamics.core.loop_chain.loop_chain_robot import LoopChainRobot
from test_core_passive_joints import REFERENCE, TEXT, X0, rel, states

A = 5                                       # actuators; then the two passive swing axes


@pytest.fixture(scope="module")
def robot():
    return load_robot(TEXT)


@pytest.fixture(scope="module")
def actuated():
    """The same crane with its swing axes actuated: the full-coordinate route."""
    return LoopChainRobot(REFERENCE)


def central(fn, v, h=1e-6):
    """Central-difference Jacobian of ``fn`` at ``v``."""
    return np.column_stack([(fn(v + h * e) - fn(v - h * e)) / (2 * h) for e in np.eye(len(v))])


def test_derivatives_against_central_differences(robot):
    """Hybrid ID and FD derivatives (shapes (5, 7), (5, 7), (5, 5) and (7, 7), (7, 7), (7, 5))
    against central differences (1e-6) of ``hybrid_dynamics`` / ``forward_dynamics``: 1e-6
    relative."""
    for x, xd, xdd in states(2, seed=5):
        d = robot.inverse_dynamics_derivatives(x, xd, xdd)
        assert (d.d_x.shape, d.d_xd.shape, d.d_u.shape) == ((5, 7), (5, 7), (5, 5))
        assert rel(d.value, robot.hybrid_dynamics(x, xd, xdd)[0]) <= 1e-14
        assert rel(d.d_x, central(lambda v: robot.hybrid_dynamics(v, xd, xdd)[0], x)) <= 1e-6
        assert rel(d.d_xd, central(lambda v: robot.hybrid_dynamics(x, v, xdd)[0], xd)) <= 1e-6
        assert rel(d.d_u, central(lambda v: robot.hybrid_dynamics(x, xd, v)[0], xdd)) <= 1e-6
        u = d.value
        f = robot.forward_dynamics_derivatives(x, xd, u)
        assert (f.d_x.shape, f.d_xd.shape, f.d_u.shape) == ((7, 7), (7, 7), (7, 5))
        assert rel(f.value, robot.forward_dynamics(x, xd, u)) <= 1e-14
        assert rel(f.d_x, central(lambda v: robot.forward_dynamics(v, xd, u), x)) <= 1e-6
        assert rel(f.d_xd, central(lambda v: robot.forward_dynamics(x, v, u), xd)) <= 1e-6
        assert rel(f.d_u, central(lambda v: robot.forward_dynamics(x, xd, v), u, h=1e-2)) <= 1e-6


def test_derivatives_by_the_implicit_function_theorem(robot, actuated):
    """The crane with its swing axes actuated gives ``f(y, yd, ydd)`` (7) and its derivatives
    ``f_y, f_yd, M``; with no effort at the swing axes the hybrid dynamics' derivatives are
    ``du/dz = f_a,z - M_ap M_pp^-1 f_p,z`` (z = y, yd) and ``du/dxdd = M_aa - M_ap M_pp^-1 M_pa``,
    the FD's ``-M^-1 f_z`` and ``M^-1[:, :5]``: to 1e-10 relative."""
    for x, xd, xdd in states(2, seed=6):
        d = robot.inverse_dynamics_derivatives(x, xd, xdd)
        ydd = np.concatenate([xdd, robot.hybrid_dynamics(x, xd, xdd)[1]])
        full = actuated.inverse_dynamics_derivatives(x, xd, ydd)
        assert rel(full.value, np.concatenate([d.value, np.zeros(2)])) <= 1e-10
        M = full.d_u
        K = np.linalg.solve(M[A:, A:].T, M[:A, A:].T).T           # M_ap M_pp^-1
        assert rel(d.d_x, full.d_x[:A] - K @ full.d_x[A:]) <= 1e-10
        assert rel(d.d_xd, full.d_xd[:A] - K @ full.d_xd[A:]) <= 1e-10
        assert rel(d.d_u, M[:A, :A] - K @ M[A:, :A]) <= 1e-10
        fd = robot.forward_dynamics_derivatives(x, xd, d.value)
        ref = actuated.forward_dynamics_derivatives(x, xd, np.concatenate([d.value, np.zeros(2)]))
        assert rel(fd.value, ref.value) <= 1e-10
        assert rel(fd.d_x, ref.d_x) <= 1e-10 and rel(fd.d_xd, ref.d_xd) <= 1e-10
        assert rel(fd.d_u, ref.d_u[:, :A]) <= 1e-10


def test_derivatives_are_batched(robot):
    rows = list(states(2, seed=7))
    x, xd, xdd = (np.stack(c) for c in zip(*rows))
    d = robot.inverse_dynamics_derivatives(x, xd, xdd)
    f = robot.forward_dynamics_derivatives(x, xd, d.value)
    for i, (xi, xdi, xddi) in enumerate(rows):
        one = robot.inverse_dynamics_derivatives(xi, xdi, xddi)
        assert np.array_equal(d.d_x[i], one.d_x) and np.array_equal(d.d_u[i], one.d_u)
        assert np.array_equal(f.d_xd[i], robot.forward_dynamics_derivatives(xi, xdi, d.value[i]).d_xd)


W = np.array([1.0, 2.0, 1.5, 1.0, 3.0])


def motion(t, orders=5):
    """A smooth crane motion: the actuators' position and derivatives 0..orders-1 at ``t``."""
    return np.array([X0 * (k == 0) + 0.05 * W**k * np.sin(W * t + k * np.pi / 2) for k in range(orders)])


#: 9-point central stencils of the first and second derivative (step h): weights by the moments
OFFSETS = np.arange(-4, 5)
STENCIL = {k: np.linalg.solve(np.vander(OFFSETS, increasing=True).T.astype(float),
                              np.eye(9)[k] * factorial(k)) for k in (1, 2)}


def test_hoid_along_the_integrated_hybrid_dynamics(robot):
    """The grapple swinging below the moving crane: the passive joints integrated by DOP853
    (rtol 1e-13) through ``t0 +- 4h`` (h = 5 ms) with the actuators on :func:`motion`;
    ``u(t)`` and the passive accelerations ``qdd_p(t)`` of the hybrid dynamics at those samples,
    differenced by 9-point stencils, give HOID's ``du, ddu`` and the passive jerks and snaps to
    1e-6 relative; at ``t0`` ``u`` and ``qdd_p`` equal the hybrid dynamics' to 1e-12."""
    t0, h, p0 = 0.3, 5e-3, np.array([0.2, -0.1, 0.3, 0.15])

    def rates(t, y):
        m = motion(t, 3)
        _, a = robot.hybrid_dynamics(np.concatenate([m[0], y[:2]]), np.concatenate([m[1], y[2:]]), m[2])
        return np.concatenate([y[2:], a])

    ts = t0 + h * OFFSETS
    fwd = solve_ivp(rates, (t0, ts[-1]), p0, "DOP853", t_eval=ts[4:], rtol=1e-13, atol=1e-15)
    back = solve_ivp(rates, (t0, ts[0]), p0, "DOP853", t_eval=ts[4::-1], rtol=1e-13, atol=1e-15)
    Y = np.concatenate([back.y[:, :0:-1], fwd.y], axis=1).T            # (9, 4) at ts
    U, P = zip(*(robot.hybrid_dynamics(np.concatenate([motion(t)[0], y[:2]]), np.concatenate([motion(t)[1], y[2:]]),
                                       motion(t)[2]) for t, y in zip(ts, Y)))
    U, P = np.array(U), np.array(P)
    m = motion(t0)
    x, xd = np.concatenate([m[0], p0[:2]]), np.concatenate([m[1], p0[2:]])
    res = robot.higher_order_inverse_dynamics(x, xd, m[2], m[3], m[4])
    assert res.passive_motion.shape == (5, 2) and res.actuator_motion.shape == (5, 5)
    assert rel(res.u, U[4]) <= 1e-12 and rel(res.passive_motion[2], P[4]) <= 1e-12
    assert np.array_equal(res.passive_motion[:2], np.stack([p0[:2], p0[2:]]))
    assert rel(res.actuator_motion, m) <= 1e-12
    assert rel(res.tree_motion[:3], np.stack(robot.tree_state(x, xd, np.concatenate([m[2], P[4]])))) <= 1e-10
    for k, ref in ((1, res.du), (2, res.ddu)):
        assert rel(ref, STENCIL[k] @ U / h**k) <= 1e-6
    for k in (1, 2):
        assert rel(res.passive_motion[2 + k], STENCIL[k] @ P / h**k) <= 1e-6


def test_hoid_is_batched_and_refuses_naming_the_joint(robot):
    m = motion(0.1)
    x = np.stack([np.concatenate([m[0], [0.1, -0.2]]), np.concatenate([m[0], [-0.3, 0.2]])])
    xd = np.stack([np.concatenate([m[1], [0.4, 0.1]])] * 2)
    ders = [np.stack([m[k]] * 2) for k in (2, 3, 4)]
    res = robot.higher_order_inverse_dynamics(x, xd, *ders)
    assert res.u.shape == (2, 5) and res.passive_motion.shape == (2, 5, 2) and res.tree_motion.shape[:2] == (2, 5)
    one = robot.higher_order_inverse_dynamics(x[1], xd[1], *(d[1] for d in ders))
    assert np.array_equal(res.ddu[1], one.ddu) and np.array_equal(res.passive_motion[1], one.passive_motion)
    bad = xd[0].copy()
    bad[6] = np.nan
    with pytest.raises(StateError, match="grapple_swing_x"):
        robot.higher_order_inverse_dynamics(x[0], bad, *(d[0] for d in ders))
    far = x[0].copy()
    far[5] = 10.0
    with pytest.raises(StateError, match="grapple_swing_y"):
        robot.higher_order_inverse_dynamics(far, xd[0], *(d[0] for d in ders))
    with pytest.raises(StateError, match="grapple_swing_y"):
        robot.higher_order_inverse_dynamics(x[0][:5], xd[0], *(d[0] for d in ders))
    with pytest.raises(StateError, match="gravity holds NaN"):          # not "near a singularity"
        robot.higher_order_inverse_dynamics(x[0], xd[0], *(d[0] for d in ders), gravity=[0.0, 0.0, np.nan])
    with pytest.raises(StateError, match=r"xddd\[2\] = .* is beyond the bound"):  # huge but finite: refused
        robot.higher_order_inverse_dynamics(x[0], xd[0], ders[0][0], np.array([0, 0, 1e7, 0, 0]), ders[2][0])
    with pytest.raises(StateError, match=r"xd\[6\] = .* is beyond the bound"):
        robot.hybrid_dynamics(x[0], np.where(np.arange(7) == 6, 1e3, xd[0]), ders[0][0])


def test_hoid_refuses_rates_beyond_their_bounds(robot):
    """A finite rate beyond its bound of :mod:`~pkm_dynamics.core.bounds` (``MAX_RATE``: velocity
    1e2, acceleration 1e4, jerk 1e6, snap 1e8) is refused naming the field and the bound, as the
    other robots' higher-order inverse dynamics does, not computed."""
    from pkm_dynamics.core.bounds import MAX_RATE
    m = motion(0.1)
    fields = [np.concatenate([m[1], [0.4, 0.1]]), m[2], m[3], m[4]]
    x = np.concatenate([m[0], [0.1, -0.2]])
    for order, name in enumerate(("xd", "xdd", "xddd", "xdddd"), start=1):
        big = [f.copy() for f in fields]
        big[order - 1][1] = 10 * MAX_RATE[order]
        with pytest.raises(StateError, match=rf"^{name}\[1\] = .* beyond the bound"):
            robot.higher_order_inverse_dynamics(x, *big)


def test_the_hydraulic_rate_is_the_hoid_du(robot):
    """``force_rate`` (the hydraulic feedforward's du): HOID's ``du`` to 1e-10 (no snap enters
    it) and the central difference (1e-5 s) of the hybrid dynamics along the motion to 1e-6,
    computed here and by the stream's fast rate (``exact=False``)."""
    from pkm_dynamics.core.hydraulics.hydraulic_feedforward import force_rate
    for x, xd, xdd in states(2, seed=8):
        xddd = np.array([0.3, -0.2, 0.5, 0.1, -0.4])
        u, du = force_rate(robot, x, xd, xdd, xddd)
        for snap in (np.zeros(5), np.ones(5)):
            res = robot.higher_order_inverse_dynamics(x, xd, xdd, xddd, snap)
            assert rel(u, res.u) <= 1e-12 and rel(du, res.du) <= 1e-10
        _, a = robot.hybrid_dynamics(x, xd, xdd)
        acc, s = np.concatenate([xdd, a]), 1e-5
        up = robot.hybrid_dynamics(x + s * xd, xd + s * acc, xdd + s * xddd)[0]
        um = robot.hybrid_dynamics(x - s * xd, xd - s * acc, xdd - s * xddd)[0]
        assert rel(du, (up - um) / (2 * s)) <= 1e-6
        fast = force_rate(robot, x, xd, xdd, xddd, exact=False)
        assert np.array_equal(fast[0], u) and np.array_equal(fast[1], (up - um) / (2 * s))
