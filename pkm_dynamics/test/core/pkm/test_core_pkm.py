"""IRSBot-2 as a ParallelRobot (paper 001 Secs. 3.7-6): IK along the paper's paths (loop
residual, iteration counts of Figs. 11-12 and 16), J_IK (eq. 30) against finite differences,
task-space inverse dynamics (eq. 45) against constrained (KKT) inverse dynamics of the whole
spanning tree with all cut joints as multipliers (the independent route of
test/pinocchio_loops.py: Pinocchio, its own cut rows and loop closure), FD(ID) and ID(FD) round trips, the matrix
form of eqs. 40-43, forward kinematics by Newton, the input-singularity threshold."""
from pathlib import Path

import numpy as np
import pytest

from pinocchio_loops import PinocchioLoops
from pkm_dynamics.core.errors import ConvergenceError, DescriptionError, SingularityError, StateError
from pkm_dynamics.core.pkm.parallel_robot import ParallelRobot, parabolic_trajectory, sample
from pkm_dynamics.core.interface import SolverOptions
from pkm_dynamics.core.robot import load_robot

ROBOTS = Path(__file__).resolve().parents[3] / "robots"
PATHS = str(ROBOTS / "irsbot2_paths.urdf")
#: paper 001 Sec. 6.4: dx, dz of the parabolic path; the input-singularity path is printed as
#: (-0.15, -0.6085): in this reconstruction (z up, limb 1 at x > 0) the mirrored path
#: (+0.15, +dz) stretches limb 1, and its workspace ends at dz ~ 0.6081 (see robots/README.md)
PARABOLIC = (0.25, 0.45)
SINGULAR = (0.15, 0.6075)


@pytest.fixture(scope="module")
def robot():
    return ParallelRobot(PATHS)


def path(robot, dxdz, dt, t_end=1 / 3):
    t = np.arange(0.0, t_end + 1e-12, dt)
    return parabolic_trajectory(t, robot.reference_pose, *dxdz)


@pytest.fixture(scope="module")
def ik_10ms(robot):
    P, V, A = path(robot, PARABOLIC, 0.01)
    return P, V, A, robot.inverse_kinematics(P, V, A)


def test_load_robot_returns_a_parallel_robot():
    r = load_robot(PATHS)
    assert isinstance(r, ParallelRobot)
    assert r.actuated_joints == ("l1_j1", "l2_j1") and r.task_space == ("vx", "vz")
    assert len(r.tree_joints) == 16


def test_ik_along_the_parabolic_path_10ms(robot, ik_10ms):
    """One cycle at dt = 10 ms: loops closed to 1e-10, platform on the path; Fig. 11b: the outer
    loop needs (almost always) 3 iterations."""
    P, V, A, s = ik_10ms
    assert s.residual.max() <= 1e-10
    its = s.iterations[1:]                        # sample 0 is the start configuration
    assert its.min() >= 1 and its.max() <= 4
    assert np.mean(its == 3) >= 0.5
    # the whole-tree configuration closes every cut joint of the robot description
    from pkm_dynamics.core.tree.cut_joints import LoopConstraints
    lc = LoopConstraints(robot.description)
    for i in range(0, len(P), 7):
        assert np.abs(lc.residual(s.q[i])).max() <= 1e-9
    # velocities satisfy the velocity constraints of the whole tree
    g, G, _ = lc.evaluate(s.q[5])
    assert np.abs(G @ s.qd[5]).max() < 1e-9


def test_ik_iteration_distribution_1ms_nested_and_compound(robot):
    """dt = 1 ms (a quarter cycle): Fig. 11a, 1-3 outer iterations; Fig. 12, 1-3 inner
    iterations per outer step for the distal loop; Fig. 16, the compound scheme ~3."""
    P, V, A = path(robot, PARABOLIC, 0.001, t_end=1 / 12)
    s = robot.inverse_kinematics(P)
    its = s.iterations[1:]
    assert its.min() >= 1 and its.max() <= 3
    inner = np.array([int(step[1]) for sample_inner in s.inner[1:] for limb_inner in sample_inner
                      for step in [x for x in limb_inner]])
    assert inner.min() >= 1 and inner.max() <= 3
    assert s.residual.max() <= 1e-10
    c = robot.inverse_kinematics(P, scheme="compound")
    assert c.iterations[1:].max() <= 4
    np.testing.assert_allclose(c.q, s.q, atol=1e-9)


def test_J_IK_against_finite_differences(robot, ik_10ms):
    """eq. 30: actuator rates J_IK V_t against central differences along the path."""
    P, V, A, s = ik_10ms
    h = 1e-4
    for i in (3, 11, 20):
        t = 0.01 * i
        Pm, _, _ = parabolic_trajectory([t - h, t + h], robot.reference_pose, *PARABOLIC)
        sm = robot.inverse_kinematics(Pm, initial=sample(s, i), tol=1e-14)
        s0 = robot.inverse_kinematics(P[i], initial=sample(s, i), tol=1e-14)
        fd = (sm.actuators[1] - sm.actuators[0]) / (2 * h)
        np.testing.assert_allclose(s.J_IK[i] @ V[i], fd, rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(s.actuators_d[i], fd, rtol=1e-5, atol=1e-8)
        fdd = (sm.actuators[1] - 2 * s0.actuators + sm.actuators[0]) / h**2
        np.testing.assert_allclose(s.actuators_dd[i], fdd, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("with_wrench", [False, True])
def test_inverse_dynamics_equals_kkt_of_the_whole_tree(robot, ik_10ms, with_wrench):
    """eq. 45 against the independent route of test/pinocchio_loops.py, which shares no code with
    the package: Pinocchio's RNEA of the whole spanning tree (platform on limb 1, limb 2's U
    joints 6 and 8 cut) with its own rows of all 22 cut-joint constraints as multipliers (7
    redundant), the tree motion found by its own loop closure from the task motion alone."""
    P, V, A, s = ik_10ms
    ref = PinocchioLoops(Path(PATHS).read_text(encoding="utf-8"), robot.tree_joints, robot.tree.gravity)
    W = np.array([0.4, -0.3, 0.2, 12.0, -5.0, 20.0]) if with_wrench else None
    q = None
    for i in range(0, len(P), 4):
        q, qd, qdd = ref.close(P[i], V[i], A[i], start=q)
        u = robot.inverse_dynamics(sample(s, i), V[i], A[i], wrench=W)
        u_ref = ref.inverse_dynamics(q, qd, qdd, W)[0]
        np.testing.assert_allclose(u, u_ref, rtol=1e-8, atol=1e-8 * np.abs(u_ref).max())


def test_batched_inverse_dynamics_and_round_trips(robot, ik_10ms):
    """Batched ID from poses (IK inside, warm-started) equals ID from the stored IK; FD(ID) = Vdot
    and ID(FD(u)) = u (eq. 39 both ways)."""
    P, V, A, s = ik_10ms
    u = robot.inverse_dynamics(P, V, A)
    assert u.shape == (len(P), 2)
    u2 = robot.inverse_dynamics(s, V, A)
    np.testing.assert_allclose(u, u2, rtol=1e-10, atol=1e-9)
    a = robot.forward_dynamics(s, V, u)
    np.testing.assert_allclose(a, A, rtol=1e-10, atol=1e-8)
    rng = np.random.default_rng(7)
    for i in (2, 17):
        ui = rng.normal(scale=200.0, size=2)
        ai = robot.forward_dynamics(sample(s, i), V[i], ui)
        np.testing.assert_allclose(robot.inverse_dynamics(sample(s, i), V[i], ai), ui, rtol=1e-10, atol=1e-8)


def test_task_space_matrices(robot, ik_10ms):
    """M_t (eq. 40) symmetric positive definite; M_t Vdot + C_t V + W_grav (eqs. 40-43, C_t
    assembled from Hdot, Fdot and the tree Coriolis matrices) reproduces J_IK^T u of eq. 45."""
    P, V, A, s = ik_10ms
    for i in (4, 15, 26):
        si = sample(s, i)
        M, C, Wg = robot.task_space_dynamics(si, V[i])
        np.testing.assert_allclose(M, M.T, atol=1e-12)
        assert np.all(np.linalg.eigvalsh(M) > 0)
        u = robot.inverse_dynamics(si, V[i], A[i])
        lhs = M @ A[i] + C @ V[i] + Wg
        np.testing.assert_allclose(lhs, si.J_IK.T @ u, rtol=1e-10, atol=1e-9 * np.abs(lhs).max())
        # the platform alone: P_p^T M_p P_p is the 2x2 block of its mass
        assert M[0, 0] > robot.M_p[3, 3]


def test_forward_kinematics_round_trip(robot, ik_10ms):
    P, V, A, s = ik_10ms
    for i in (0, 9, 23):
        C = robot.forward_kinematics(s.actuators[i])
        np.testing.assert_allclose(C, P[i], atol=1e-9)
    Cb = robot.forward_kinematics(s.actuators[:6])
    np.testing.assert_allclose(Cb, P[:6], atol=1e-9)


def test_input_singularity_path_condition_and_threshold():
    """Sec. 6.4.3: along the path near the input singularity kappa(F_(1)) grows by orders of
    magnitude (Fig. 20b) while the outer loop still needs few iterations (Fig. 21); a threshold
    below the peak turns the IK into a SingularityError naming the limb."""
    r = ParallelRobot(PATHS, options=SolverOptions(singularity_threshold=None))
    P, V, A = path(r, SINGULAR, 0.001, t_end=1 / 6)
    s = r.inverse_kinematics(P, V, A)
    k1 = s.condition[:, 0]
    assert k1.max() > 30 * k1[0]
    assert s.condition[:, 1].max() < 10                     # limb 2 stays well conditioned
    assert s.iterations[1:].max() <= 5
    assert s.residual.max() <= 1e-10
    peak = int(np.argmax(k1))
    assert abs(peak - len(P) // 2) < len(P) // 8              # at the apex of the path
    u = r.inverse_dynamics(s, V, A)
    assert np.abs(u).max() > 3 * np.abs(u[: len(P) // 4]).max()   # large torques near it (Fig. 20a)
    strict = ParallelRobot(PATHS, options=SolverOptions(singularity_threshold=0.5 * k1.max()))
    with pytest.raises(SingularityError, match=r"limb1.*kappa\(F\)"):
        strict.inverse_kinematics(P, V, A)
    # the printed amplitude leaves this reconstruction's workspace: a clear error, not an answer
    P2, _, _ = path(r, (0.15, 0.6085), 0.001, t_end=1 / 6)
    with pytest.raises((ConvergenceError, SingularityError), match="limb1"):
        ParallelRobot(PATHS).inverse_kinematics(P2)


def test_errors_name_the_culprit(robot):
    with pytest.raises(StateError, match="4x4"):
        robot.inverse_kinematics(np.eye(3))
    with pytest.raises(StateError, match="twist"):
        robot.inverse_kinematics(robot.reference_pose, twist=[1.0, 2.0, 3.0])
    with pytest.raises(StateError, match="actuator"):
        robot.forward_dynamics(robot.reference_pose, [0.0, 0.0], [1.0])
    with pytest.raises(StateError, match="scheme"):
        robot.inverse_kinematics(robot.reference_pose, scheme="newton")
    with pytest.raises(ConvergenceError, match="out of reach"):
        robot.inverse_kinematics(robot.task_pose([0.0, 3.0]))
    with pytest.raises(DescriptionError, match="platform"):
        ParallelRobot(str(ROBOTS / "heavy_duty_4dof.urdf"))


def test_independent_coordinates_given_in_the_description(robot, ik_10ms):
    """``<constraint ... independent="...">`` fixes a loop's independent coordinates (here the
    U joint 4 angles instead of U joint 6); H changes, the task-space results do not."""
    text = Path(PATHS).read_text()
    text = text.replace('<constraint name="l1_j8" type="universal">',
                        '<constraint name="l1_j8" type="universal" independent="l1_j4_1 l1_j4_2">')
    other = ParallelRobot(text)
    limb = other.limbs[0]
    dist = limb.loops[1]
    assert [limb.joint_names[j] for j in dist.independent] == ["l1_j4_1", "l1_j4_2"]
    P, V, A, s = ik_10ms
    for i in (5, 19):
        s2 = other.inverse_kinematics(P[i], V[i], A[i], initial=sample(s, i))
        np.testing.assert_allclose(s2.q, s.q[i], atol=1e-9)
        np.testing.assert_allclose(other.inverse_dynamics(s2, V[i], A[i]),
                                   robot.inverse_dynamics(sample(s, i), V[i], A[i]), rtol=1e-9)
    bad = text.replace('independent="l1_j4_1 l1_j4_2"', 'independent="nope"')
    with pytest.raises(DescriptionError, match="nope"):
        ParallelRobot(bad)


@pytest.mark.parametrize("compiled", [True, False])
def test_reference_motion_is_the_ik_then_the_id_along_a_stream(compiled):
    """``reference_motion`` (the node's feedforward, one compiled call) gives the numbers of
    ``inverse_kinematics`` then ``inverse_dynamics``, each reference starting from the previous
    one (a cold start first), on the kernel's path and on the numpy reference route; a pose off
    the task manifold is refused with the IK's error."""
    robot = ParallelRobot(PATHS)
    robot.compiled = compiled
    P, V, A = path(robot, PARABOLIC, 0.01, t_end=0.1)
    previous = warm = None
    for i in range(len(P)):
        motion = robot.reference_motion(P[i], V[i], A[i], warm)
        sol = robot.inverse_kinematics(P[i], V[i], A[i], initial=previous)
        u = robot.inverse_dynamics(sol, V[i], A[i])
        np.testing.assert_array_equal(motion.actuators, sol.actuators)
        np.testing.assert_array_equal(motion.actuators_d, sol.actuators_d)
        np.testing.assert_array_equal(motion.actuators_dd, sol.actuators_dd)
        np.testing.assert_array_equal(motion.u, u)
        assert motion.condition == np.max(sol.condition)
        np.testing.assert_array_equal(motion.tree_q(), sol.q)
        previous, warm = sol, motion.theta
    off = P[3].copy()
    off[1, 3] += 0.01                                  # the IRSBot-2's platform stays in its plane
    with pytest.raises(StateError, match="task manifold"):
        robot.inverse_kinematics(off, V[3], A[3], initial=previous)
    with pytest.raises(StateError, match="task manifold"):
        robot.reference_motion(off, V[3], A[3], warm)


@pytest.mark.parametrize("compiled", [True, False])
def test_a_start_solution_is_read_not_written(compiled):
    """The IK from a previous solution starts from its joints without copying them: neither the
    kernel's path nor the reference route of a far pose (the continuation) writes into the start,
    whose numbers stay those of an untouched copy; the ID's ``u`` of a solution is the caller's."""
    robot = ParallelRobot(PATHS)
    robot.compiled = compiled
    P, V, A = path(robot, PARABOLIC, 0.01)
    start = robot.inverse_kinematics(P[0], V[0], A[0])
    flat, thetas = start.flat.copy(), [t.copy() for t in start.limb_theta]
    for k in (1, 10):                                  # next sample; a far pose (the continuation)
        sol = robot.inverse_kinematics(P[k], V[k], A[k], initial=start)
        np.testing.assert_array_equal(start.flat, flat)
        for t, t0 in zip(start.limb_theta, thetas):
            np.testing.assert_array_equal(t, t0)
        again = robot.inverse_kinematics(P[k], V[k], A[k], initial=robot.inverse_kinematics(P[0], V[0], A[0]))
        np.testing.assert_array_equal(sol.q, again.q)
        np.testing.assert_array_equal(sol.qdd, again.qdd)
    u = robot.inverse_dynamics(sol, V[k], A[k])
    u[:] = 0.0
    expected = robot.inverse_dynamics(again, V[k], A[k])
    assert np.abs(expected).max() > 0
    np.testing.assert_array_equal(robot.inverse_dynamics(sol, V[k], A[k]), expected)
