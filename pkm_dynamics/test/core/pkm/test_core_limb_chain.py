"""A module chain is also a single hybrid limb with a free end effector: the constraint-embedding
route (:class:`LimbChainRobot`, paper 001) against the module-chain algorithms of paper 000
(:class:`ModuleChainRobot`) at seeded random states over the whole stroke of every actuator,
for a robot object that has seen other states before and for a fresh one (the loop closure
must stay on the assembly branch of the reference configuration either way)."""
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core import SingularityError, StateError
from pkm_dynamics.core.description.robot_description import parse_description
from pkm_dynamics.core.description.examples import module_chain_urdf
from pkm_dynamics.core.limb.loop_constraints import loop_residual
from pkm_dynamics.core.pkm.parallel_robot import LimbChainRobot
from pkm_dynamics.core.robot import robot_from_description

ROBOTS = Path(__file__).resolve().parents[3] / "robots"
SOURCES = {"heavy_duty_4dof": str(ROBOTS / "heavy_duty_4dof.urdf"),
           "linear_4bar_1dof": str(ROBOTS / "linear_4bar_1dof.urdf"),
           "module_chain_3": module_chain_urdf(3)}


@pytest.fixture(scope="module", params=sorted(SOURCES))
def routes(request):
    desc = parse_description(SOURCES[request.param])
    return robot_from_description(desc), LimbChainRobot(desc), desc


def stroke_states(mc, count, seed):
    """Uniform random states over the whole stroke of every actuator (a continuous joint over
    one turn), random rates, accelerations and end-effector wrenches."""
    lo = np.array([i.lower if np.isfinite(i.lower) else -np.pi for i in mc.chain.info])
    hi = np.array([i.upper if np.isfinite(i.upper) else np.pi for i in mc.chain.info])
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (lo + (hi - lo) * rng.random(mc.n), rng.normal(scale=0.3, size=mc.n),
               rng.normal(size=mc.n), rng.normal(scale=500.0, size=6))


def close(a, ref, rel=1e-9):
    np.testing.assert_allclose(a, ref, rtol=rel, atol=rel * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("fresh", [False, True], ids=["warm", "fresh"])
def test_both_routes_agree_over_the_whole_stroke(routes, fresh):
    """Tree state, ID (with and without a wrench) and FD of both routes agree at 40 random
    states; a state beyond a loop singularity (the crane's lift loop straightens inside the
    stroke) is refused by both."""
    mc, lc, desc = routes
    checked = 0
    for x, xd, xdd, w in stroke_states(mc, 40, seed=2026):
        if fresh:
            lc = LimbChainRobot(desc)
        try:
            ref = mc.tree_state(x, xd, xdd)
        except SingularityError:
            with pytest.raises(StateError):
                lc.tree_state(x, xd, xdd)
            continue
        got = lc.tree_state(x, xd, xdd)
        assert loop_residual(lc.limb, got[0]) <= 1e-10
        for a, b in zip(got, ref):
            close(a, b)
        for fe in (None, w):
            u_ref = mc.inverse_dynamics(x, xd, xdd, fe)
            close(lc.inverse_dynamics(x, xd, xdd, fe), u_ref)
            # FD in force space (backward error: the mass matrix's conditioning times the
            # gravity-sized forces amplifies round-off in xdd itself), and xdd to 1e-6
            a = lc.forward_dynamics(x, xd, u_ref, fe)
            close(mc.inverse_dynamics(x, xd, a, fe), u_ref)
            close(a, mc.forward_dynamics(x, xd, u_ref, fe), rel=1e-6)
        checked += 1
    assert checked >= 30
