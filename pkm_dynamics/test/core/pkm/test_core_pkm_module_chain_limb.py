"""Item: a module chain is also a single hybrid limb with a free end effector.  The
constraint-embedding route (paper 001: Algorithm 2, H, Hdot, eqs. 20 and 36-37) against the
module-chain algorithms of paper 000 (analytic ID, O(n) FD) on heavy_duty_4dof."""
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core.limb.loop_constraints import loop_residual
from pkm_dynamics.core.pkm.parallel_robot import LimbChainRobot
from pkm_dynamics.core.robot import load_robot

ROBOTS = Path(__file__).resolve().parents[3] / "robots"
FOUR = str(ROBOTS / "heavy_duty_4dof.urdf")


@pytest.fixture(scope="module")
def robots():
    return load_robot(FOUR), LimbChainRobot(FOUR)


def states(n=6, seed=11):
    rng = np.random.default_rng(seed)
    lo, hi = np.array([-1.0, 0.2, 0.2, 0.2]), np.array([1.0, 0.4, 0.45, 0.8])
    for _ in range(n):
        yield lo + (hi - lo) * rng.random(4), rng.normal(scale=0.3, size=4), rng.normal(size=4), \
            rng.normal(scale=500.0, size=6)


def test_limb_structure(robots):
    _, lc = robots
    assert lc.actuated_joints == ("slew", "lift", "tilt", "extension")
    assert len(lc.limb.loops) == 2
    for lp in lc.limb.loops:               # planar loops closed by spatial R cut joints: 5 rows, rank 2
        assert lp.size == 5 and len(lp.rows) == 2 and lp.dof == 1


def test_tree_state_matches(robots):
    mc, lc = robots
    for x, xd, xdd, _ in states():
        ref = mc.tree_state(x, xd, xdd)
        got = lc.tree_state(x, xd, xdd)
        assert loop_residual(lc.limb, got[0]) <= 1e-10
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a, b, atol=1e-9)


@pytest.mark.parametrize("with_wrench", [False, True])
def test_id_and_fd_agree_with_module_chain(robots, with_wrench):
    """ID and FD of the two routes to 1e-9 relative (they share only the tree model)."""
    mc, lc = robots
    for x, xd, xdd, w in states():
        fe = w if with_wrench else None
        u_ref = mc.inverse_dynamics(x, xd, xdd, fe)
        u = lc.inverse_dynamics(x, xd, xdd, fe)
        np.testing.assert_allclose(u, u_ref, rtol=1e-9, atol=1e-9 * np.abs(u_ref).max())
        a_ref = mc.forward_dynamics(x, xd, u_ref, fe)
        a = lc.forward_dynamics(x, xd, u_ref, fe)
        np.testing.assert_allclose(a, a_ref, rtol=1e-9, atol=1e-9 * np.abs(a_ref).max())
        np.testing.assert_allclose(a, xdd, rtol=1e-9, atol=1e-9)


def test_batched(robots):
    mc, lc = robots
    S = list(states(3, seed=5))
    x, xd, xdd = (np.array([s[k] for s in S]) for k in range(3))
    np.testing.assert_allclose(lc.inverse_dynamics(x, xd, xdd), mc.inverse_dynamics(x, xd, xdd), rtol=1e-9, atol=1e-6)
