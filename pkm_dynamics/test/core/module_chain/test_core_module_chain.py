"""Module chains of paper 000: example robots, closure, FD/ID round trip, and agreement with the
independent path (constrained tree dynamics with the loop constraints as Lagrange multipliers:
test/pinocchio_loops.py, Pinocchio with its own cut-joint rows and loop closure, no code of the
package)."""
import itertools
import json
import math
import os
import re
import textwrap

import numpy as np
import pytest

from pkm_dynamics.core import DescriptionError, SingularityError, StateError
from pinocchio_loops import PinocchioLoops
from pkm_dynamics.testing import frictionless
from pkm_dynamics.core.tree import tree_dynamics as td
from pkm_dynamics.core.tree.cut_joints import LoopConstraints
from pkm_dynamics.core.description.examples import module_chain_urdf
from pkm_dynamics.core.module_chain.module_chain_robot import ModuleChainRobot
from pkm_dynamics.core.robot import load_robot

HERE = os.path.dirname(os.path.abspath(__file__))
ROBOTS = os.path.join(HERE, "..", "..", "..", "robots")
ONE = os.path.join(ROBOTS, "linear_4bar_1dof.urdf")
FOUR = os.path.join(ROBOTS, "heavy_duty_4dof.urdf")
DATA = os.path.join(ROBOTS, "hiab_xs031", "hiab031_model.json")


def _data():
    """The crane data kept in the repository (robots/hiab_xs031/, BSD-3): a paper check never
    skips; a missing file fails the test with the open error."""
    with open(DATA, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def one():
    return load_robot(ONE)


@pytest.fixture(scope="module")
def four():
    return load_robot(FOUR)


def _rel(a, b):
    return np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(np.linalg.norm(b), 1e-300)


# ---------------------------------------------------------------- trajectories like the paper's

def _cyl(theta, thd, thdd, offset, L, L1, x0):
    """x, xd, xdd of a cylinder from the crane angle Theta (rad) and its derivatives: q = Theta - offset,
    x = sqrt(L^2 + L1^2 + 2 L L1 cos q) - x0 (eq. 2a), differentiated by hand."""
    q = theta - offset
    d = np.sqrt(L * L + L1 * L1 + 2 * L * L1 * np.cos(q))
    dd = -L * L1 * np.sin(q) * thd / d
    ddd = (-L * L1 * (np.cos(q) * thd**2 + np.sin(q) * thdd) - dd**2) / d
    return d - x0, dd, ddd


def trajectory(robot, T=10.0, dt=0.01):
    """Sinusoidal motions of the crane data's authors (data README), 10 s like the paper:
    Theta1 = 20 + 10 sin t deg, Theta2 = -70 + 15 sin 2t deg, x3 = 0.3 + 0.2 sin t m; slew 0.5 sin(0.5 t)."""
    g = _data()["geometry"]
    t = np.arange(0.0, T + 1e-12, dt)
    b1 = math.atan2(374.261, 935)
    b2 = math.atan2(45.757, 373.313)
    b3 = math.atan2(139.50, 1132.19)
    b4 = math.atan2(88.061, 296.198)
    d = np.pi / 180
    lift = _cyl((20 + 10 * np.sin(t)) * d, 10 * d * np.cos(t), -10 * d * np.sin(t), np.pi / 2 + b1 + b2,
                g["L1"], g["L11"], g["x10"])
    if robot.n == 1:
        return t, lift[0][:, None], lift[1][:, None], lift[2][:, None]
    tilt = _cyl((-70 + 15 * np.sin(2 * t)) * d, 30 * d * np.cos(2 * t), -60 * d * np.sin(2 * t), b3 + b4,
                g["L2"], g["L21"], g["x20"])
    slew = (0.5 * np.sin(0.5 * t), 0.25 * np.cos(0.5 * t), -0.125 * np.sin(0.5 * t))
    ext = (0.3 + 0.2 * np.sin(t), 0.2 * np.cos(t), -0.2 * np.sin(t))
    cols = [slew, lift, tilt, ext]
    return t, *(np.column_stack([c[i] for c in cols]) for i in range(3))


# ---------------------------------------------------------------- example robots

def test_example_masses_reproduce_the_paper():
    data = _data()
    bodies = data["bodies"]["cad_corrected"]
    m1 = sum(bodies[b]["mass_kg"] for b in ("Bc1", "B31", "B41", "B11", "Bc2"))
    m4 = sum(b["mass_kg"] for b in bodies.values())
    assert load_robot(ONE).tree.total_mass == pytest.approx(m1, rel=1e-14)
    assert load_robot(FOUR).tree.total_mass == pytest.approx(m4, rel=1e-14)
    assert round(m1, 3) == 415.118 and round(m4, 3) == 1062.935      # paper: 415 kg, 1063 kg


def test_actuators_roles_and_lengths_come_from_the_geometry(four):
    g = _data()["geometry"]
    assert four.actuated_joints == ("slew", "lift", "tilt", "extension")
    kinds = [i.kind for i in four.chain.info]
    assert kinds == ["serial", "parallel", "parallel", "serial"]
    lift, tilt = four.modules[1], four.modules[2]
    for mod, L, L1, lc, lc0 in ((lift, g["L1"], g["L11"], g["lc1"], g["lc01"]),
                                (tilt, g["L2"], g["L21"], g["lc2"], g["lc02"])):
        assert mod.L == pytest.approx(L, abs=1e-12) and mod.L1 == pytest.approx(L1, abs=1e-12)
        assert mod.Lc == pytest.approx(lc, abs=1e-12) and mod.Lc0 == pytest.approx(lc0, abs=1e-12)
        assert mod.x0 == pytest.approx(0.83, abs=1e-12)
    lim = {n: (four.tree.lower[four.tree.joint_index(n)], four.tree.upper[four.tree.joint_index(n)])
           for n in ("lift", "tilt", "extension")}
    assert lim == {"lift": (0.0, 0.59), "tilt": (0.0, 0.59), "extension": (0.0, 1.1)}


@pytest.mark.parametrize("path", [ONE, FOUR])
def test_closure_formula_against_tree_geometry(path):
    """x = sqrt(L^2 + L1^2 + 2 L L1 cos q) - x0 (eq. 2a) with L, L1, x0 from the data and q, the
    pivot distance measured on the URDF tree posed by tree_state (loops closed)."""
    robot = load_robot(path)
    g = _data()["geometry"]
    tree = robot.tree
    lc = LoopConstraints(robot.description)
    loops = {"lift": ("Bc1", "B11", "B31", g["L1"], g["L11"]), "tilt": ("Bc2", "B12", "B32", g["L2"], g["L21"])}
    _, X, _, _ = trajectory(robot, T=6.0, dt=0.5)
    for x in X:
        Q, _, _ = robot.tree_state(x)
        assert np.abs(lc.residual(Q)).max() < 1e-10
        for k, name in enumerate(robot.actuated_joints):
            if name not in loops:
                continue
            base, link, cyl, L, L1 = loops[name]
            Cb = td.frame_pose(tree, Q, base)
            Cl = td.frame_pose(tree, Q, link)
            Cc = td.frame_pose(tree, Q, cyl)
            rod_end = Cl @ np.array([L1, 0, 0, 1.0])       # Tc on the link (data recipe)
            pivot = Cc[:3, 3]
            # q: angle of the link x axis against the base x axis about the base z axis
            xl = Cb[:3, :3].T @ Cl[:3, 0]
            q = math.atan2(xl[1], xl[0])
            assert q < 0                                     # branch q < 0 of the data recipe
            dist = np.linalg.norm(rod_end[:3] - pivot)
            assert dist - 0.83 == pytest.approx(x[k], abs=1e-12)
            assert math.sqrt(L * L + L1 * L1 + 2 * L * L1 * math.cos(q)) - 0.83 == pytest.approx(x[k], abs=1e-12)


def test_zero_configuration_is_assembled_and_prismatic_values_are_x(four):
    Q, _, _ = four.tree_state(np.zeros(4))
    assert np.abs(Q).max() < 1e-12
    x = np.array([0.3, 0.2, 0.4, 0.7])
    Q, _, _ = four.tree_state(x)
    for k, name in enumerate(four.actuated_joints):
        assert Q[four.tree.joint_index(name)] == x[k]


def test_forward_kinematics_matches_tree(four):
    x = np.array([0.4, 0.25, 0.35, 0.6])
    Q, _, _ = four.tree_state(x)
    assert np.abs(four.forward_kinematics(x) - td.frame_pose(four.tree, Q, "tcp")).max() < 1e-12


# ---------------------------------------------------------------- FD(ID) round trip (paper eq. 53)

@pytest.mark.parametrize("path", [ONE, FOUR])
def test_fd_id_round_trip_along_sinusoids(path):
    robot = load_robot(path)
    _, X, XD, XDD = trajectory(robot)
    F = robot.inverse_dynamics(X, XD, XDD)
    out = robot.forward_dynamics(X, XD, F)
    assert out.shape == XDD.shape
    # error of each actuator relative to its acceleration amplitude over the motion (the paper
    # reports the mean error against the mean absolute acceleration: 1.25e-13 and 2.42e-13)
    err = np.abs(out - XDD).max(axis=0) / np.abs(XDD).max(axis=0)
    assert err.max() < 1e-12
    assert np.abs(out - XDD).mean() / np.abs(XDD).mean() < 2.42e-13
    back = robot.inverse_dynamics(X, XD, out)
    assert (np.abs(back - F).max(axis=0) / np.abs(F).max(axis=0)).max() < 1e-12


def test_batch_equals_single(four):
    _, X, XD, XDD = trajectory(four, T=1.0, dt=0.25)
    F = four.inverse_dynamics(X, XD, XDD)
    for i in range(len(X)):
        assert np.array_equal(F[i], four.inverse_dynamics(X[i], XD[i], XDD[i]))
    P = four.tree_state(X, XD, XDD)
    assert P[0].shape == (len(X), four.tree.nq)
    assert four.forward_kinematics(X).shape == (len(X), 4, 4)


# ---------------------------------------------------------------- against constrained tree dynamics

ROBOT_CASES = [ONE, FOUR, "chain3"]


def _load(case):
    """The robot of ``case`` without its friction (the routes here know none; friction:
    test/core/friction/)."""
    return load_robot(module_chain_urdf(3)) if case == "chain3" else load_robot(frictionless(case))


def _independent(case, robot):
    """The independent route (test/pinocchio_loops.py) of the same description text."""
    text = module_chain_urdf(3) if case == "chain3" else frictionless(case)
    return PinocchioLoops(text, robot.tree_joints, robot.gravity)


def _states(robot, count=6, seed=3):
    rng = np.random.default_rng(seed)
    if robot.n == 3:
        X = rng.uniform(0.05, 0.45, (count, 3))
    else:
        _, X, _, _ = trajectory(robot, T=6.0, dt=6.0 / (count - 1))
    XD = rng.normal(scale=0.3, size=X.shape)
    XDD = rng.normal(scale=1.0, size=X.shape)
    FE = rng.normal(scale=[200, 200, 200, 2000, 2000, 2000], size=(len(X), 6))
    return X, XD, XDD, FE


@pytest.mark.parametrize("case", ROBOT_CASES)
def test_inverse_dynamics_matches_kkt(case):
    """Algorithm 2 against the KKT inverse dynamics of the spanning tree, whose tree motion the
    independent route finds itself from (x, xd, xdd) (its own loop closure and cut rows, RNEA of
    Pinocchio)."""
    robot = _load(case)
    ref = _independent(case, robot)
    for x, xd, xdd, fe in zip(*_states(robot)):
        Q, QD, QDD = ref.close(x, xd, xdd)
        for wrench in (None, fe):
            u_ref, _ = ref.inverse_dynamics(Q, QD, QDD, wrench)
            assert _rel(robot.inverse_dynamics(x, xd, xdd, wrench=wrench), u_ref) < 1e-9


@pytest.mark.parametrize("case", ROBOT_CASES)
def test_forward_dynamics_matches_kkt(case):
    """Algorithm 1 against the KKT forward dynamics ``[[M, G^T], [G, 0]]`` of the independent
    route (Pinocchio's CRBA and RNEA, its own cut rows and loop closure from (x, xd))."""
    robot = _load(case)
    ref = _independent(case, robot)
    act = [robot.tree.joint_index(j) for j in robot.actuated_joints]
    rng = np.random.default_rng(7)
    for x, xd, _, fe in zip(*_states(robot)):
        f = robot.inverse_dynamics(x, xd, np.zeros(robot.n)) + rng.normal(scale=500.0, size=robot.n)
        Q, QD, _ = ref.close(x, xd, np.zeros(robot.n))
        for wrench in (None, fe):
            qdd, _ = ref.forward_dynamics(Q, QD, f, wrench)
            assert _rel(robot.forward_dynamics(x, xd, f, wrench=wrench), qdd[act]) < 1e-9
            # the passive joints too: tree_state's accelerations are the KKT ones
            xdd = robot.forward_dynamics(x, xd, f, wrench=wrench)
            assert _rel(robot.tree_state(x, xd, xdd)[2], qdd) < 1e-9


@pytest.mark.parametrize("case", ROBOT_CASES)
def test_passive_joints_satisfy_loop_constraints(case):
    robot = _load(case)
    lc = LoopConstraints(robot.description)
    for x, xd, xdd, _ in zip(*_states(robot)):
        Q, QD, QDD = robot.tree_state(x, xd, xdd)
        res, G, bias = lc.evaluate(Q, QD)
        assert np.abs(res).max() < 1e-10
        assert np.abs(G @ QD).max() < 1e-10
        assert np.abs(G @ QDD + bias).max() < 1e-10


# ---------------------------------------------------------------- singular / infeasible states

def test_stroke_limit_names_module_and_value(four):
    with pytest.raises(StateError, match=r"tilt.*0\.6.*0\.59"):
        four.inverse_dynamics([0.0, 0.3, 0.6, 0.5], np.zeros(4), np.zeros(4))
    with pytest.raises(StateError, match=r"extension.*-0\.1"):
        four.forward_dynamics([0.0, 0.3, 0.3, -0.1], np.zeros(4), np.zeros(4))


def test_loop_that_cannot_close_is_singular(one):
    # the lift loop straightens at x = L + L1 - x0 = 0.5532 m, inside the 0.59 m stroke
    with pytest.raises(SingularityError, match=r"lift.*x = 0\.57"):
        one.forward_dynamics([0.57], [0.0], [0.0])
    g = _data()["geometry"]
    with pytest.raises(SingularityError, match="lift"):                  # q = 0 exactly: straight loop
        one.inverse_dynamics([g["L1"] + g["L11"] - 0.83], [0.0], [0.0])


def test_nan_is_rejected(one):
    with pytest.raises(StateError):
        one.inverse_dynamics([np.nan], [0.0], [0.0])
    with pytest.raises(StateError):
        one.inverse_dynamics([0.1, 0.2], [0.0, 0.0], [0.0, 0.0])


def _edit(text, old, new):
    assert old in text
    return text.replace(old, new, 1)


def test_description_errors_name_the_culprit():
    with open(FOUR, encoding="utf-8") as f:
        text = f.read()
    with pytest.raises(DescriptionError, match="nonexistent"):
        load_robot(_edit(text, '<actuator joint="tilt"/>', '<actuator joint="nonexistent"/>'))
    with pytest.raises(DescriptionError, match="tilt_rod_end"):                    # does not close at q = 0
        load_robot(_edit(text, '<parent link="B42"/>\n    <parent_origin xyz="0.745 0.0 0.0"',
                         '<parent link="B42"/>\n    <parent_origin xyz="0.7 0.0 0.0"'))
    spherical = _edit(text, '<constraint name="lift_rod_end" type="revolute">',
                      '<constraint name="lift_rod_end" type="spherical">')
    with pytest.raises(DescriptionError, match="lift_rod_end.*not a supported module"):
        ModuleChainRobot(spherical)
    # the same mechanism as a chain of loops (its planar loop closes with a ball joint just as
    # well): served on the constraint-embedding route, the crane's numbers
    x, xd, xdd = np.array([0.3, 0.2, 0.25, 0.4]), np.full(4, 0.1), np.full(4, -0.2)
    ball = load_robot(spherical)
    assert ball.kind == "loop_chain"
    assert _rel(ball.inverse_dynamics(x, xd, xdd), load_robot(text).inverse_dynamics(x, xd, xdd)) < 1e-9
    without_lift = re.sub(r'\s*<(cylinder|valve) joint="lift"[^>]*/>', '', text)     # its hydraulics too
    with pytest.raises(DescriptionError, match="lift_rod_end.*lift.*not declared actuated"):
        load_robot(_edit(without_lift, '<actuator joint="lift"/>', ''))
    with pytest.raises(DescriptionError, match="<cylinder joint=\"lift\">: 'lift' is not an actuated joint"):
        load_robot(_edit(text, '<actuator joint="lift"/>', ''))
    with pytest.raises(DescriptionError, match="chain order"):
        load_robot(_edit(_edit(text, '<actuator joint="slew"/>', '<actuator joint="XX"/>'),
                         '<actuator joint="extension"/>', '<actuator joint="slew"/>').replace(
                             '<actuator joint="XX"/>', '<actuator joint="extension"/>'))


def test_documented_example_is_the_1dof_robot(one):
    """The complete example of the description format page (doc/description_format.rst) loads
    and is the 1-DoF example robot."""
    with open(os.path.join(HERE, "..", "..", "..", "doc", "description_format.rst"),
              encoding="utf-8") as f:
        text = f.read()
    body = text.split("Complete example")[1].split(".. code-block:: xml\n\n")[1].split("\n")
    example = textwrap.dedent("\n".join(itertools.takewhile(
        lambda line: line.startswith("   ") or not line, body))).strip()
    assert example.startswith("<?xml") and example.endswith("</robot>"), example[-200:]
    robot = load_robot(example)
    assert robot.actuated_joints == ("lift",) and robot.tree.total_mass == one.tree.total_mass
    x, xd, xdd = np.array([0.2]), np.array([0.1]), np.array([0.3])
    assert _rel(robot.inverse_dynamics(x, xd, xdd), one.inverse_dynamics(x, xd, xdd)) < 1e-12
