"""Task-space forward dynamics of PKMs in one compiled call (core/pkm/robot_dynamics.py)
against the numpy reference route (``robot.compiled = False``: every limb through the tree
RNEA/CRBA of core/tree/tree_dynamics.py) and against the inverse dynamics (FD(ID) round trip), for the
6-UPS Gough-Stewart platform and the IRSBot-2 (limbs with loops): from an IK solution, from a pose
(the IK warm-started), with a platform wrench, from a solution the scratch no longer holds, in
several threads; bad inputs and singular states raise the named errors."""
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core.errors import SingularityError, StateError
from pkm_dynamics.core.interface import SolverOptions
from pkm_dynamics.core.pkm.parallel_robot import ParallelRobot, parabolic_trajectory

ROBOTS = Path(__file__).resolve().parents[3] / "robots"


def gough_states(robot, n=4):
    """Poses and twists of a tilted, translated platform (as bench/bench_pkm.py)."""
    rng = np.random.default_rng(3)
    out = []
    for _ in range(n):
        x = rng.uniform(-0.03, 0.03, 6) * np.array([1, 1, 1, 1, 1, 0.5])
        out.append((robot.task_pose(x), rng.uniform(-0.3, 0.3, 6), rng.uniform(-2, 2, 6)))
    return out


def irsbot_states(robot):
    t = np.linspace(0.02, 0.3, 4)
    P, V, A = parabolic_trajectory(t, robot.reference_pose, 0.25, 0.45)
    return list(zip(P, V, A))


@pytest.fixture(scope="module", params=["gough_stewart_6ups", "irsbot2_paths"])
def robot_states(request):
    robot = ParallelRobot(str(ROBOTS / f"{request.param}.urdf"))
    states = gough_states(robot) if request.param.startswith("gough") else irsbot_states(robot)
    return robot, states


def reference_fd(robot, sol, V, u, wrench=None):
    robot.compiled = False
    try:
        return robot.forward_dynamics(sol, V, u, wrench=wrench)
    finally:
        robot.compiled = True


def test_compiled_fd_equals_the_numpy_route_and_inverts_the_id(robot_states):
    robot, states = robot_states
    w = np.array([0.3, -0.2, 0.1, 5.0, -3.0, 2.0])
    for pose, V, A in states:
        sol = robot.inverse_kinematics(pose, V, A)
        u = robot.inverse_dynamics(sol, V, A)
        a = robot.forward_dynamics(sol, V, u)
        assert np.allclose(a, A, rtol=1e-9, atol=1e-9 * np.abs(A).max())
        assert np.allclose(a, reference_fd(robot, sol, V, u), rtol=1e-10, atol=1e-10 * np.abs(A).max())
        aw = robot.forward_dynamics(sol, V, u, wrench=w)
        ref = reference_fd(robot, sol, V, u, w)
        assert np.allclose(aw, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
        uw = robot.inverse_dynamics(sol, V, A, wrench=w)
        assert np.allclose(robot.forward_dynamics(sol, V, uw, wrench=w), A, atol=1e-9 * np.abs(A).max())


def test_fd_from_a_pose_and_from_a_solution_the_scratch_no_longer_holds(robot_states):
    robot, states = robot_states
    sols = [robot.inverse_kinematics(p, V, A) for p, V, A in states]
    us = [robot.inverse_dynamics(s, V, A) for s, (_, V, A) in zip(sols, states)]
    for k in (0, 2, 1, 3):                     # the scratch holds the last IK's state
        _, V, A = states[k]
        assert np.allclose(robot.forward_dynamics(sols[k], V, us[k]), A, atol=1e-9 * np.abs(A).max())
    pose, V, A = states[1]
    a = robot.forward_dynamics(pose, V, us[1], initial=sols[0])
    assert np.allclose(a, A, atol=1e-9 * np.abs(A).max())
    batch = robot.forward_dynamics(np.stack([s[0] for s in states]), np.stack([s[1] for s in states]),
                                   np.stack(us))
    assert np.allclose(batch, np.stack([s[2] for s in states]), atol=1e-8)


def test_fd_in_several_threads(robot_states):
    robot, states = robot_states
    sols = [robot.inverse_kinematics(p, V, A) for p, V, A in states]
    us = [robot.inverse_dynamics(s, V, A) for s, (_, V, A) in zip(sols, states)]

    def run(k):
        return [robot.forward_dynamics(sols[(k + j) % 4], states[(k + j) % 4][1], us[(k + j) % 4])
                for j in range(40)]

    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(run, range(4)))
    for k, res in enumerate(results):
        for j, a in enumerate(res):
            A = states[(k + j) % 4][2]
            assert np.allclose(a, A, atol=1e-9 * np.abs(A).max())


def test_bad_inputs_name_the_culprit(robot_states):
    robot, states = robot_states
    pose, V, A = states[0]
    sol = robot.inverse_kinematics(pose, V, A)
    u = robot.inverse_dynamics(sol, V, A)
    bad = V.copy()
    bad[1] = np.nan
    with pytest.raises(StateError, match="twist"):
        robot.forward_dynamics(sol, bad, u)
    bad[1] = 1e9
    with pytest.raises(StateError, match=r"twist\[1\]"):
        robot.forward_dynamics(sol, bad, u)
    ub = u.copy()
    ub[-1] = np.inf
    with pytest.raises(StateError, match="finite actuator forces"):
        robot.forward_dynamics(sol, V, ub)
    ub[-1] = 1e12
    with pytest.raises(StateError, match=rf"u\[{len(u) - 1}\]"):
        robot.forward_dynamics(sol, V, ub)
    with pytest.raises(StateError, match=r"wrench\[4\]"):
        robot.forward_dynamics(sol, V, u, wrench=np.array([0, 0, 0, 0, 1e12, 0.0]))
    with pytest.raises(StateError, match="u must hold"):
        robot.forward_dynamics(sol, V, u[:-1])


def test_singular_states_raise_the_named_error():
    """A threshold below kappa(J_IK) (or kappa(M_t)) of the state: SingularityError, as the
    reference route words it."""
    path = str(ROBOTS / "gough_stewart_6ups.urdf")
    free = ParallelRobot(path)
    pose, V, A = gough_states(free, 1)[0]
    sol = free.inverse_kinematics(pose, V, A)
    u = free.inverse_dynamics(sol, V, A)
    k_J = free.check_actuation(sol.J_IK)
    k_M = np.linalg.cond(free.mass_matrix(sol))
    thr = 0.5 * k_J
    tight = ParallelRobot(path, options=SolverOptions(singularity_threshold=thr))
    with pytest.raises(SingularityError, match=r"kappa\(J_IK\)"):
        tight.forward_dynamics(sol, V, u)
    if np.sqrt(k_M) > 1.0 and k_J < np.sqrt(k_M):
        mid = ParallelRobot(path, options=SolverOptions(singularity_threshold=0.5 * (k_J + np.sqrt(k_M))))
        with pytest.raises(SingularityError, match=r"kappa\(M_t\)"):
            mid.forward_dynamics(sol, V, u)


def test_mass_matrix_solve_decides_as_the_singular_values():
    """The kernel's solve of eq. 39 and its ``kappa(M_t)`` check (trace bound on a positive
    definite ``M_t``, the singular values where it does not decide) against numpy's
    ``solve`` and ``cond``: symmetric positive definite matrices of condition numbers about the
    bound, and indefinite ones whose trace bound would pass (refused by the singular values)."""
    from pkm_dynamics.core.pkm.robot_dynamics import mass_matrix_solve
    from pkm_dynamics.core.status import MASS_MATRIX, OK
    rng = np.random.default_rng(7)
    bound = 1e3
    for kappa in (2.0, 900.0, 999.0, 1001.0, 1100.0, 1e6):
        for _ in range(4):
            Q = np.linalg.qr(rng.normal(size=(6, 6)))[0]
            ev = np.geomspace(1.0, kappa, 6) * rng.uniform(0.5, 2.0)
            M = (Q * ev) @ Q.T
            M = 0.5 * (M + M.T)
            b = rng.normal(size=6)
            acc, W = b.copy(), np.zeros((12, 7))
            status, _ = mass_matrix_solve(M, acc, bound, W)
            assert status == (OK if np.linalg.cond(M) <= bound else MASS_MATRIX)
            if status == OK:
                np.testing.assert_allclose(acc, np.linalg.solve(M, b), rtol=1e-12 * kappa, atol=0)
            acc = b.copy()
            assert mass_matrix_solve(M, acc, -1.0, W)[0] == OK           # no check: solved
            np.testing.assert_allclose(acc, np.linalg.solve(M, b), rtol=1e-12 * kappa, atol=0)
    Q = np.linalg.qr(rng.normal(size=(6, 6)))[0]
    M = (Q * np.array([-1.0, 1.0, 100.0, 100.0, 100.0, 100.0])) @ Q.T   # tr(M) tr(M^-1) = 16, kappa 100
    M = 0.5 * (M + M.T)
    assert mass_matrix_solve(M, np.ones(6), 20.0, np.zeros((12, 7)))[0] == MASS_MATRIX
    assert mass_matrix_solve(M, np.ones(6), 150.0, np.zeros((12, 7)))[0] == OK
