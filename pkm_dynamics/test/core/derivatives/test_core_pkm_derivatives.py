"""Exact first derivatives of the task-space dynamics of parallel robots
(core/derivatives/pkm_derivatives.py: forward mode through the general route's closure and tree dynamics)
against central finite differences of the public ID/FD (the limb route of core/pkm/parallel_robot.py, which
shares no code with the jets) and the robot's own mass matrix and IK Jacobian."""
import os

import numpy as np
import pytest

from pkm_dynamics.core import StateError
from pkm_dynamics.core.derivatives.derivatives import DynamicsDerivatives
from pkm_dynamics.core.robot import load_robot
from pkm_dynamics.core.spatial.se3 import exp_se3

HERE = os.path.dirname(os.path.abspath(__file__))
ROBOTS = os.path.join(HERE, "..", "..", "..", "robots")
PKMS = ["planar_3rrr", "irsbot2", "irsbot2_paths", "gough_stewart_6ups"]


@pytest.fixture(scope="module", params=PKMS)
def pkm(request):
    return load_robot(os.path.join(ROBOTS, f"{request.param}.urdf"))


def _state(robot, rng):
    """A pose near the reference, a twist, a task acceleration, a platform wrench."""
    dp = robot.dof
    pose = robot.reference_pose @ exp_se3(robot.P_p @ rng.normal(scale=0.01, size=dp))
    return pose, rng.normal(scale=0.1, size=dp), rng.normal(scale=0.5, size=dp), rng.normal(size=6)


def _central(fn, args, which, h):
    cols = []
    for j in range(len(args[which])):
        a, b = [v.copy() for v in args], [v.copy() for v in args]
        a[which][j] += h
        b[which][j] -= h
        cols.append((fn(*a) - fn(*b)) / (2.0 * h))
    return np.column_stack(cols)


def _relative(a, ref) -> float:
    return float(np.abs(a - ref).max() / max(np.abs(ref).max(), 1e-300))


def test_derivatives_match_central_differences_and_the_mass_matrix(pkm):
    """Pose derivatives along ``pose exp(P_p delta)``; ``d_u`` of the ID is ``J_IK^-T M_t`` and
    of the FD ``M_t^-1 J_IK^T`` with the limb route's ``M_t`` (eq. 40) and ``J_IK`` (eq. 30)."""
    pose, V, A, W = _state(pkm, np.random.default_rng(4))
    dp = pkm.dof
    d = pkm.inverse_dynamics_derivatives(pose, V, A, W)
    assert isinstance(d, DynamicsDerivatives) and d.d_x.shape == (len(pkm.actuated_joints), dp)
    u = pkm.inverse_dynamics(pose, V, A, W)
    np.testing.assert_array_equal(d.value, u)
    fid = lambda dl, v, a: pkm.inverse_dynamics(pose @ exp_se3(pkm.P_p @ dl), v, a, W)    # noqa: E731
    for which, jac in enumerate((d.d_x, d.d_xd, d.d_u)):
        assert _relative(jac, _central(fid, [np.zeros(dp), V, A], which, 1e-6)) <= 1e-6
    fd = pkm.forward_dynamics_derivatives(pose, V, u, W)
    np.testing.assert_allclose(fd.value, A, rtol=1e-9, atol=1e-9)
    ffd = lambda dl, v, f: pkm.forward_dynamics(pose @ exp_se3(pkm.P_p @ dl), v, f, W)     # noqa: E731
    steps = (1e-6, 1e-6, 1e-6 * max(1.0, np.abs(u).max()))
    for which, jac in enumerate((fd.d_x, fd.d_xd, fd.d_u)):
        assert _relative(jac, _central(ffd, [np.zeros(dp), V, u], which, steps[which])) <= 1e-6
    sol = pkm.admissible_task_state(pose)
    Mt, J = pkm.mass_matrix(sol), sol.J_IK
    np.testing.assert_allclose(fd.d_u, np.linalg.solve(Mt, J.T), rtol=1e-9, atol=1e-9 * np.abs(fd.d_u).max())
    if J.shape[0] == J.shape[1]:
        np.testing.assert_allclose(d.d_u, np.linalg.solve(J.T, Mt), rtol=1e-9, atol=1e-9 * np.abs(d.d_u).max())


def test_batch_matches_single_states():
    robot = load_robot(os.path.join(ROBOTS, "planar_3rrr.urdf"))
    rng = np.random.default_rng(11)
    rows = [_state(robot, rng) for _ in range(2)]
    P, V, A, W = (np.array([r[i] for r in rows]) for i in range(4))
    batch = robot.inverse_dynamics_derivatives(P, V, A, W)
    assert batch.d_x.shape == (2, 3, 3)
    for k in range(2):
        one = robot.inverse_dynamics_derivatives(P[k], V[k], A[k], W[k])
        for name in ("value", "d_x", "d_xd", "d_u"):
            np.testing.assert_allclose(getattr(batch, name)[k], getattr(one, name), rtol=1e-12, atol=1e-12)


def test_bad_input_raises_the_message_of_the_dynamics():
    robot = load_robot(os.path.join(ROBOTS, "planar_3rrr.urdf"))
    pose = robot.reference_pose
    with pytest.raises(StateError) as ref:
        robot.inverse_dynamics(pose, [0.0, np.nan, 0.0], np.zeros(3))
    with pytest.raises(StateError) as err:
        robot.inverse_dynamics_derivatives(pose, [0.0, np.nan, 0.0], np.zeros(3))
    assert str(err.value) == str(ref.value)
    with pytest.raises(StateError, match="u must hold 3"):
        robot.forward_dynamics_derivatives(pose, np.zeros(3), np.zeros(2))
