"""Kinematic fidelity of the PKM inverse kinematics (issue 10): the IK state (q, qd, qdd of every
tree joint) against the whole spanning tree -- its forward kinematics
(:func:`~pkm_dynamics.core.tree_dynamics.kinematics`, the platform's pose, twist and acceleration)
and its cut-joint constraints (:class:`~pkm_dynamics.core.cut_joints.LoopConstraints`, closure at
position, velocity and acceleration level; rows the limbs share through
``cut_joint_geometry``, checked against Pinocchio in test_core_independent_kkt.py, which also
compares the IK state with its own loop closure) -- at random reachable states of every parallel example
robot, for both IK schemes; the loop-conditioning monitor; working modes and joint limits."""
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core.tree.cut_joints import LoopConstraints
from pkm_dynamics.core.errors import SingularityError, StateError
from pkm_dynamics.core.limb.ik_refinement import loop_conditions
from pkm_dynamics.core.limb.limb_kinematics import limb_state
from pkm_dynamics.core.pkm.parallel_robot import ParallelRobot, sample
from pkm_dynamics.core.interface import SolverOptions
from pkm_dynamics.core.spatial.se3 import Ad_inv, log_se3, pose_inv
from pkm_dynamics.core.tree.tree_dynamics import kinematics
from working_modes import other_working_mode

ROBOTS = Path(__file__).resolve().parents[3] / "robots"
#: example PKM and the size of the random task displacements from the reference pose (m, rad)
EXAMPLES = {"irsbot2": 0.22, "irsbot2_paths": 0.22, "gough_stewart_6ups": 0.06, "planar_3rrr": 0.2}
#: the states of the property check: loop and actuation condition at most this
CONDITION = 1e3


def state_errors(robot, sol, pose, V, A):
    """Relative errors of an IK state against the whole tree: ``(closure g, G qd, G qdd + Gdot
    qd, platform pose, twist, acceleration)``; velocities relative to ``max(|V_t|, |qd|)``,
    accelerations to ``max(|Vdot_t|, |qdd|, |qd|^2)`` (all six twist components)."""
    tree = robot.tree
    body, off = tree.frame(robot.description.platform.link)
    off = off @ robot.description.platform.origin
    _, C, Vb, Ab = kinematics(tree, sol.q, sol.qd, sol.qdd)
    X = Ad_inv(off)
    g, G, bias = LoopConstraints(robot.description).evaluate(sol.q, sol.qd)
    sv = max(np.abs(V).max(), np.abs(sol.qd).max(), 1e-300)
    sa = max(np.abs(A).max(), np.abs(sol.qdd).max(), np.abs(sol.qd).max() ** 2, 1e-300)
    return np.array([np.abs(g).max(), np.abs(G @ sol.qd).max() / sv, np.abs(G @ sol.qdd + bias).max() / sa,
                     np.abs(log_se3(pose_inv(C[body] @ off) @ pose)).max(),
                     np.abs(X @ Vb[body] - robot.P_p @ V).max() / sv,
                     np.abs(X @ Ab[body] - robot.P_p @ A).max() / sa])


def worst_loop_condition(robot, sol):
    return max([loop_conditions(limb, limb_state(limb, th)).max(initial=1.0)
                for limb, th in zip(robot.limbs, sol.limb_theta)])


@pytest.fixture(scope="module")
def irsbot2():
    return ParallelRobot(str(ROBOTS / "irsbot2.urdf"))


def walk(robot, x, n=40, scheme="nested"):
    """IK along the straight task path from the reference to ``x`` (the last solution)."""
    s = robot.inverse_kinematics(robot.task_pose(np.linspace(0, 1, n)[:, None] * np.asarray(x)), scheme=scheme)
    return sample(s, n - 1)


# -- defect 1: exact rates and accelerations near IRSBot-2's ill-conditioned distal loop ---------

def test_rates_and_accelerations_exact_near_the_ill_conditioned_loop(irsbot2):
    """Near task coordinates (0.07, 0.30) limb 1's 4U loop has kappa(G_y) of tens to ~700.
    The IK's rates and accelerations must be exact for the returned configuration (both schemes):
    whole-tree closure and the platform's twist and acceleration (it cannot rotate) to 1e-12
    relative, and the parallelogram identity (l2_j1 and l2_j3 accelerations equal).  Solved
    through the partition G_y, L_t alone they were off by 1e-11 to 1.4e-9 here."""
    start = walk(irsbot2, [0.068, 0.29])
    rng = np.random.default_rng(3)
    kappas = []
    for x in ([0.064, 0.284], [0.072, 0.277], [0.056, 0.291], [0.06, 0.284], [0.056, 0.277]):
        V, A = rng.normal(size=2) * 0.3, rng.normal(size=2)
        pose = irsbot2.task_pose(x)
        for scheme in ("nested", "compound"):
            s = irsbot2.inverse_kinematics(pose, V, A, initial=start, scheme=scheme)
            kappas.append(worst_loop_condition(irsbot2, s))
            e = state_errors(irsbot2, s, pose, V, A)
            assert e.max() <= 1e-12, (x, scheme, kappas[-1], e)
            i1, i3 = irsbot2.tree.joint_index("l2_j1"), irsbot2.tree.joint_index("l2_j3")
            assert abs(s.qdd[i1] - s.qdd[i3]) <= 1e-12 * np.abs(s.qdd).max()
    assert max(kappas) > 500 and min(kappas) > 30


def test_loop_singularity_threshold_names_limb_and_loop(irsbot2):
    start = walk(irsbot2, [0.068, 0.29])
    pose = irsbot2.task_pose([0.066, 0.285])
    k = worst_loop_condition(irsbot2, irsbot2.inverse_kinematics(pose, initial=start))
    strict = ParallelRobot(irsbot2.description, options=SolverOptions(loop_singularity_threshold=0.5 * k))
    with pytest.raises(SingularityError, match=r"limb1 loop l1_j\d.*kappa\(G_y\)"):
        strict.inverse_kinematics(pose, initial=start)
    lenient = ParallelRobot(irsbot2.description, options=SolverOptions(loop_singularity_threshold=2 * k))
    lenient.inverse_kinematics(pose, initial=start)


# -- defect 2: working mode of the start, joint limits ---------------------------------------------

def test_both_schemes_stay_on_the_working_mode_of_the_start(irsbot2):
    """From the reference configuration to a far pose both schemes return the configuration the
    robot reaches by moving there (a 60-sample trajectory, each sample from the previous one:
    the independent path), within the joint limits; from a previous solution (a seed) likewise."""
    tree = irsbot2.tree
    for x in ([0.236, 0.326], [-0.197, 0.248]):
        moved = walk(irsbot2, x, n=60)
        for scheme in ("nested", "compound"):
            s = irsbot2.inverse_kinematics(irsbot2.task_pose(x), scheme=scheme)
            np.testing.assert_allclose(s.q, moved.q, atol=1e-9)
            assert np.all((s.q >= tree.lower) & (s.q <= tree.upper))
    seed = walk(irsbot2, [0.1, 0.2])
    moved = irsbot2.inverse_kinematics(irsbot2.task_pose(np.linspace([0.1, 0.2], [-0.1, 0.25], 30)), initial=seed)
    for scheme in ("nested", "compound"):
        s = irsbot2.inverse_kinematics(irsbot2.task_pose([-0.1, 0.25]), initial=seed, scheme=scheme)
        np.testing.assert_allclose(s.q, sample(moved, 29).q, atol=1e-9)


def test_revolute_angles_are_wrapped_into_their_limits(irsbot2):
    """A seed whose angles are shifted by 2 pi (the same configuration) gives the solution within
    the limits [-3.14159, 3.14159]: the angles nearest the seed that the limits allow."""
    pose = irsbot2.task_pose([0.05, 0.1])
    ref = irsbot2.inverse_kinematics(pose)
    rev = np.array([t != "prismatic" for t in irsbot2.tree.joint_types])
    shifted = ref.q + 2 * np.pi * rev
    s = irsbot2.inverse_kinematics(pose, initial=shifted)
    np.testing.assert_allclose(s.q, ref.q, atol=1e-9)


def test_pose_beyond_the_joint_limits_is_refused_naming_the_joint():
    """gough_stewart_6ups at platform z = 2.0 (legs would be metres long, stroke +-0.08 m)."""
    r = ParallelRobot(str(ROBOTS / "gough_stewart_6ups.urdf"))
    P = np.eye(4)
    P[2, 3] = 2.0
    with pytest.raises(StateError, match=r"joint 'leg\d_\w+' \(limb\d\) would be at .* outside its limits"):
        r.inverse_kinematics(P)
    tree = r.tree
    s = r.inverse_kinematics(r.task_pose([0.02, -0.03, 0.05, 0.01, -0.02, 0.03]))
    assert np.all((s.q >= tree.lower) & (s.q <= tree.upper))



def test_a_seed_picks_the_working_mode():
    """planar_3rrr (each limb elbow up or down): a start near another working mode's
    configuration returns that configuration, for both schemes, and a trajectory from it stays
    there (against the solution reached by moving there in small steps)."""
    r = ParallelRobot(str(ROBOTS / "planar_3rrr.urdf"))
    pose = r.task_pose([0.02, -0.01, 0.1])
    other, default = other_working_mode(r, pose)
    seed = other.q + np.random.default_rng(1).uniform(-0.05, 0.05, r.tree.nq)
    for scheme in ("nested", "compound"):
        np.testing.assert_allclose(r.inverse_kinematics(pose, initial=seed, scheme=scheme).q, other.q, atol=1e-9)
    target = r.task_pose([0.05, 0.01, 0.0])
    moved = r.inverse_kinematics(r.task_pose(np.linspace([0.02, -0.01, 0.1], [0.05, 0.01, 0.0], 20)),
                                 initial=other)
    s = r.inverse_kinematics(target, initial=other, scheme="compound")
    np.testing.assert_allclose(s.q, sample(moved, 19).q, atol=1e-9)
    assert np.abs(s.actuators - r.inverse_kinematics(target).actuators).max() > 0.5

# -- defect 3: refusals of the dynamics --------------------------------------------------------------

@pytest.fixture(scope="module")
def gough():
    return ParallelRobot(str(ROBOTS / "gough_stewart_6ups.urdf"), options=SolverOptions(singularity_threshold=1e6))


def test_dynamics_in_the_base_plane_are_refused(gough):
    """Platform in the base plane (z = 0): the legs lie flat; ID and HOID used to return 1e13-1e16."""
    z = np.zeros(6)
    with pytest.raises(StateError, match=r"joint 'leg\d_\w+' .* outside its limits"):
        gough.inverse_dynamics(np.eye(4), z, z)
    with pytest.raises(StateError, match=r"joint 'leg\d_\w+' .* outside its limits"):
        gough.higher_order_inverse_dynamics(np.eye(4), z, z, z, z)
    with pytest.raises(StateError, match=r"joint 'leg\d_\w+' .* outside its limits"):
        gough.forward_dynamics(np.eye(4), z, z)


def test_output_singularity_is_refused_naming_the_limbs(gough):
    """``kappa(J_IK)`` beyond the threshold: SingularityError naming limbs, for ID, FD and HOID;
    below it the same state is served (threshold between the limbs' kappa(F) and kappa(J_IK))."""
    pose = gough.task_pose([0.02, -0.03, 0.05, 0.01, -0.02, 0.03])
    s = gough.inverse_kinematics(pose)
    kJ = np.linalg.cond(s.J_IK)
    assert s.condition.max() < 0.5 * kJ
    strict = ParallelRobot(gough.description, options=SolverOptions(singularity_threshold=0.9 * kJ))
    z = np.zeros(6)
    for call in (lambda: strict.inverse_dynamics(pose, z, z), lambda: strict.forward_dynamics(pose, z, z),
                 lambda: strict.higher_order_inverse_dynamics(pose, z, z, z, z)):
        with pytest.raises(SingularityError, match=r"limb\d.*kappa\(J_IK\).*output singularity"):
            call()
    strict.inverse_kinematics(pose)                  # the IK itself is fine there
    assert np.isfinite(gough.inverse_dynamics(pose, z, z)).all()


def test_pose_off_the_task_manifold_says_so():
    """planar_3rrr: the platform moves in its plane only; z + 0.05 is not a solvable request."""
    r = ParallelRobot(str(ROBOTS / "planar_3rrr.urdf"))
    P = r.reference_pose.copy()
    P[2, 3] += 0.05
    with pytest.raises(StateError, match=r"off the task manifold.*\(vx, vy, wz\).*vz 0.05"):
        r.inverse_kinematics(P)
    r.inverse_kinematics(r.task_pose([0.02, -0.01, 0.1]))


# -- done when: random reachable states of every example PKM, both schemes --------------------------

@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_ik_state_is_exact_at_random_reachable_states(name):
    """Random task displacements from the reference pose (the IK starts from the reference
    configuration), random task twist and acceleration; at the states with loop and actuation
    condition <= 1e3: whole-tree closure at position, velocity and acceleration level and the
    platform pose, twist and acceleration (all six components) to <= 1e-10 relative."""
    robot = ParallelRobot(str(ROBOTS / f"{name}.urdf"))
    rng = np.random.default_rng(11)
    size, checked = EXAMPLES[name], 0
    for _ in range(30):
        x = rng.uniform(-size, size, robot.dof)
        V, A = rng.normal(size=robot.dof) * 0.3, rng.normal(size=robot.dof)
        pose = robot.task_pose(x)
        for scheme in ("nested", "compound"):
            try:
                s = robot.inverse_kinematics(pose, V, A, scheme=scheme)
            except StateError:          # unreachable or beyond the limits: refused, not garbage
                continue
            if max(worst_loop_condition(robot, s), np.linalg.cond(s.J_IK)) > CONDITION:
                continue
            e = state_errors(robot, s, pose, V, A)
            assert e.max() <= 1e-10, (name, scheme, x, e)
            checked += 1
    assert checked >= 20


@pytest.mark.parametrize("scheme", ["nested", "compound"])
def test_ik_state_is_exact_along_the_input_singularity_path(scheme):
    """Paper 001 Sec. 6.4.3's path towards the input singularity of IRSBot-2 (irsbot2_paths):
    kappa(F) reaches ~100 and kappa(G_y) ~700 on these samples (3e3 at the apex); every sample of
    the IK trajectory is exact to 1e-10 relative (through the partition alone: up to 9e-9)."""
    from pkm_dynamics.core.pkm.parallel_robot import parabolic_trajectory
    robot = ParallelRobot(str(ROBOTS / "irsbot2_paths.urdf"), options=SolverOptions(singularity_threshold=None))
    P, V, A = parabolic_trajectory(np.arange(0, 1 / 6, 0.002), robot.reference_pose, 0.15, 0.6075)
    s = robot.inverse_kinematics(P, V, A, scheme=scheme)
    kappa = [worst_loop_condition(robot, sample(s, i)) for i in range(len(P))]
    assert max(kappa) > 500
    for i in range(len(P)):
        e = state_errors(robot, sample(s, i), P[i], V[i], A[i])
        assert e.max() <= 1e-10, (i, kappa[i], e)


def test_inverse_dynamics_near_the_ill_conditioned_loop_equals_kkt(irsbot2):
    """Eq. 45 at the IK states near limb 1's ill-conditioned loop against the constrained (KKT)
    inverse dynamics of the whole spanning tree at the same (q, qd, qdd), for both schemes."""
    from pkm_dynamics.core.tree.constrained import kkt_inverse_dynamics
    desc = irsbot2.description
    act = [desc.tree.joint_index(n) for n in desc.actuated_joints]
    start = walk(irsbot2, [0.068, 0.29])
    rng = np.random.default_rng(5)
    for x in ([0.064, 0.284], [0.072, 0.277], [0.056, 0.291]):
        V, A = rng.normal(size=2) * 0.3, rng.normal(size=2)
        for scheme in ("nested", "compound"):
            s = irsbot2.inverse_kinematics(irsbot2.task_pose(x), V, A, initial=start, scheme=scheme)
            u = irsbot2.inverse_dynamics(s, V, A)
            ref = kkt_inverse_dynamics(desc, s.q, s.qd, s.qdd, act)
            np.testing.assert_allclose(u, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
