"""Redundant actuation (paper 001 Secs. 3.7, 5.3: N_act > delta_p): ``u`` solves
``J_IK^T u = W`` in the minimum-norm sense.  Example: planar_3rrr with a fourth actuator at
limb 1's elbow (``limb1_b``), built here from the URDF text.  Checked against the KKT route
(constrained dynamics of the spanning tree with the loop constraints as Lagrange multipliers,
``core/tree/constrained.py`` and an SVD null space here), which shares only the tree dynamics and
the cut-joint constraints with the task-space algorithms."""
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

from pkm_dynamics.core.tree.constrained import independent_rows, kkt_forward_dynamics
from pkm_dynamics.core.tree.cut_joints import LoopConstraints
from pkm_dynamics.core.robot import load_robot
from pkm_dynamics.core.tree.tree_dynamics import rnea

URDF = (Path(__file__).resolve().parents[3] / "robots" / "planar_3rrr.urdf").read_text()
REDUNDANT = URDF.replace('<end_effector link="platform"/>',
                         '<actuator joint="limb1_b"/>\n    <end_effector link="platform"/>')


@pytest.fixture(scope="module")
def robot():
    return load_robot(REDUNDANT)


def task_states(count=6, seed=7):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (rng.uniform(-0.03, 0.03, 2).tolist() + [rng.uniform(-0.2, 0.2)],
               rng.normal(scale=0.2, size=3), rng.normal(size=3))


def tree_state(robot, sol):
    """The IK's joint positions, rates, accelerations in the spanning tree's joint order."""
    tree = robot.description.tree
    idx = [tree.joint_index(n) for n in robot.tree_joints]
    out = []
    for v in (sol.q, sol.qd, sol.qdd):
        a = np.zeros(tree.nq)
        a[idx] = v
        out.append(a)
    return out


def test_example_is_redundantly_actuated(robot):
    assert robot.actuated_joints == ("limb1_a", "limb2_a", "limb3_a", "limb1_b")
    sol = robot.inverse_kinematics(robot.task_pose(np.zeros(3)))
    assert sol.J_IK.shape == (4, 3) and np.linalg.matrix_rank(sol.J_IK) == 3


def test_u_is_the_minimum_norm_kkt_solution_and_reproduces_the_motion(robot):
    """At random task states: (1) of all actuator forces that make the tree follow the IK motion
    (``rnea = S^T u + G^T lambda``, a family ``u_p + Z_u w``) the robot's ``u`` is the one of
    least norm; (2) KKT forward dynamics of the tree with ``S^T u`` applied reproduces the
    commanded tree accelerations, and the task-space FD the commanded task acceleration."""
    desc = robot.description
    tree = desc.tree
    lc = LoopConstraints(desc)
    act = [tree.joint_index(n) for n in robot.actuated_joints]
    S = np.zeros((len(act), tree.nq))
    S[np.arange(len(act)), act] = 1.0
    for x, V, A in task_states():
        sol = robot.inverse_kinematics(robot.task_pose(np.array(x)), V, A)
        u = robot.inverse_dynamics(sol, V, A)
        q, qd, qdd = tree_state(robot, sol)
        # (1) the family of actuator forces of this motion, and its least-norm member
        G = lc.evaluate(q)[1]
        Gr = independent_rows(G).T @ G
        M = np.hstack([S.T, Gr.T])
        tau = rnea(tree, q, qd, qdd)
        p = np.linalg.lstsq(M, tau, rcond=None)[0]
        assert np.linalg.norm(M @ p - tau) <= 1e-10 * np.linalg.norm(tau)
        Zu = scipy.linalg.null_space(M)[:len(act)]
        assert np.linalg.matrix_rank(Zu) == 1             # one internal force: 4 actuators, 3 DOF
        u_min = p[:len(act)] - Zu @ np.linalg.lstsq(Zu, p[:len(act)], rcond=None)[0]
        np.testing.assert_allclose(u, u_min, rtol=0, atol=1e-9 * np.abs(u_min).max())
        assert np.linalg.norm(u) < np.linalg.norm(u + 0.1 * np.abs(u).max() * Zu[:, 0])
        # (2) forward dynamics with u applied
        qdd_kkt, _ = kkt_forward_dynamics(desc, q, qd, S.T @ u)
        np.testing.assert_allclose(qdd_kkt, qdd, rtol=0, atol=1e-9 * np.abs(qdd).max())
        np.testing.assert_allclose(robot.forward_dynamics(sol, V, u), A, rtol=0, atol=1e-9 * np.abs(A).max())


#: pick-and-place of paper 002 Sec. VI-B: times off the snap's kinks, step of the differences
PICK_TIMES, PICK_STEP = (0.11, 0.23, 0.33, 0.62), 5e-4


def test_higher_order_id_gives_the_minimum_norm_u_and_its_derivatives(robot):
    """The higher-order inverse dynamics (Taylor route: the recursion of paper 002 is for
    non-redundant robots) gives the inverse dynamics' minimum-norm ``u`` for the same motion,
    and ``du``, ``ddu`` are the derivatives of that ``u(t)``: 4th-order central differences of
    :meth:`inverse_dynamics` sampled along the pick-and-place path (IK warm-started from the
    previous sample)."""
    from pkm_dynamics.core.hoid.higher_order import higher_order_inverse_dynamics
    from pkm_dynamics.core.hoid.hoid_motions import pick_and_place

    def u_id(t, initial):
        C, V = pick_and_place(t)
        sol = robot.inverse_kinematics(C, V[0], V[1], initial=initial)
        return robot.inverse_dynamics(sol, V[0], V[1]), sol

    for t in PICK_TIMES:
        C, V = pick_and_place(t)
        r = higher_order_inverse_dynamics(robot, C, *V)
        assert r.method == "taylor"
        u, sol = u_id(t, None)
        np.testing.assert_allclose(r.u, u, rtol=0, atol=1e-10 * np.abs(u).max())
        f = {}
        for k in (-2, -1, 1, 2):
            f[k] = u_id(t + k * PICK_STEP, sol)[0]
        h = PICK_STEP
        du = (f[-2] - 8 * f[-1] + 8 * f[1] - f[2]) / (12 * h)
        ddu = (-f[-2] + 16 * f[-1] - 30 * u + 16 * f[1] - f[2]) / (12 * h * h)
        assert np.linalg.norm(r.du - du) < 1e-6 * np.linalg.norm(du), t
        assert np.linalg.norm(r.ddu - ddu) < 1e-6 * np.linalg.norm(ddu), t
