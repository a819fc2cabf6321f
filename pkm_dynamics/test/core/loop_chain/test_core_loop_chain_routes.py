"""A module chain (paper 000) is also a serial chain of loops: the robot interface of the
constraint-embedding route (:class:`LoopChainRobot`, paper 001) against the module chain's own
(:class:`ModuleChainRobot`, compiled, paper 000) on the example cranes and a generated chain,
call by call (FD, ID, tree state, FK, IK, HOID, reactions, derivatives): <= 1e-10 relative; the
module chain serves (it is the faster route).  The cranes without their friction; with it, FD, ID
and reactions agree here, the derivatives and the HOID in
test/core/friction/test_core_loop_chain_friction.py."""
import sys
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core import StateError
from pkm_dynamics.core.description.examples import module_chain_urdf
from pkm_dynamics.core.description.robot_description import parse_description
from pkm_dynamics.core.loop_chain.loop_chain_robot import LoopChainRobot
from pkm_dynamics.core.module_chain.module_chain_robot import ModuleChainRobot
from pkm_dynamics.core.robot import robot_from_description
from pkm_dynamics.testing import frictionless

ROBOTS = Path(__file__).resolve().parents[3] / "robots"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tree"))   # the loop robots of test_core_cut_joints
SOURCES = {"heavy_duty_4dof": frictionless(str(ROBOTS / "heavy_duty_4dof.urdf")),
           "linear_4bar_1dof": frictionless(str(ROBOTS / "linear_4bar_1dof.urdf")),
           "module_chain_3": module_chain_urdf(3)}


@pytest.fixture(scope="module", params=sorted(SOURCES))
def routes(request):
    desc = parse_description(SOURCES[request.param])
    return robot_from_description(desc), LoopChainRobot(desc)


def rel(a, ref):
    return float(np.abs(np.asarray(a) - ref).max() / max(np.abs(ref).max(), 1.0))


def states(mc, count, seed):
    """States between 20 % and 45 % of every stroke (below the crane lift loop's singularity),
    a continuous joint within one turn; rates, accelerations, end-effector wrenches."""
    lo = np.array([i.lower if np.isfinite(i.lower) else -np.pi for i in mc.chain.info])
    hi = np.array([i.upper if np.isfinite(i.upper) else np.pi for i in mc.chain.info])
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (lo + (hi - lo) * rng.uniform(0.2, 0.45, mc.n), rng.normal(scale=0.3, size=mc.n),
               rng.normal(size=mc.n), rng.normal(scale=[50, 50, 50, 500, 500, 500]))


def test_the_module_chain_serves(routes):
    mc, lc = routes
    assert isinstance(mc, ModuleChainRobot) and lc.kind == "loop_chain"
    assert lc.actuated_joints == mc.actuated_joints and lc.tree_joints == mc.tree_joints


def test_both_routes_agree_call_by_call(routes):
    mc, lc = routes
    for x, xd, xdd, w in states(mc, 3, seed=26):
        for a, b in zip(lc.tree_state(x, xd, xdd), mc.tree_state(x, xd, xdd)):
            assert rel(a, b) <= 1e-10
        assert rel(lc.forward_kinematics(x), mc.forward_kinematics(x)) <= 1e-10
        for wrench in (None, w):
            u = mc.inverse_dynamics(x, xd, xdd, wrench)
            assert rel(lc.inverse_dynamics(x, xd, xdd, wrench), u) <= 1e-10
            assert rel(mc.inverse_dynamics(x, xd, lc.forward_dynamics(x, xd, u, wrench), wrench), u) <= 1e-10
            for name, third in (("inverse_dynamics_derivatives", xdd), ("forward_dynamics_derivatives", u)):
                a, b = getattr(lc, name)(x, xd, third, wrench), getattr(mc, name)(x, xd, third, wrench)
                for f in ("value", "d_x", "d_xd", "d_u"):
                    assert rel(getattr(a, f), getattr(b, f)) <= 1e-9, f"{name}.{f}"
        ra, rb = lc.joint_reactions(x, xd, u), mc.joint_reactions(x, xd, u)
        assert rel(ra.joint_wrenches, rb.joint_wrenches) <= 1e-9
        jerk, snap = np.full(mc.n, 0.1), np.full(mc.n, -0.2)
        ha, hb = (r.higher_order_inverse_dynamics(x, xd, xdd, jerk, snap) for r in (lc, mc))
        for f in ("u", "du", "ddu"):
            assert rel(getattr(ha, f), getattr(hb, f)) <= 1e-10, f


def test_with_friction_fd_id_and_reactions_agree():
    """With the crane's friction: FD, ID and reactions (the derivatives and the HOID with
    friction: test/core/friction/test_core_loop_chain_friction.py)."""
    desc = parse_description(str(ROBOTS / "heavy_duty_4dof.urdf"))
    assert desc.friction is not None
    mc, lc = robot_from_description(desc), LoopChainRobot(desc)
    for x, xd, xdd, w in states(mc, 2, seed=27):
        u = mc.inverse_dynamics(x, xd, xdd, w)
        assert rel(lc.inverse_dynamics(x, xd, xdd, w), u) <= 1e-10
        assert rel(lc.forward_dynamics(x, xd, u, w), xdd) <= 1e-9
        assert rel(lc.joint_reactions(x, xd, u).joint_wrenches, mc.joint_reactions(x, xd, u).joint_wrenches) <= 1e-9


def test_inverse_kinematics_agrees(routes):
    mc, lc = routes
    x = next(states(mc, 1, seed=4))[0]
    T = mc.forward_kinematics(x)
    a, b = lc.inverse_kinematics(T, initial=x), mc.inverse_kinematics(T, initial=x)
    assert rel(a.actuators, b.actuators) <= 1e-8 and rel(a.actuators, x) <= 1e-8


@pytest.mark.parametrize("cut_type", ["revolute", "prismatic", "cylindrical", "universal", "spherical"])
def test_spatial_loop_of_every_cut_type_served(cut_type):
    """A spatial loop of six joints closed by each lower-pair cut joint (R, P, C, U, S; paper 001
    App. A), one actuator per degree of freedom (the best-conditioned joints): load_robot serves
    it as a chain of loops (the recogniser refuses it) and its ID and FD agree with the KKT
    route of test/pinocchio_loops.py to 1e-10."""
    import scipy.linalg
    from pinocchio_loops import PinocchioLoops
    from test_core_cut_joints import TYPES
    from test_core_cut_joints import robot as loop_robot
    from pkm_dynamics.core import load_robot
    joints = [f"j{c}{i}" for c in "AB" for i in (1, 2, 3)]
    probe = PinocchioLoops(loop_robot(cut_type), joints, [0, 0, -9.81])
    probe.kinematics(np.zeros(6))
    _, G0, _ = probe.loop_rows(np.zeros(6))
    N0 = np.linalg.svd(G0)[2][TYPES[cut_type]:].T
    act = sorted(scipy.linalg.qr(N0.T, pivoting=True)[2][:N0.shape[1]])
    text = loop_robot(cut_type).replace('<actuator joint="jA1"/>',
                                        "".join(f'<actuator joint="{joints[j]}"/>' for j in act)
                                        + '<end_effector link="a3"/>')
    robot = load_robot(text)
    assert robot.kind == "loop_chain"
    ref = PinocchioLoops(text, robot.tree_joints, robot.tree.gravity)
    rng = np.random.default_rng(7)
    for _ in range(3):
        x, xd, xdd = rng.uniform(-0.1, 0.1, len(act)), rng.normal(size=len(act)), rng.normal(size=len(act))
        q, qd, qdd = ref.close(x, xd, xdd)
        for a, b in zip(robot.tree_state(x, xd, xdd), (q, qd, qdd)):
            assert rel(a, b) <= 1e-10
        u_ref, _ = ref.inverse_dynamics(q, qd, qdd)
        assert rel(robot.inverse_dynamics(x, xd, xdd), u_ref) <= 1e-10
        f = u_ref + rng.normal(size=len(act))
        a_ref, _ = ref.forward_dynamics(q, qd, f)
        assert rel(robot.tree_state(x, xd, robot.forward_dynamics(x, xd, f))[2], a_ref) <= 1e-10


def test_rates_and_efforts_beyond_the_package_bounds_are_refused_as_by_the_module_chain(routes):
    """A velocity, acceleration, jerk, snap, effort or wrench beyond :mod:`pkm_dynamics.core.bounds`
    is refused by the chain of loops with the module chain's words (the field, the entry, the
    bound), not computed."""
    mc, lc = routes
    x, xd, xdd, _ = next(states(mc, 1, seed=3))
    z = np.zeros(mc.n)
    big = {"xd": 1e3, "xdd": 1e5, "xddd": 1e7, "xdddd": 1e9, "u": 1e11}

    def over(name):
        v = np.zeros(mc.n)
        v[-1] = big[name]
        return v

    calls = {"xd": lambda r: r.forward_dynamics(x, over("xd"), z),
             "xdd": lambda r: r.inverse_dynamics(x, xd, over("xdd")),
             "xddd": lambda r: r.higher_order_inverse_dynamics(x, xd, xdd, over("xddd"), z),
             "xdddd": lambda r: r.higher_order_inverse_dynamics(x, xd, xdd, z, over("xdddd"))}
    for name, call in calls.items():
        for r in (mc, lc):
            with pytest.raises(StateError, match=rf"{name}\[{mc.n - 1}\] = .* is beyond the bound"):
                call(r)
    with pytest.raises(StateError, match=rf"u\[{mc.n - 1}\] = .* is beyond the bound"):
        lc.forward_dynamics(x, xd, over("u"))
    with pytest.raises(StateError, match=r"wrench\[5\] = .* is beyond the bound"):
        lc.inverse_dynamics(x, xd, xdd, wrench=[0, 0, 0, 0, 0, 1e11])
