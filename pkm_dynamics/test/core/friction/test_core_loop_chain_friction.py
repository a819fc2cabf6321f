"""Joint friction of the chains of loops (issue 27 item 3): the derivatives of ID and FD (the
forward-mode jets of core/loop_chain/loop_chain_derivatives.py with the friction law's
derivative in the joint rates) and the higher-order inverse dynamics (u, du, ddu), on the
excavator with cylinder and joint friction added and on the HIAB crane (heavy_duty_4dof, its own
friction curves) served as a chain of loops; against central differences of the public ID / FD
with friction (the compiled limb route, no jets), central differences in time of the ID along a
motion, and the crane's module-chain route (paper 000's compiled kernels, their own friction)."""
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.core.description.robot_description import parse_description
from pkm_dynamics.core.loop_chain.loop_chain_robot import LoopChainRobot
from pkm_dynamics.core.robot import robot_from_description
from pkm_dynamics.testing import frictionless, with_friction

ROBOTS = Path(__file__).resolve().parents[3] / "robots"
CYLINDER = dict(coulomb=2000.0, viscous=3000.0, stribeck=800.0, stribeck_velocity=0.05, smoothing_velocity=0.01)


def _excavator_text():
    text = (ROBOTS / "excavator.urdf").read_text(encoding="utf-8")
    return with_friction(text, ("boom_cylinder", "arm_cylinder", "bucket_cylinder"), CYLINDER, damping=50.0,
                         coulomb=100.0)


@pytest.fixture(scope="module", params=["excavator", "heavy_duty_4dof"])
def chain(request):
    """(name, robot with friction, the same robot without it, the crane's module chain or None)."""
    if request.param == "excavator":
        text = _excavator_text()
        robot = load_robot(text)
        return "excavator", robot, load_robot(frictionless(text)), None
    path = str(ROBOTS / "heavy_duty_4dof.urdf")
    desc = parse_description(path)
    return "heavy_duty_4dof", LoopChainRobot(desc), LoopChainRobot(parse_description(frictionless(path))), \
        robot_from_description(desc)


def _rel(a, ref):
    return float(np.abs(np.asarray(a) - ref).max() / max(np.abs(ref).max(), 1.0))


def _states(robot, count, seed):
    """States between 20 % and 45 % of every stroke (a continuous joint within [-1, 1]), rates,
    accelerations and an end-effector wrench."""
    rng = np.random.default_rng(seed)
    lo, hi = np.where(np.isfinite(robot.lower), robot.lower, -1.0), np.where(np.isfinite(robot.upper), robot.upper, 1.0)
    for _ in range(count):
        yield (lo + (hi - lo) * rng.uniform(0.2, 0.45, robot.n), rng.normal(scale=0.2, size=robot.n),
               rng.normal(scale=0.5, size=robot.n), rng.normal(scale=[50, 50, 50, 500, 500, 500]))


def _central(fn, args, which, h):
    cols = []
    for e in np.eye(len(args[which])) * h:
        a, b = list(args), list(args)
        a[which], b[which] = args[which] + e, args[which] - e
        cols.append((fn(*a) - fn(*b)) / (2.0 * h))
    return np.column_stack(cols)


def test_the_robots_have_friction(chain):
    _, robot, plain, _ = chain
    assert robot.kind == "loop_chain" and robot.description.friction is not None
    assert plain.description.friction is None


def test_derivatives_with_friction_against_central_differences(chain):
    """ID and FD derivatives with friction against central differences of the public calls with
    friction (with a wrench): <= 1e-6 relative; the friction's share is not negligible."""
    _, robot, plain, _ = chain
    for x, xd, xdd, w in _states(robot, 2, seed=31):
        d = robot.inverse_dynamics_derivatives(x, xd, xdd, w)
        assert np.array_equal(d.value, robot.inverse_dynamics(x, xd, xdd, w))
        fid = lambda *a: robot.inverse_dynamics(*a, w)          # noqa: E731
        for which, jac in enumerate((d.d_x, d.d_xd, d.d_u)):
            assert _rel(jac, _central(fid, [x, xd, xdd], which, 1e-6)) <= 1e-6, ("ID", which)
        assert _rel(d.d_xd, plain.inverse_dynamics_derivatives(x, xd, xdd, w).d_xd) > 1e-2
        u = d.value
        f = robot.forward_dynamics_derivatives(x, xd, u, w)
        assert _rel(f.value, xdd) <= 1e-9
        ffd = lambda *a: robot.forward_dynamics(*a, w)          # noqa: E731
        steps = (1e-6, 1e-6, 1e-6 * max(1.0, np.abs(u).max()))
        for which, jac in enumerate((f.d_x, f.d_xd, f.d_u)):
            assert _rel(jac, _central(ffd, [x, xd, u], which, steps[which])) <= 1e-6, ("FD", which)


def test_hoid_with_friction_against_differences_of_the_inverse_dynamics(chain):
    """``u, du, ddu`` of the HOID with friction along a quartic motion: ``u`` the ID with
    friction to round-off, ``du``, ``ddu`` its central differences in time (4th order)."""
    _, robot, _, _ = chain
    x0, c1, c2, _ = next(_states(robot, 1, seed=33))
    c = np.stack([c1, c2, np.linspace(0.3, -0.2, robot.n), np.linspace(-0.2, 0.4, robot.n)])

    def motion(t):
        return [x0 + c[0] * t + c[1] * t ** 2 / 2 + c[2] * t ** 3 / 6 + c[3] * t ** 4 / 24,
                c[0] + c[1] * t + c[2] * t ** 2 / 2 + c[3] * t ** 3 / 6, c[1] + c[2] * t + c[3] * t ** 2 / 2,
                c[2] + c[3] * t, c[3]]

    def u(t):
        return robot.inverse_dynamics(*motion(t)[:3])
    res = robot.higher_order_inverse_dynamics(*motion(0.0))
    h = 2.5e-4      # the smooth Coulomb law bends within v_eps = 0.01 of rest: O(h^4) small enough here
    assert _rel(res.u, u(0.0)) <= 1e-10
    assert _rel(res.du, (8 * (u(h) - u(-h)) - u(2 * h) + u(-2 * h)) / (12 * h)) < 1e-6     # O(h^4)
    assert _rel(res.ddu, (16 * (u(h) + u(-h)) - 30 * u(0.0) - u(2 * h) - u(-2 * h)) / (12 * h * h)) < 1e-6


def test_crane_with_friction_agrees_with_its_module_chain(chain):
    """The HIAB crane with its friction: the chain of loops' derivatives and HOID against the
    module chain's (compiled kernels of paper 000, their own friction route): <= 1e-9."""
    name, robot, _, mc = chain
    if mc is None:
        pytest.skip("the excavator is no module chain")
    for x, xd, xdd, w in _states(robot, 2, seed=35):
        u = mc.inverse_dynamics(x, xd, xdd, w)
        for call, third in (("inverse_dynamics_derivatives", xdd), ("forward_dynamics_derivatives", u)):
            a, b = getattr(robot, call)(x, xd, third, w), getattr(mc, call)(x, xd, third, w)
            for f in ("value", "d_x", "d_xd", "d_u"):
                assert _rel(getattr(a, f), getattr(b, f)) <= 1e-9, (call, f)
        jerk, snap = np.full(robot.n, 0.1), np.full(robot.n, -0.2)
        ha, hb = (r.higher_order_inverse_dynamics(x, xd, xdd, jerk, snap) for r in (robot, mc))
        for f in ("u", "du", "ddu"):
            assert _rel(getattr(ha, f), getattr(hb, f)) <= 1e-10, f


def test_zero_friction_derivatives_are_the_frictionless_robots_bit_for_bit():
    """``<dynamics damping="0" friction="0">`` everywhere is no friction: the derivatives and the
    HOID of the excavator are the frictionless robot's, bit for bit."""
    text = (ROBOTS / "excavator.urdf").read_text(encoding="utf-8")
    plain, zero = load_robot(text), load_robot(with_friction(text, damping=0.0, coulomb=0.0))
    assert zero.description.friction is None
    x, xd, xdd, w = next(_states(plain, 1, seed=37))
    a, b = plain.inverse_dynamics_derivatives(x, xd, xdd, w), zero.inverse_dynamics_derivatives(x, xd, xdd, w)
    for f in ("value", "d_x", "d_xd", "d_u"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    ders = (xd, xdd, 0.5 * xdd, 0.1 * xdd)
    assert np.array_equal(plain.higher_order_inverse_dynamics(x, *ders).ddu,
                          zero.higher_order_inverse_dynamics(x, *ders).ddu)
