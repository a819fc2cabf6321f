"""Re-selection of a loop's independent coordinates near the singularity of its partition
(paper 001 Remarks 2-3; core/limb/loop_partition.py) on the test robot of ``fourbar_3rrr.py``: the
planar 3RRR with a passive 4-bar as limb 1's elbow.  The 4-bar's coordinates chosen at the zero
configuration (independent: the rocker ``limb1_b3``) are singular where the rocker reaches its
extremum, which the platform reaches moving along +y (near y = 0.1327 m), while the loop's
Jacobian ``G`` keeps full rank there.  Before the re-selection the IK refused every pose on
that side (Algorithm 2 found no loop closure for a rocker angle beyond its extremum, or
``kappa(G_y)`` beyond the threshold); now they are served, and the tree motion, the inverse and
the forward dynamics agree with the independent route of ``pinocchio_loops.py`` (its own loop
closure and KKT dynamics in Pinocchio)."""
import numpy as np
import pytest

from fourbar_3rrr import fourbar_3rrr_urdf
from pinocchio_loops import PinocchioLoops
from pkm_dynamics.core.limb.limb_kinematics import limb_state
from pkm_dynamics.core.limb.loop_partition import best_partition, resolution_condition
from pkm_dynamics.core.robot import load_robot

#: platform positions along +y (m): at the load-time partition's singularity (kappa(G_y) ~ 3e9
#: there: found by maximizing it along the line) and beyond it
Y_SINGULAR = 0.1327030806319513
POSES_Y = (Y_SINGULAR, 0.14, 0.155)


@pytest.fixture(scope="module")
def pair():
    text = fourbar_3rrr_urdf()
    robot = load_robot(text)
    return robot, PinocchioLoops(text, robot.tree_joints, robot.tree.gravity)


def _rel(a, ref):
    return np.abs(np.asarray(a) - ref).max() / max(np.abs(ref).max(), 1.0)


def test_the_load_time_partition_is_singular_where_the_loop_is_not(pair):
    """The test robot does what it is for: at the pose on the partition's singularity (closed by
    the independent route) ``G_y`` of the load-time partition is singular to round-off, ``G``
    has full rank and the best partition's ``kappa(G_y)`` is small."""
    robot, ref = pair
    limb = robot.limbs[0]
    (lp,) = limb.loops
    assert [limb.joint_names[j] for j in lp.independent] == ["limb1_b3"]
    q = ref.close(robot.task_pose(np.array([0.0, Y_SINGULAR, 0.0])), np.zeros(3), np.zeros(3))[0]
    theta = q[np.maximum(limb.whole_index, 0)]
    G = limb_state(limb, theta)[2][0][1]
    assert resolution_condition(G[lp.rows][:, lp.dependent]) > 1e8
    s = np.linalg.svd(G[lp.rows][:, lp.joints], compute_uv=False)
    assert s[-1] > 0.1 * s[0]
    new, k = best_partition(lp, G)
    assert k < 10 and [limb.joint_names[j] for j in new.independent] != ["limb1_b3"]


@pytest.mark.parametrize("y", POSES_Y)
@pytest.mark.parametrize("scheme", ["nested", "compound"])
def test_poses_past_the_partition_singularity_are_served_and_agree_with_the_kkt(pair, y, scheme):
    """The numpy route: IK (both schemes, from the reference configuration), tree motion, eq. 45
    and eq. 39 at a pose where the load-time partition is singular or beyond, against the
    independent route."""
    text = fourbar_3rrr_urdf()
    robot, ref = load_robot(text), pair[1]
    robot.compiled = False
    rng = np.random.default_rng(24)
    pose = robot.task_pose(np.array([0.0, y, 0.0]))
    V, A = rng.uniform(-0.2, 0.2, 3), rng.uniform(-1.0, 1.0, 3)
    q, qd, qdd = ref.close(pose, V, A)
    s = robot.inverse_kinematics(pose, V, A, scheme=scheme)
    for got, want, what in zip((s.q, s.qd, s.qdd), (q, qd, qdd), ("q", "qd", "qdd")):
        assert _rel(got, want) < 1e-9, (what, got, want)
    u_ref, _ = ref.inverse_dynamics(q, qd, qdd)
    u = robot.inverse_dynamics(s, V, A)
    assert _rel(u, u_ref) < 1e-8, (u, u_ref)
    f = u + rng.normal(scale=5.0, size=len(u))
    a_ref = ref.task_acceleration(q, qd, ref.forward_dynamics(q, qd, f)[0])
    assert _rel(robot.forward_dynamics(s, V, f), a_ref) < 1e-8
    M, C, Wg = robot.task_space_dynamics(pose, V, initial=s)
    assert _rel(M @ A + C @ V + Wg, u @ s.J_IK) < 1e-8


@pytest.mark.parametrize("y", POSES_Y)
def test_the_compiled_route_hands_the_limb_over_and_serves_the_pose(pair, y):
    """The production path (kernels): the limb kernel stops on limb 1 (no loop closure, or
    ``kappa(G_y)`` of the tables' partition beyond the threshold) and the reference route with
    the re-selection serves it; configuration and rates against the independent route."""
    robot, ref = pair
    rng = np.random.default_rng(24)
    pose = robot.task_pose(np.array([0.0, y, 0.0]))
    V = rng.uniform(-0.2, 0.2, 3)
    q, qd, _ = ref.close(pose, V, np.zeros(3))
    s = robot.inverse_kinematics(pose, V)
    assert _rel(s.q, q) < 1e-9 and _rel(s.qd, qd) < 1e-9, (s.q, q, s.qd, qd)


@pytest.mark.parametrize("y", (0.0,) + POSES_Y)
def test_compiled_accelerations_and_dynamics_of_the_test_robot(pair, y):
    """The kernels' tree accelerations, eq. 45 and eq. 39 against the independent route, at the
    reference pose and past the partition's singularity: the kernels' cut-joint acceleration
    bias had ``R_kr [w_r]x`` of ``Rdot_kr`` with the wrong sign (limb_dynamics_kernels.cut_bias),
    which the IRSBot-2's loops did not reveal."""
    robot, ref = pair
    rng = np.random.default_rng(24)
    pose = robot.task_pose(np.array([0.0, y, 0.0]))
    V, A = rng.uniform(-0.2, 0.2, 3), rng.uniform(-1.0, 1.0, 3)
    q, qd, qdd = ref.close(pose, V, A)
    s = robot.inverse_kinematics(pose, V, A)
    assert _rel(s.qdd, qdd) < 1e-9, (s.qdd, qdd)
    u_ref, _ = ref.inverse_dynamics(q, qd, qdd)
    u = robot.inverse_dynamics(pose, V, A)
    assert _rel(u, u_ref) < 1e-8, (u, u_ref)
    f = u + rng.normal(scale=5.0, size=len(u))
    a_ref = ref.task_acceleration(q, qd, ref.forward_dynamics(q, qd, f)[0])
    assert _rel(robot.forward_dynamics(pose, V, f), a_ref) < 1e-8


def test_the_kernels_condition_bound_refuses_nearly_singular_matrices():
    """``small_linalg.condition_at_most`` (the kernels' check of ``kappa(G_y)`` and ``kappa(F)``)
    against ``numpy.linalg.cond`` on nearly singular 2x2 matrices (kappa 1e6 to 1e12): the bound
    ``kappa^2 <= tr(G) tr(G^-1)`` took a Gram matrix inverse that is round-off (a negative trace)
    for a proof of good conditioning, so a loop at its partition's singularity passed the check."""
    from pkm_dynamics.core.spatial.small_linalg import condition_at_most
    rng = np.random.default_rng(6)
    W = np.zeros((4, 2))
    for _ in range(500):
        B = np.outer(rng.normal(size=2), rng.normal(size=2))
        B += 10 ** rng.uniform(-12, -6) * np.outer(rng.normal(size=2), rng.normal(size=2))
        assert condition_at_most(B.copy(), 2, 2, W, 1e4) == (np.linalg.cond(B) <= 1e4), B
