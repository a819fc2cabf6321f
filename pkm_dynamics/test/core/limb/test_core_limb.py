"""Limbs of the IRSBot-2 (paper 001 Secs. 3-4): loop topology, constraint resolution H, Hdot
(eqs. 16-20) and Gdot against finite differences and the cut-joint module, the inner and outer
Newton schemes (Algorithms 1-3), velocity and acceleration IK (eqs. 27-29)."""
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core.tree.cut_joints import cut_joint_constraint
from pkm_dynamics.core.errors import ConvergenceError
from pkm_dynamics.core.limb.limb_ik import (limb_acceleration_ik, limb_inverse_kinematics_compound,
                                            limb_inverse_kinematics_nested, limb_jacobians, limb_velocity_ik)
from pkm_dynamics.core.limb.limb_kinematics import limb_platform_pose, tree_coriolis_matrix
from pkm_dynamics.core.limb.loop_constraints import (_cut_bias, constraint_resolution, constraint_resolution_derivative,
                                                     cut_joint_jacobian_derivative, loop_acceleration_bias,
                                                     loop_constraints, loop_residual, solve_loop_constraints)
from pkm_dynamics.core.pkm.parallel_robot import ParallelRobot
from pkm_dynamics.core.tree.tree_dynamics import forward_kinematics, kinematics, rnea

ROBOTS = Path(__file__).resolve().parents[3] / "robots"


@pytest.fixture(scope="module")
def robot():
    return ParallelRobot(str(ROBOTS / "irsbot2_paths.urdf"))


@pytest.fixture(scope="module")
def state(robot):
    """An assembled configuration away from the reference, with task velocity."""
    sol = robot.inverse_kinematics(robot.task_pose([0.08, 0.2]), twist=[0.7, -1.1])
    return sol, np.array([0.7, -1.1])


def test_limb_topology_found_from_the_description(robot):
    """Two limbs; per limb the proximal planar loop (R 7 cut: 5 rows of rank 2, Remark 4) and
    the distal 4U loop (U 8 cut: 4 independent rows); the independent coordinates chosen are
    the paper's (phi_1, phi_6,1, phi_6,2) for limb 1; non-equimobile: P_t = translations (eq.
    32), D_t of eq. 26."""
    assert len(robot.limbs) == 2
    for l, limb in enumerate(robot.limbs, start=1):
        prox, dist = limb.loops
        assert prox.names == (f"l{l}_j7",) and dist.names == (f"l{l}_j8",)
        assert prox.size == 5 and len(prox.rows) == 2 and prox.dof == 1
        assert dist.size == 4 and len(dist.rows) == 4 and dist.dof == 2
        names = limb.joint_names
        assert names[prox.independent[0]] == f"l{l}_j1"        # the actuated joint (eq. 49)
        assert limb.dof == 3
        np.testing.assert_array_equal(limb.task_rows, [3, 5, 4])  # vx, vz, vy
        np.testing.assert_array_equal(limb.D_t, [[1, 0], [0, 1], [0, 0]])
    lim1 = robot.limbs[0]
    assert [lim1.joint_names[j] for j in lim1.independent] == ["l1_j1", "l1_j6_1", "l1_j6_2"]
    # limb 2 reaches the platform through the cut U joint 6, made two tree joints of its limb tree
    assert robot.limbs[1].joint_names[-2:] == ("l2_j6_1", "l2_j6_2")
    assert list(robot.limbs[1].whole_index[-2:]) == [-1, -1]


def test_H_is_the_constraint_null_space_and_matches_finite_differences(robot, state):
    sol, _ = state
    for limb, theta in zip(robot.limbs, sol.limb_theta):
        assert loop_residual(limb, theta) <= 1e-10
        H = constraint_resolution(limb, theta)
        for _, G, _ in loop_constraints(limb, forward_kinematics(limb.tree, theta)):
            assert np.abs(G @ H).max() < 1e-12                  # all rows, redundant ones too
        h = 1e-6
        q = theta[limb.independent]
        for k in range(limb.dof):
            e = np.zeros(limb.dof)
            e[k] = h
            tp, _ = solve_loop_constraints(limb, theta, q + e, tol=1e-14)
            tm, _ = solve_loop_constraints(limb, theta, q - e, tol=1e-14)
            np.testing.assert_allclose((tp - tm) / (2 * h), H[:, k], atol=1e-7)


def test_Gdot_matrix_against_bias_and_finite_differences(robot):
    """Gdot (eqs. 54, 60) as a matrix: Gdot thetad equals the cut-joint module's bias, and
    Gdot equals the derivative of G along thetad (any tree motion, loops open)."""
    rng = np.random.default_rng(3)
    for limb in robot.limbs:
        th = 0.3 * rng.standard_normal(limb.n)
        thd = rng.standard_normal(limb.n)
        _, C, V, A0 = kinematics(limb.tree, th, thd)
        h = 1e-6
        Cp = forward_kinematics(limb.tree, th + h * thd)
        Cm = forward_kinematics(limb.tree, th - h * thd)
        for lp in limb.loops:
            for geo in lp.cuts:
                Gd = cut_joint_jacobian_derivative(limb.tree, geo, C, V)
                _, _, bias = cut_joint_constraint(limb.tree, geo, C, V, A0)
                np.testing.assert_allclose(Gd @ thd, bias, atol=1e-11)
                np.testing.assert_allclose(_cut_bias(geo, C, V, A0), bias, atol=1e-12)
                fd = (cut_joint_constraint(limb.tree, geo, Cp)[1]
                      - cut_joint_constraint(limb.tree, geo, Cm)[1]) / (2 * h)
                np.testing.assert_allclose(Gd, fd, atol=1e-7)


def test_Hdot_and_bias_against_finite_differences(robot, state):
    """eq. 19 against d/dt H along an admissible motion; eq. 20's Hdot qd from the bias."""
    sol, V_t = state
    for limb, theta in zip(robot.limbs, sol.limb_theta):
        qd, thd = limb_velocity_ik(limb, theta, V_t)
        Hd = constraint_resolution_derivative(limb, theta, thd)
        np.testing.assert_allclose(loop_acceleration_bias(limb, theta, thd), Hd @ qd, atol=1e-10)
        h = 1e-6
        q = theta[limb.independent]
        tp, _ = solve_loop_constraints(limb, theta, q + h * qd, tol=1e-14)
        tm, _ = solve_loop_constraints(limb, theta, q - h * qd, tol=1e-14)
        fd = (constraint_resolution(limb, tp) - constraint_resolution(limb, tm)) / (2 * h)
        np.testing.assert_allclose(Hd, fd, atol=1e-6)


def test_inner_loop_algorithm_2(robot, state):
    """Small increments of q: residual <= 1e-10 within 1-3 Newton steps per FC (Fig. 12)."""
    sol, _ = state
    limb, theta = robot.limbs[0], sol.limb_theta[0]
    for dq in (1e-3, 1e-2):
        q = theta[limb.independent] + dq
        th, its = solve_loop_constraints(limb, theta, q)
        assert loop_residual(limb, th) <= 1e-10
        np.testing.assert_array_equal(th[limb.independent], q)
        assert its.max() <= 3 and its.min() >= 1
    with pytest.raises(ConvergenceError, match="limb1 loop"):
        solve_loop_constraints(limb, theta, theta[limb.independent] + 3.0, max_iter=3)


def test_nested_scheme_reproduces_the_paper_example(robot):
    """Sec. 6.4.1: target r_6,0 + (0.2, 0, 0.5) m from the documented start, the reference
    configuration (platform at r_6,0), accuracy goal 1e-11, Algorithms 1 + 2.  The public call
    returns the robot's working mode -- that of the reference (Fig. 5), on which the paper's
    paths run (Fig. 8): the configuration reached by moving there in small steps (tracked
    with Algorithm 1 + 2, each step from the previous), limb 1 at phi_1 = -1.580 rad.  The
    paper's plain Newton iteration from the start needs 6 outer iterations (Fig. 13a) and so
    does Algorithm 1 here, for both limbs: limb 2 lands on the working mode (the public
    configuration), limb 1 on the other elbow mode (phi_1 = -2.596 rad), which the public call
    does not return (its continuation follows the straight path instead)."""
    target = robot.task_pose([0.2, 0.5])
    sol = robot.inverse_kinematics(target, scheme="nested", tol=1e-11)
    assert sol.residual <= 1e-11
    modes = []
    for limb, theta in zip(robot.limbs, sol.limb_theta):
        Cp = limb_platform_pose(limb, theta)
        np.testing.assert_allclose(Cp[:3, 3], target[:3, 3], atol=1e-11)
        tracked = np.zeros(limb.n)
        for s in np.linspace(0.0, 1.0, 61)[1:]:
            tracked, _ = limb_inverse_kinematics_nested(limb, robot.task_pose([0.2 * s, 0.5 * s]), tracked, tol=1e-11)
        np.testing.assert_allclose(theta, tracked, atol=1e-9)
        # the paper's iteration from the start: 6 outer steps, each inner loop converging
        direct, info = limb_inverse_kinematics_nested(limb, target, np.zeros(limb.n), tol=1e-11)
        assert info.outer == 6
        assert all(1 <= int(i) <= 5 for step in info.inner for i in step)
        e = np.array(info.errors)           # quadratic decay at the end (Newton-Raphson)
        assert e[-2] < 1e-4 and e[-1] < 10 * e[-2] ** 2 + 1e-11
        assert loop_residual(limb, direct) <= 1e-10
        modes.append(np.abs(direct - theta).max() <= 1e-9)
    assert modes == [False, True]


def test_compound_scheme_agrees_with_nested(robot):
    """Algorithm 3 (compound step) reaches the configuration of Algorithms 1+2."""
    target = robot.task_pose([0.1, 0.3])
    for limb in robot.limbs:
        theta, info = limb_inverse_kinematics_compound(limb, target, np.zeros(limb.n), tol=1e-11)
        assert loop_residual(limb, theta) <= 1e-10
        other, _ = limb_inverse_kinematics_nested(limb, target, np.zeros(limb.n), tol=1e-11)
        np.testing.assert_allclose(theta, other, atol=1e-9)
        assert info.inner == [] and 3 <= info.outer <= 8


def test_velocity_and_acceleration_ik(robot):
    """Eqs. 27-29 against central differences of the position IK along a smooth task path."""
    x0, v, a = np.array([0.05, 0.15]), np.array([0.4, -0.3]), np.array([2.0, 1.5])
    h = 1e-4
    xs = [x0 + v * t + 0.5 * a * t * t for t in (-h, 0.0, h)]
    sols = []
    init = robot.inverse_kinematics(robot.task_pose(x0))
    for x in xs:
        sols.append(robot.inverse_kinematics(robot.task_pose(x), initial=init))
    for l, limb in enumerate(robot.limbs):
        th = sols[1].limb_theta[l]
        qd, thd = limb_velocity_ik(limb, th, v)
        fd1 = (sols[2].limb_theta[l] - sols[0].limb_theta[l]) / (2 * h)
        np.testing.assert_allclose(thd, fd1, atol=1e-6)
        _, thdd = limb_acceleration_ik(limb, th, thd, a)
        fd2 = (sols[2].limb_theta[l] - 2 * th + sols[0].limb_theta[l]) / h**2
        np.testing.assert_allclose(thdd, fd2, atol=2e-3 * max(1.0, np.abs(fd2).max()))
        # twist of the platform frame: the task components, nothing else (non-equimobile limb)
        jac = limb_jacobians(limb, th)
        np.testing.assert_allclose(jac.J_p @ thd, robot.P_p @ v, atol=1e-12)


def test_tree_coriolis_matrix_matches_rnea(robot, state):
    sol, V_t = state
    for limb, th in zip(robot.limbs, sol.limb_theta):
        thd = limb_velocity_ik(limb, th, V_t)[1]
        Cm = tree_coriolis_matrix(limb.tree, th, thd)
        ref = rnea(limb.tree, th, thd, np.zeros(limb.n), gravity=np.zeros(3))
        np.testing.assert_allclose(Cm @ thd, ref, atol=1e-10 * max(1.0, np.abs(ref).max()))
