"""Compiled limb kernels (core/limb/limb_*kernels.py, core/pkm/limb_tables.py) against the numpy reference route of
core/limb/limb_ik.py, working_mode.py and ik_refinement.py (ParallelRobot._limb_ik_reference), and
against the whole spanning tree (its forward kinematics and cut-joint constraints,
core/tree/cut_joints.py): seeded random paths of every parallel example robot, both IK schemes,
iteration counts, the hand-over of every refusal to the reference route, and the small dense
solvers against LAPACK.

What the routes share, so what these tests cannot see: the kernels read their tables
(``limb_tables._limb_model``) from the numpy ``Limb`` the reference route runs on: the screws
and joint placements of ``limb.kin``, the cut-joint vectors of ``cut_joints.cut_joint_geometry``
(``u_pos``, ``u_a``, ``u_b``, ``d_k``, ``d_r``), the loops' dependent / independent joints, the
platform offset and ``D_t``; they compile the scalar formulas of core/spatial/scalar_forms.py
(``so3_coefficients``, ``exp_se3_rows``, ...) from their one definition; and the whole-tree
comparison here uses the same cut-joint rows (core/tree/cut_joints.py).  Those shared pieces are
checked against routes that share no code with them: the spatial formulas against Pinocchio and
extended precision (test_core_spatial_accuracy.py), the cut-joint rows of every type and the
robots' IK, FD and ID against Pinocchio frame algebra with the loops closed by their own Newton
iteration (test_core_independent_kkt.py)."""
import os
import threading

import numpy as np
import pytest

from pkm_dynamics.core.spatial import small_linalg as LA
from pkm_dynamics.core.status import FAR_STEP, OK
from pkm_dynamics.core.pkm.limb_tables import compiled_ik, compiled_rates
from pkm_dynamics.core.tree.cut_joints import LoopConstraints
from pkm_dynamics.core.errors import ConvergenceError, SingularityError, StateError
from pkm_dynamics.core.interface import SolverOptions
from pkm_dynamics.core.limb.ik_refinement import limb_rates
from pkm_dynamics.core.limb.limb_ik import limb_jacobians
from pkm_dynamics.core.pkm.parallel_robot import ParallelRobot
from pkm_dynamics.core.spatial.se3 import log_se3, pose_inv
from pkm_dynamics.core.tree.tree_dynamics import crba, forward_kinematics, rnea

ROBOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "robots")
#: example PKM and the size of the random task displacements from the reference pose (m, rad)
EXAMPLES = {"irsbot2": 0.2, "irsbot2_paths": 0.2, "gough_stewart_6ups": 0.05, "planar_3rrr": 0.15}


@pytest.fixture(scope="module", params=sorted(EXAMPLES))
def robot(request):
    r = ParallelRobot(os.path.join(ROBOTS, request.param + ".urdf"))
    r.scale = EXAMPLES[request.param]
    return r


def _path(robot, rng, n=12):
    """A random smooth task path from the reference pose (n poses)."""
    x = np.cumsum(rng.normal(scale=robot.scale / n, size=(n, robot.dof)), axis=0)
    return robot.task_pose(x)


def _rel(a, b):
    return float(np.abs(np.asarray(a) - b).max() / max(1.0, np.abs(b).max()))


@pytest.mark.parametrize("scheme", ["nested", "compound"])
def test_limb_kernels_match_the_reference_route(robot, scheme):
    """Per limb along a warm-started path: theta to 1e-12 relative, the same outer and inner
    iteration counts, H, J_p, L_t, F, K and the loop residuals to 1e-10, kappa(F) to 1e-9."""
    rng = np.random.default_rng(7)
    T = robot._limb_tables
    thetas = [np.zeros(limb.n) for limb in robot.limbs]
    for pose in _path(robot, rng):
        r = compiled_ik(T, pose, np.concatenate(thetas), scheme == "nested", robot.tol,
                        robot.singularity_threshold, robot.loop_singularity_threshold)
        assert (r.status == OK).all(), r.status
        got = T.split(r.theta)
        for li, limb in enumerate(robot.limbs):
            th, outer, inner, jac, state, k = robot._limb_ik_reference(limb, pose, thetas[li], scheme, robot.tol)
            assert _rel(got[li], th) <= 1e-12
            assert r.out[li, 0] == outer
            if scheme == "nested":
                assert [list(a) for a in T.inner(li, r.inner, outer)] == [list(a) for a in inner]
            st, views = T.state(li, r.fd)
            for name, v in zip(("H", "J_p", "L_t", "F", "K"), views):
                assert _rel(v, getattr(jac, name)) <= 1e-10, name
            assert abs(r.out[li, 1] - k) <= 1e-9 * k
            for (g1, G1, _), (g2, G2, _) in zip(st[2], state[2]):
                assert np.abs(g1 - g2).max(initial=0.0) <= 1e-13 and _rel(G1, G2) <= 1e-10
            np.testing.assert_allclose(st[0], state[0], rtol=0, atol=1e-12)
            thetas[li] = got[li].copy()


def test_rates_and_limb_forces_match_the_reference_route(robot):
    """Rates, accelerations (eqs. 27-29, refined) and the limbs' share of eq. 45 from the
    kernels against ik_refinement.limb_rates and the tree RNEA, to 1e-12 relative, also for
    solutions the scratch no longer holds."""
    rng = np.random.default_rng(9)
    T = robot._limb_tables
    sols = []
    for pose in _path(robot, rng, 6):
        sols.append(robot.inverse_kinematics(pose, initial=sols[-1] if sols else None))
    for sol in sols[::-1]:                       # older solutions: the state is recomputed
        V, A = rng.normal(size=robot.dof), rng.normal(size=robot.dof)
        thd, thdd, W, status = compiled_rates(T, np.concatenate(sol.limb_theta), V, A, robot.P_p)
        assert (status == OK).all()
        W_ref = np.zeros(robot.dof)
        for li, limb in enumerate(robot.limbs):
            th = sol.limb_theta[li]
            jac = limb_jacobians(limb, th)
            d, dd = limb_rates(limb, th, V, A, robot.P_p, jac)
            assert _rel(T.split(thd)[li], d) <= 1e-12 and _rel(T.split(thdd)[li], dd) <= 1e-12
            W_ref += jac.K.T @ rnea(limb.tree, th, d, dd)
        assert _rel(W, W_ref) <= 1e-12


def test_ik_state_against_the_whole_spanning_tree(robot):
    """The IK (compiled route) along a path: every cut joint of the description closed to
    1e-12 and the spanning tree's platform frame at the requested pose to 1e-12 (the tree's own
    forward kinematics, :mod:`..cut_joints`)."""
    rng = np.random.default_rng(11)
    tree = robot.tree
    body, off = tree.frame(robot.description.platform.link)
    off = off @ robot.description.platform.origin
    loops = LoopConstraints(robot.description)
    sol = None
    for pose in _path(robot, rng):
        sol = robot.inverse_kinematics(pose, initial=sol)
        assert np.abs(loops.residual(sol.q)).max(initial=0.0) <= 1e-12
        C = forward_kinematics(tree, sol.q)[body] @ off
        assert np.abs(log_se3(pose_inv(C) @ pose)).max() <= 1e-12


def test_refusals_go_through_the_reference_route(robot):
    """A pose out of reach: the kernel reports a status (None) and the robot raises what the
    reference route raises, with its message."""
    far = robot.reference_pose.copy()
    far[2, 3] += 5.0
    T = robot._limb_tables
    r = compiled_ik(T, far, np.zeros(T.n), True, robot.tol, robot.singularity_threshold,
                    robot.loop_singularity_threshold)
    assert (r.status != OK).all()
    if robot.dof < 6:                    # off the task manifold: refused before any limb
        return
    with pytest.raises((ConvergenceError, StateError)) as got:
        robot.inverse_kinematics(far)
    with pytest.raises(type(got.value)) as ref:
        robot._limb_ik_reference(robot.limbs[0], far, np.zeros(robot.limbs[0].n), "nested", robot.tol)
    assert str(ref.value) == str(got.value)


def test_kappa_threshold_is_decided_as_by_the_reference_route():
    """Square limbs with an orthogonal D_t (Gough-Stewart: D_t = I) check kappa(F) in each
    Newton step by the bound |F|_F |L_t|_F first. From the solution A of one pose to a pose B
    where a limb's kappa(F) is smaller, a threshold between the two is exceeded at the start:
    the compiled IK refuses that limb and the robot raises the reference route's
    SingularityError (the bound never accepts what kappa(F) refuses); a threshold above both
    is accepted by both."""
    path = os.path.join(ROBOTS, "gough_stewart_6ups.urdf")
    probe = ParallelRobot(path)
    probe.scale = EXAMPLES["gough_stewart_6ups"]
    A, B = _path(probe, np.random.default_rng(11), n=4)[2:]
    sol_a, sol_b = probe.inverse_kinematics(A), probe.inverse_kinematics(B)
    k_a, k_b = np.asarray(sol_a.condition), np.asarray(sol_b.condition)
    if (k_a / k_b).max() < 1.0:                              # from the worse-conditioned pose
        A, B, sol_a, sol_b, k_a, k_b = B, A, sol_b, sol_a, k_b, k_a
    l = int(np.argmax(k_a / k_b))
    assert k_a[l] > k_b[l] * (1 + 1e-6)
    D = probe.limbs[l].D_t                                   # the limb takes the bound
    assert D.shape == (6, 6) and np.array_equal(D.T @ D, np.eye(6))
    for threshold, refused in ((np.sqrt(k_a[l] * k_b[l]), True), (1.01 * max(k_a.max(), k_b.max()), False)):
        robot = ParallelRobot(path, options=SolverOptions(singularity_threshold=threshold))
        r = compiled_ik(robot._limb_tables, B, sol_a.flat, True, robot.tol, threshold,
                        robot.loop_singularity_threshold)
        assert (r.status[l] != OK) == refused
        limb, th0 = robot.limbs[l], sol_a.limb_theta[l]
        if refused:
            with pytest.raises(SingularityError):
                robot._limb_ik_reference(limb, B, th0, "nested", robot.tol)
            with pytest.raises(SingularityError):
                robot.inverse_kinematics(B, initial=sol_a)
        else:
            sol = robot.inverse_kinematics(B, initial=sol_a)
            assert _rel(sol.limb_theta[l], robot._limb_ik_reference(limb, B, th0, "nested", robot.tol)[0]) <= 1e-12


def test_a_far_start_takes_the_continuation_of_the_reference_route():
    """A pose 0.36 m from the start on the IRSBot-2: the direct Newton solve moves a joint by more
    than 0.5 rad, the kernel hands it over (FAR_STEP) and the reference route's continuation
    gives the result."""
    robot = ParallelRobot(os.path.join(ROBOTS, "irsbot2_paths.urdf"))
    pose = robot.task_pose([0.2, 0.3])
    r = compiled_ik(robot._limb_tables, pose, np.zeros(robot._limb_tables.n), True, robot.tol,
                    robot.singularity_threshold, robot.loop_singularity_threshold)
    assert (r.status == FAR_STEP).all()
    sol = robot.inverse_kinematics(pose)
    for li, limb in enumerate(robot.limbs):
        th = robot._limb_ik_reference(limb, pose, np.zeros(limb.n), "nested", robot.tol)[0]
        assert _rel(sol.limb_theta[li], th) <= 1e-12


@pytest.mark.parametrize("scheme", ["nested", "compound"])
def test_one_call_reference_matches_the_reference_route(robot, scheme):
    """A feedforward reference in one kernel call (IK with rates warm-started along a path, the
    ID of that solution, robot_kernels.robot_reference) against the numpy reference route
    (``compiled = False``: limb_ik, ik_refinement, tree RNEA, numpy solve): q, qd, qdd, J_IK and
    u to 1e-10 relative; with a platform wrench and from a pose the same."""
    rng = np.random.default_rng(21)
    ref = ParallelRobot(robot.description)
    ref.compiled = False
    sol = sol_ref = None
    for pose in _path(robot, rng, 6):
        V, A, we = rng.normal(size=robot.dof), rng.normal(size=robot.dof), rng.normal(size=6)
        sol = robot.inverse_kinematics(pose, V, A, initial=sol, scheme=scheme)
        sol_ref = ref.inverse_kinematics(pose, V, A, initial=sol_ref, scheme=scheme)
        for name in ("q", "qd", "qdd", "J_IK"):
            assert _rel(getattr(sol, name), getattr(sol_ref, name)) <= 1e-10, name
        u_ref = ref.inverse_dynamics(sol_ref, V, A)
        assert _rel(robot.inverse_dynamics(sol, V, A), u_ref) <= 1e-10
        assert _rel(robot.inverse_dynamics(pose, V, A, initial=sol), u_ref) <= 1e-10
        u_ref = ref.inverse_dynamics(sol_ref, V, A, wrench=we)
        assert _rel(robot.inverse_dynamics(sol, V, A, wrench=we), u_ref) <= 1e-10
        assert _rel(robot.inverse_dynamics(sol, -V, A), ref.inverse_dynamics(sol_ref, -V, A)) <= 1e-10


@pytest.mark.parametrize("scheme", ["nested", "compound"])
def test_warm_start_from_the_scratch_is_the_cold_start(robot, scheme):
    """Along a path each reference starts from the previous one's joints, whose state and
    Jacobians the thread's scratch still holds (the kernel takes them for the first Newton step);
    the same reference after another pose cleared that (a cold start from the same joints):
    joints, rates, J_IK, kappa(F), iterations and u the same to 1e-12."""
    rng = np.random.default_rng(8)
    z = np.zeros(robot.dof)
    sol = None
    for pose in _path(robot, rng, 6):
        V, A = rng.normal(size=robot.dof), rng.normal(size=robot.dof)
        warm = robot.inverse_kinematics(pose, V, A, initial=sol, scheme=scheme)
        robot.inverse_kinematics(robot.reference_pose, z, z, scheme=scheme)     # another state in the scratch
        cold = robot.inverse_kinematics(pose, V, A, initial=sol, scheme=scheme)
        for name in ("q", "qd", "qdd", "J_IK", "condition"):
            assert _rel(getattr(warm, name), getattr(cold, name)) <= 1e-12, name
        np.testing.assert_array_equal(warm.iterations, cold.iterations)
        assert _rel(robot.inverse_dynamics(warm, V, A), robot.inverse_dynamics(cold, V, A)) <= 1e-12
        sol = warm


def test_per_thread_scratch():
    """Two threads solving different paths at once get the answers of one thread alone."""
    robot = ParallelRobot(os.path.join(ROBOTS, "gough_stewart_6ups.urdf"))
    rng = np.random.default_rng(5)
    robot.scale = 0.05
    paths = [_path(robot, rng, 30), _path(robot, rng, 30)]
    alone = [robot.inverse_kinematics(p).q for p in paths]
    got = [None, None]

    def run(i):
        got[i] = robot.inverse_kinematics(paths[i]).q

    ts = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for a, b in zip(got, alone):
        np.testing.assert_array_equal(a, b)


def test_small_dense_solvers_against_lapack():
    """LU solve, Jacobi condition number and Householder least squares against numpy/LAPACK on
    seeded random matrices (conditioned up to 1e8), and a singular matrix reported as such."""
    rng = np.random.default_rng(2)
    for m in range(1, 9):
        for _ in range(20):
            U, _, Vt = np.linalg.svd(rng.normal(size=(m, m)))
            s = np.logspace(0, -rng.uniform(0, 8), m)
            A = (U * s) @ Vt
            B = rng.normal(size=(m, 3))
            A1, B1 = np.zeros((10, 10)), np.zeros((10, 10))
            A1[:m, :m], B1[:m, :3] = A, B
            assert LA.lu_solve(A1, m, B1, 3)
            ref = np.linalg.solve(A, B)
            assert np.abs(B1[:m, :3] - ref).max() <= 1e-15 * s[0] / s[-1] * 10 * np.abs(ref).max()
            W = np.zeros((10, 10))
            A1[:m, :m] = A
            kappa = np.linalg.cond(A)                 # the smallest singular value to eps * kappa
            assert LA.condition(A1, m, m, W) == pytest.approx(kappa, rel=1e-13 * kappa + 1e-12)
            k = max(1, m - 2)                         # rectangular, both ways round
            A1[:m, :k] = A[:, :k] * 1e3
            kappa = np.linalg.cond(A[:, :k])
            assert LA.condition(A1, m, k, W) == pytest.approx(kappa, rel=1e-13 * kappa + 1e-12)
            kappa = np.linalg.cond(A[:k, :])
            assert LA.condition(np.ascontiguousarray(A[:k, :]), k, m, W) == \
                pytest.approx(kappa, rel=1e-13 * kappa + 1e-12)
            r = rng.normal(size=m + 3)
            S = rng.normal(size=(m + 3, m))
            QR, tau, rr = np.zeros((m + 3, m)), np.zeros(m), r.copy()
            assert LA.least_squares_step(S, m + 3, m, rr, QR, tau)
            np.testing.assert_allclose(rr[:m], np.linalg.lstsq(S, r, rcond=None)[0], rtol=1e-11, atol=1e-12)
    A1 = np.zeros((3, 3))
    A1[0, 0], A1[1, 1] = 1.0, 1.0
    assert not LA.lu_solve(A1, 3, np.zeros((3, 1)), 1)
    assert LA.condition(A1, 3, 3, np.zeros((3, 3))) == np.inf


def test_lu_solve_pair_against_lapack():
    """Two right-hand sides from one elimination (the limb IK's F and Newton step): each against
    numpy.linalg.solve, and bitwise equal to its own lu_solve (same pivots and multipliers)."""
    rng = np.random.default_rng(7)
    for m in range(1, 9):
        for _ in range(20):
            A = rng.normal(size=(m, m)) * 10.0 ** rng.uniform(-3, 3)
            B, b = rng.normal(size=(m, 4)), rng.normal(size=(m, 1))
            A1, A2, B1, b1 = A.copy(), A.copy(), B.copy(), b.copy()
            assert LA.lu_solve_pair(A1, m, B1, 4, b1, 1)
            B2, b2 = B.copy(), b.copy()
            assert LA.lu_solve(A2.copy(), m, B2, 4) and LA.lu_solve(A2.copy(), m, b2, 1)
            assert np.array_equal(B1, B2) and np.array_equal(b1, b2)
            kappa = np.linalg.cond(A)
            for X, R in ((B1, B), (b1, b)):
                ref = np.linalg.solve(A, R)
                assert np.abs(X - ref).max() <= 1e-14 * kappa * np.abs(ref).max()
    assert not LA.lu_solve_pair(np.diag([1.0, 1.0, 0.0]), 3, np.zeros((3, 2)), 2, np.zeros((3, 1)), 1)


def test_condition_from_the_inverse_against_lapack():
    """kappa(F) of a square F from the largest eigenvalues of F^T F and B^T B, B = Q F^-1 (Q
    orthogonal: a limb's D_t^T L_t), against numpy.linalg.cond on seeded matrices conditioned up
    to 1e8, scaled over 1e-5..1e5, with repeated and nearly repeated singular values, to the
    tolerance of the Jacobi route (the smallest singular value to eps * kappa); inf where an entry
    is not finite."""
    rng = np.random.default_rng(4)
    W = np.zeros((10, 10))
    for m in range(1, 9):
        for _ in range(40):
            U, _, Vt = np.linalg.svd(rng.normal(size=(m, m)))
            Q, _ = np.linalg.qr(rng.normal(size=(m, m)))
            s = np.logspace(0, -rng.uniform(0, 8), m) * 10.0 ** rng.uniform(-5, 5)
            for sv in (s, np.where(np.arange(m) < 3, s[0], s), np.r_[s[0], s[0] * (1 - 1e-9), s[2:]][:m],
                       np.full(m, s[0])):
                A = (U * sv) @ Vt
                B = Q @ np.linalg.inv(A)
                kappa = np.linalg.cond(A)
                assert LA.condition_with_inverse(A, B, m, W) == pytest.approx(kappa, rel=1e-13 * kappa + 1e-12)
    A = np.eye(3)
    B = np.eye(3)
    B[1, 2] = np.nan
    assert LA.condition_with_inverse(A, B, 3, W) == np.inf
    assert LA.condition_with_inverse(A, A, 0, W) == 1.0


def test_largest_eigenvalue_against_lapack():
    """lambda_max of a symmetric positive semidefinite matrix (the workspace map's reflected mass)
    against numpy.linalg.eigvalsh on seeded matrices with eigenvalues spread up to 1e12, scaled
    over 1e-5..1e5, repeated and nearly repeated, to round-off of the largest (eps |M|)."""
    rng = np.random.default_rng(7)
    W = np.zeros((8, 8))
    for m in range(1, 8):
        for _ in range(40):
            Q, _ = np.linalg.qr(rng.normal(size=(m, m)))
            lam = np.logspace(0, -rng.uniform(0, 12), m) * 10.0 ** rng.uniform(-5, 5)
            for ev in (lam, np.where(np.arange(m) < 3, lam[0], lam), np.r_[lam[0], lam[0] * (1 - 1e-9), lam[2:]][:m],
                       np.full(m, lam[0])):
                M = (Q * ev) @ Q.T
                M = 0.5 * (M + M.T)
                top = np.linalg.eigvalsh(M)[-1]
                assert LA.largest_eigenvalue(M, W) == pytest.approx(top, rel=1e-13)

def test_task_mass_matrix_against_the_limb_crba(robot):
    """``M_t`` (eq. 40) from the kernel (``sum_i T_i^T M_i T_i`` with the body twists per task
    rate) against ``P_p^T M_p P_p + sum_l K^T crba(limb tree) K`` of the numpy route, 1e-12."""
    rng = np.random.default_rng(4)
    sol = None
    for pose in _path(robot, rng, 5):
        sol = robot.inverse_kinematics(pose, initial=sol)
        ref = robot.P_p.T @ robot.M_p @ robot.P_p
        for limb, th in zip(robot.limbs, sol.limb_theta):
            K = limb_jacobians(limb, th).K
            ref = ref + K.T @ crba(limb.tree, th) @ K
        assert _rel(robot.mass_matrix(sol), ref) <= 1e-12


def test_the_packed_entries_are_placed_and_read_by_their_names(robot):
    """Every named entry of the limb layout (core/limb/limb_layout.py) is where its name says,
    both in the packs of limb_tables and in the views the kernels read (robot_kernels'
    ``model_views`` / ``data_views``): the model entries hold the limb's own arrays (checked by
    name against the numpy ``Limb``), every view starts at its header's offset with its
    header's shape, and only the int entries come from the int packs."""
    from pkm_dynamics.core.limb import limb_layout as LL
    from pkm_dynamics.core.pkm.robot_kernels import data_views, model_views
    T = robot._limb_tables
    fd, idt, hd = T.data()
    for l, limb in enumerate(robot.limbs):
        lm = model_views(T.fm, T.im, T.hm, l)
        ld, lx = data_views(fd, idt, hd, l)
        assert len(lm) == LL.LM_COUNT and len(ld) == LL.LD_COUNT and len(ld) + len(lx) == LL.LD_ALL
        named = {LL.LM_PARENT: limb.kin.parent, LL.LM_B: limb.kin.B, LL.LM_X: limb.kin.X, LL.LM_D_T: limb.D_t,
                 LL.LM_TASK_ROWS: limb.task_rows, LL.LM_INDEPENDENT: limb.independent,
                 LL.LM_PLATFORM_OFFSET: limb.platform_offset, LL.LM_INERTIA: limb.tree.M,
                 LL.LM_LOWER: limb.tree.lower, LL.LM_UPPER: limb.tree.upper, LL.LM_REVOLUTE: limb.kin.revolute}
        for k, value in named.items():
            np.testing.assert_array_equal(lm[k], np.asarray(value), err_msg=f"model entry {k}")
        sizes = lm[LL.LM_SIZES]
        assert (sizes[LL.SIZE_PLATFORM_BODY], sizes[LL.SIZE_DELTA], sizes[LL.SIZE_NL]) == (
            limb.platform_body, limb.dof, len(limb.loops))
        for views, packs, header, first, ints, count in ((lm, (T.fm, T.im), T.hm, 0, LL.LM_INT, LL.LM_COUNT),
                                                         (ld + lx, (fd, idt), hd, 0, LL.LD_INT, LL.LD_ALL)):
            for k in range(first, count):
                pack = packs[1 if k in ints else 0]
                o, *shape = header[l, k]
                assert views[k].dtype == pack.dtype, k
                assert views[k].shape == tuple(s for s in shape if s) or views[k].size == 0, k
                if views[k].size:
                    assert views[k].ctypes.data == pack.ctypes.data + o * pack.itemsize, k
