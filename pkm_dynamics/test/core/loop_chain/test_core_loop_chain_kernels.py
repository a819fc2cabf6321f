"""The compiled route of a chain of loops (core/loop_chain/loop_chain_kernels.py, served by
LoopChainRobot) against its numpy reference (:class:`LimbChainRobot`, ``robot.route``, here with
the loops closed to 1e-14 instead of the served 1e-12: the kernel's closure ends a Newton step
beyond the tolerance, to round-off, and so must the reference to compare to 1e-12), call by
call at random states across the strokes: ID and FD (one state and a batch, with and without a
wrench on the end effector), the tree motion, ``(H^T M H, bias)`` and the end-effector pose and
Jacobian, <= 1e-12 relative; on the excavator, the HIAB crane with its joint friction, and the
crane with a passive grapple (Featherstone's hybrid dynamics from the compiled ``M_t, b``)."""
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.core.loop_chain.loop_chain_compiled import hybrid_split
from pkm_dynamics.core.loop_chain.loop_chain_ik import end_effector_jacobian
from pkm_dynamics.core.loop_chain.loop_chain_robot import LoopChainRobot
from pkm_dynamics.core.pkm.limb_chain import LimbChainRobot
from pkm_dynamics.core.tree.tree_dynamics import body_jacobian, forward_kinematics
from test_core_passive_joints import TEXT as GRAPPLE_CRANE

ROBOTS = Path(__file__).resolve().parents[3] / "robots"


def rel(a, ref):
    return float(np.abs(np.asarray(a) - ref).max() / max(np.abs(ref).max(), 1.0))


def reference(robot):
    """The numpy route of ``robot`` with its loops closed to 1e-14 (module docstring)."""
    return LimbChainRobot(robot.description, tol=1e-14, warm_start=False, coordinates=robot.coordinates)


def states(robot, count, seed):
    """Random states within 5 % of the strokes' ends (one turn of a joint without limits)."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(robot.lower), robot.lower, -np.pi)
    hi = np.where(np.isfinite(robot.upper), robot.upper, np.pi)
    X = lo + (hi - lo) * rng.uniform(0.05, 0.95, (count, robot.n))
    return X, rng.normal(scale=0.3, size=X.shape), rng.normal(scale=1.0, size=X.shape), \
        rng.normal(scale=[500, 500, 500, 5000, 5000, 5000], size=(count, 6))


@pytest.fixture(scope="module", params=["excavator", "heavy_duty_4dof with friction"])
def robot(request):
    if request.param == "excavator":
        return load_robot((ROBOTS / "excavator.urdf").read_text(encoding="utf-8"))
    r = LoopChainRobot(load_robot(str(ROBOTS / "heavy_duty_4dof.urdf")).description)
    assert r.description.friction is not None
    return r


def test_dynamics_agree_with_the_numpy_route(robot):
    X, XD, XDD, W = states(robot, 6, seed=280)
    ref = reference(robot)
    u0 = np.stack([ref.inverse_dynamics(X[i], XD[i], XDD[i]) for i in range(len(X))])
    assert rel(robot.inverse_dynamics(X, XD, XDD), u0) <= 1e-12
    for i in range(len(X)):
        uw = ref.inverse_dynamics(X[i], XD[i], XDD[i], W[i])
        assert rel(robot.inverse_dynamics(X[i], XD[i], XDD[i], wrench=W[i]), uw) <= 1e-12
        f = 0.7 * uw
        assert rel(robot.forward_dynamics(X[i], XD[i], f, wrench=W[i]), ref.forward_dynamics(X[i], XD[i], f, W[i])) \
            <= 1e-12
        M, b = robot.compiled.mass_and_bias(X[i:i + 1], XD[i:i + 1], W[i])
        M0, b0 = ref.mass_and_bias(X[i], XD[i], W[i])
        assert rel(M[0], M0) <= 1e-12 and rel(b[0], b0) <= 1e-12
    a0 = np.stack([ref.forward_dynamics(X[i], XD[i], u0[i], W[0]) for i in range(len(X))])
    assert rel(robot.forward_dynamics(X, XD, u0, wrench=W[0]), a0) <= 1e-12
    got, want = robot.tree_state(X, XD, XDD), ref.tree_state(X, XD, XDD)
    for a, b, what in zip(got, want, ("theta", "thetad", "thetadd")):
        assert rel(a, b) <= 1e-12, what


def test_pose_and_jacobian_agree_with_the_numpy_route(robot):
    X = states(robot, 4, seed=281)[0]
    n = robot.n
    for x in X:
        T, J, q = robot.compiled.pose_and_jacobian(x)
        Q, Hc, _ = reference(robot).tree_state(np.tile(x, (n, 1)), np.eye(n), np.zeros((n, n)))
        C = forward_kinematics(robot.tree, Q[0])
        assert rel(T, C[robot.ee_body] @ robot.ee_offset) <= 1e-12
        assert rel(J, body_jacobian(robot.tree, C, robot.ee_body, robot.ee_offset) @ Hc.T) <= 1e-12
        assert rel(end_effector_jacobian(robot, x)[0], J) == 0.0


def test_hybrid_dynamics_of_the_passive_grapple_agree_with_the_numpy_route():
    robot = load_robot(GRAPPLE_CRANE)
    assert robot.passive_joints
    X, XD, XDD, W = states(robot, 4, seed=282)
    xdd = XDD[:, :robot.n_act]
    u, qdd_p = robot.hybrid_dynamics(X, XD, xdd, wrench=W[0])
    ref = reference(robot)
    for i in range(len(X)):
        Mt, b = ref.mass_and_bias(X[i], XD[i], W[0])
        a = robot.n_act
        p = np.linalg.solve(Mt[a:, a:], -b[a:] - Mt[a:, :a] @ xdd[i])
        assert rel(qdd_p[i], p) <= 1e-12
        assert rel(u[i], Mt[:a, :a] @ xdd[i] + Mt[:a, a:] @ p + b[:a]) <= 1e-12
        f = np.r_[u[i], np.zeros(len(robot.passive_joints))]
        assert rel(robot.forward_dynamics(X[i], XD[i], u[i], wrench=W[0]),
                   ref.forward_dynamics(X[i], XD[i], f, W[0])) <= 1e-12


def test_the_compiled_hybrid_split_equals_the_numpy_split_and_solve():
    """The hybrid dynamics of one kernel call (``M_t``, ``b``, the passive split and its solve in
    the kernel) against the numpy split-and-solve (:func:`hybrid_split`, the reference) of the
    compiled ``(H^T M H, bias)`` at the same states: a batch and one state, with a wrench,
    <= 1e-12 relative."""
    robot = load_robot(GRAPPLE_CRANE)
    X, XD, XDD, W = states(robot, 5, seed=283)
    xdd = XDD[:, :robot.n_act]
    u, qdd_p = robot.hybrid_dynamics(X, XD, xdd, wrench=W)
    Mt, b = robot.compiled.mass_and_bias(X, XD, W)
    u_ref, p_ref = hybrid_split(Mt, b, xdd)
    assert u.shape == (5, robot.n_act) and qdd_p.shape == (5, len(robot.passive_joints))
    assert rel(u, u_ref) <= 1e-12 and rel(qdd_p, p_ref) <= 1e-12
    u1, p1 = robot.hybrid_dynamics(X[2], XD[2], xdd[2], wrench=W[2])
    assert u1.shape == (robot.n_act,)
    assert rel(u1, u_ref[2]) <= 1e-12 and rel(p1, p_ref[2]) <= 1e-12
