"""The compiled joint reactions of module chains (core/reactions/chain_reactions.py: paper 000's
module recursion and the 4-bar pin force of eqs. 55-57) against the general route
(core/reactions/reactions.py: tree + minimum-norm multipliers, not sharing its code) and against the
KKT multipliers of the constrained tree dynamics, on the example chains and generated chains
of 1-16 modules, single and batched; the reaction models are built with the robot."""
import threading

import numpy as np
import pytest
from test_core_reactions import FOUR, ONE, ROBOTS, _chain_states, _external, _kkt_reactions, _rel

from pkm_dynamics.core.reactions.chain_reactions_model import ReactionsModel
from pkm_dynamics.core.errors import StateError
from pkm_dynamics.core.description.examples import module_chain_urdf
from pkm_dynamics.core.reactions.reactions import joint_reactions as general_reactions
from pkm_dynamics.core.reactions.reactions import reaction_model
from pkm_dynamics.core.robot import load_robot

#: round-off level of the compiled route against the general one (relative to the largest load)
ROUND_OFF = 1e-11


def _load(case):
    return load_robot(module_chain_urdf(int(case[5:]))) if case.startswith("chain") else load_robot(case)


def _same(a, b, tol=ROUND_OFF):
    assert a.joints == b.joints and a.cut_joints == b.cut_joints
    assert a.joint_wrenches.shape == b.joint_wrenches.shape and a.cut_wrenches.shape == b.cut_wrenches.shape
    for name in ("joint_wrenches", "cut_wrenches", "multipliers", "acceleration"):
        assert _rel(getattr(a, name), getattr(b, name)) < tol, name


@pytest.mark.parametrize("case", [ONE, FOUR, "chain3"], ids=["linear_4bar_1dof", "heavy_duty_4dof", "chain3"])
def test_compiled_reactions_equal_the_general_route_and_the_kkt_multipliers(case):
    robot = _load(case)
    assert isinstance(robot.reactions, ReactionsModel)
    desc, tree = robot.description, robot.tree
    general = reaction_model(robot)
    act = [tree.joint_index(j) for j in robot.actuated_joints]
    X, XD, F, FE = _chain_states(robot, count=3, seed=21)
    for wrench in (None, FE):
        batch = robot.joint_reactions(X, XD, F, wrench=wrench)
        _same(batch, general_reactions(robot, X, XD, F, wrench=wrench, model=general))
        for i in range(len(X)):
            w = None if wrench is None else wrench[i]
            one = robot.joint_reactions(X[i], XD[i], F[i], wrench=w)
            _same(one, general_reactions(robot, X[i], XD[i], F[i], wrench=w, model=general))
            np.testing.assert_array_equal(one.joint_wrenches, batch.joint_wrenches[i])
            q, qd, _ = robot.tree_state(X[i], XD[i])
            tau = np.zeros(tree.nq)
            tau[act] = F[i]
            qdd, lam, W, W_cut = _kkt_reactions(desc, q, qd, tau, _external(tree, robot.end_effector, np.eye(4), w))
            assert _rel(one.multipliers, lam) < 1e-9
            assert _rel(one.cut_wrenches, W_cut) < 1e-9
            assert _rel(one.joint_wrenches, W) < 1e-9


@pytest.mark.parametrize("n", range(1, 17))
def test_generated_chains_agree_with_the_general_route(n):
    """Chains whose modules turn about different axes (``twist``): the pin forces lie in each
    loop's own plane, the out-of-plane loads in the tree joints, as in the general route."""
    robot = load_robot(module_chain_urdf(n, twist=0.3 + 0.1 * n))
    X, XD, F, FE = _chain_states(robot, count=2, seed=n)
    _same(robot.joint_reactions(X, XD, F, wrench=FE),
          general_reactions(robot, X, XD, F, wrench=FE, model=reaction_model(robot)))
    one = robot.joint_reactions(X[0], XD[0], F[0])
    _same(one, general_reactions(robot, X[0], XD[0], F[0]))


def test_threads_use_their_own_scratch():
    """Four threads computing different states at once get what one thread gets."""
    robot = load_robot(FOUR)
    X, XD, F, FE = _chain_states(robot, count=8, seed=3)
    expect = [robot.joint_reactions(X[i], XD[i], F[i], wrench=FE[i]).joint_wrenches for i in range(8)]
    got = {}

    def work(t):
        for rep in range(25):
            for i in range(t, 8, 4):
                got[(t, rep, i)] = robot.joint_reactions(X[i], XD[i], F[i], wrench=FE[i]).joint_wrenches

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(got) == 4 * 25 * 2
    for (_, _, i), W in got.items():
        np.testing.assert_array_equal(W, expect[i])


@pytest.mark.parametrize("path", [FOUR, "planar_3rrr"], ids=["heavy_duty_4dof", "planar_3rrr"])
def test_a_reactions_call_leaves_the_robot_unchanged(path):
    """What the reactions need is built with the robot (robots are immutable once loaded)."""
    import os
    robot = load_robot(path if path == FOUR else os.path.join(ROBOTS, path + ".urdf"))
    before = dict(vars(robot))
    if path == FOUR:
        robot.joint_reactions(np.array([0.3, 0.2, 0.25, 0.4]), np.zeros(4), np.zeros(4))
    else:
        robot.joint_reactions(robot.task_pose([0.01, 0.0, 0.05]), np.zeros(3), np.zeros(3))
    assert vars(robot).keys() == before.keys()
    assert all(vars(robot)[k] is v for k, v in before.items())


def test_bad_wrench_is_named():
    robot = load_robot(FOUR)
    with pytest.raises(StateError, match="wrench"):
        robot.joint_reactions(np.array([0.3, 0.2, 0.25, 0.4]), np.zeros(4), np.zeros(4), wrench=np.zeros(5))


def test_bad_state_gives_the_forward_dynamics_message():
    """A state the forward dynamics refuses is refused with its message (row of a batch too)."""
    robot = load_robot(FOUR)
    X, XD, F, _ = _chain_states(robot, count=3, seed=8)
    for bad in (dict(f=np.nan), dict(x=0.8)):
        Xb, Fb = X.copy(), F.copy()
        (Fb if "f" in bad else Xb)[1, 1] = bad.get("f", bad.get("x"))
        with pytest.raises(StateError) as expect:
            robot.forward_dynamics(Xb[1], XD[1], Fb[1])
        with pytest.raises(StateError) as one:
            robot.joint_reactions(Xb[1], XD[1], Fb[1])
        with pytest.raises(StateError) as batch:
            robot.joint_reactions(Xb, XD, Fb)
        assert str(one.value) == str(expect.value) == str(batch.value)


def test_robot_pickles_with_its_reactions():
    """A robot goes to another process with its reaction model (rebuilt there, fresh scratch)."""
    import pickle
    robot = load_robot(FOUR)
    X, XD, F, FE = _chain_states(robot, count=2, seed=4)
    copy = pickle.loads(pickle.dumps(robot))
    assert copy.reactions is not robot.reactions and copy.reactions.chain_model is copy.compiled
    np.testing.assert_array_equal(copy.joint_reactions(X, XD, F, wrench=FE).joint_wrenches,
                                  robot.joint_reactions(X, XD, F, wrench=FE).joint_wrenches)
