"""Joint friction of parallel robots (issue 27 item 3): paper 001's dissipative wrench ``W_t``
(eq. 44) in the inverse dynamics (eq. 45), forward dynamics (eq. 39) and the higher-order
inverse dynamics and the derivatives of ID and FD, against the power balance, Pinocchio's KKT
route with the joint friction torques added (its own loop rows and closure), the round trip, and
central differences."""
import os

import numpy as np
import pytest

from pinocchio_loops import PinocchioLoops
from pkm_dynamics.core import load_robot
from pkm_dynamics.core.friction.friction_model import friction_torques
from pkm_dynamics.core.spatial.se3 import exp_se3
from pkm_dynamics.core.tree.constrained import kkt_forward_dynamics
from pkm_dynamics.testing import with_friction

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "robots")
#: robot -> (task displacement scale, leg friction)
CASES = {"planar_3rrr": (0.05, dict(coulomb=0.5, viscous=2.0, smoothing_velocity=0.01)),
         "gough_stewart_6ups": (0.03, dict(coulomb=20.0, viscous=50.0, stribeck=10.0, stribeck_velocity=0.05,
                                              smoothing_velocity=0.01))}


def _rel(a, b):
    return np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1.0)


@pytest.fixture(scope="module", params=sorted(CASES))
def pkm(request):
    name = request.param
    with open(os.path.join(ROBOTS, name + ".urdf"), encoding="utf-8") as f:
        text = f.read()
    plain = load_robot(text)
    fric_text = with_friction(text, plain.actuated_joints, CASES[name][1], damping=0.05, coulomb=0.3)
    return name, plain, load_robot(fric_text), fric_text


def _states(robot, scale, rng, count):
    for _ in range(count):
        pose = robot.task_pose(rng.uniform(-scale, scale, robot.dof))
        yield pose, rng.normal(scale=0.2, size=robot.dof), rng.normal(scale=0.5, size=robot.dof)


def test_every_joint_has_its_friction(pkm):
    _, plain, robot, _ = pkm
    assert plain.friction is None
    kinds = set(robot.friction.sources)
    assert kinds == {"dynamics", "friction"} or kinds == {"dynamics", "friction", ""}


def test_W_t_balances_the_power_of_the_joints_friction(pkm):
    """``u_f = ID_friction - ID``: its power at the actuators ``(J_IK V_t)^T u_f`` equals the
    joints' ``qd^T tau_f(qd)`` (tree rates of the IK, the numpy law), and is positive."""
    name, plain, robot, _ = pkm
    rng = np.random.default_rng(21)
    for pose, V, A in _states(robot, CASES[name][0], rng, 4):
        sol = robot.inverse_kinematics(pose, V, A)
        uf = robot.inverse_dynamics(sol, V, A) - plain.inverse_dynamics(plain.inverse_kinematics(pose), V, A)
        tau = friction_torques(robot.friction.table, sol.qd)[0]
        assert (sol.J_IK @ V) @ uf == pytest.approx(sol.qd @ tau, rel=1e-9, abs=1e-12)
        assert sol.qd @ tau > 0.0


def test_pkm_with_friction_against_pinocchio_kkt_with_joint_friction_torques(pkm):
    name, plain, robot, text = pkm
    ref = PinocchioLoops(text, robot.tree_joints, robot.tree.gravity)
    rng = np.random.default_rng(23)
    for pose, V, A in _states(robot, CASES[name][0], rng, 3):
        q, qd, qdd = ref.close(pose, V, A)
        tau_f = friction_torques(robot.friction.table, qd)[0]
        u0, _ = ref.inverse_dynamics(q, qd, qdd)
        th = ref.to_pin(q)
        ref.kinematics(th)
        _, G, _ = ref.loop_rows(th)
        Amat = np.hstack([ref._actuator_rows().T, G.T @ ref._constraint_basis(G)])
        uf = np.linalg.lstsq(Amat, ref.to_pin(tau_f), rcond=None)[0][:len(u0)]
        sol = robot.inverse_kinematics(pose, V, A)
        assert _rel(robot.inverse_dynamics(sol, V, A), u0 + uf) < 1e-8
        f = u0 + rng.normal(scale=5.0, size=len(u0))
        tau = np.zeros(robot.tree.nq)
        tau[[robot.tree_joints.index(j) for j in robot.actuated_joints]] = f
        qdd_ref, _ = kkt_forward_dynamics(robot.description, q, qd, tau - tau_f)
        a_ref = ref.task_acceleration(q, qd, qdd_ref)
        assert _rel(robot.forward_dynamics(robot.inverse_kinematics(pose), V, f), a_ref) < 1e-8


def test_pkm_round_trip_with_friction(pkm):
    name, _, robot, _ = pkm
    rng = np.random.default_rng(25)
    for pose, V, A in _states(robot, CASES[name][0], rng, 3):
        sol = robot.inverse_kinematics(pose)
        u = robot.inverse_dynamics(sol, V, A)
        assert _rel(robot.forward_dynamics(sol, V, u), A) < 1e-10


def test_pkm_hoid_with_friction_against_differences_of_the_inverse_dynamics(pkm):
    """Along ``C(t) = C_0 exp(P_p d s(t))`` (a one-parameter motion: ``V_t = d s'``, ``Vdot_t =
    d s''``, ...), ``u`` equals the ID with friction and ``du``, ``ddu`` its central differences."""
    name, _, robot, _ = pkm
    d = np.linspace(1.0, -0.5, robot.dof)
    d /= np.linalg.norm(d)
    C0 = robot.task_pose(np.full(robot.dof, 0.3 * CASES[name][0]))
    c = (0.01, 0.3, 0.4, -0.5, 0.6)          # s(t) = sum c_k t^k / k!

    def s(t, k):
        return sum(c[j] * t ** (j - k) / np.prod(range(1, j - k + 1)) for j in range(k, 5))

    def motion(t):
        return [C0 @ exp_se3(robot.P_p @ (d * s(t, 0)))] + [d * s(t, k) for k in range(1, 5)]

    def u(t):
        m = motion(t)
        return robot.inverse_dynamics(m[0], m[1], m[2])
    res = robot.higher_order_inverse_dynamics(*motion(0.0))
    h = 1e-3
    assert _rel(res.u, u(0.0)) < 1e-9
    assert _rel(res.du, (8 * (u(h) - u(-h)) - u(2 * h) + u(-2 * h)) / (12 * h)) < 1e-6     # O(h^4)
    assert _rel(res.ddu, (16 * (u(h) + u(-h)) - 30 * u(0.0) - u(2 * h) - u(-2 * h)) / (12 * h * h)) < 1e-6


def _central(fn, args, which, h):
    cols = []
    for j in range(len(args[which])):
        a, b = [v.copy() for v in args], [v.copy() for v in args]
        a[which][j] += h
        b[which][j] -= h
        cols.append((fn(*a) - fn(*b)) / (2.0 * h))
    return np.column_stack(cols)


def test_pkm_derivatives_with_friction_against_central_differences(pkm):
    """ID and FD derivatives with eq. 44's ``W_t`` (the forward-mode jets, friction's derivative
    in the joint rates) against central differences of the public ID / FD with friction (the
    limb route, which shares no code with the jets), pose along ``pose exp(P_p delta)``, with a
    platform wrench: <= 1e-6 relative; and the friction's share is not negligible (``d_xd``
    differs from the frictionless robot's)."""
    name, plain, robot, _ = pkm
    rng = np.random.default_rng(1)
    dp = robot.dof
    for pose, V, A in _states(robot, CASES[name][0], rng, 2):
        W = rng.normal(size=6)
        d = robot.inverse_dynamics_derivatives(pose, V, A, W)
        u = robot.inverse_dynamics(pose, V, A, W)
        assert np.array_equal(d.value, u)
        fid = lambda dl, v, a: robot.inverse_dynamics(pose @ exp_se3(robot.P_p @ dl), v, a, W)    # noqa: E731
        for which, jac in enumerate((d.d_x, d.d_xd, d.d_u)):
            assert _rel(jac, _central(fid, [np.zeros(dp), V, A], which, 1e-6)) <= 1e-6, ("ID", which)
        assert _rel(d.d_xd, plain.inverse_dynamics_derivatives(pose, V, A, W).d_xd) > 1e-2
        fd = robot.forward_dynamics_derivatives(pose, V, u, W)
        assert _rel(fd.value, A) < 1e-9
        ffd = lambda dl, v, f: robot.forward_dynamics(pose @ exp_se3(robot.P_p @ dl), v, f, W)    # noqa: E731
        steps = (1e-6, 1e-6, 1e-6 * max(1.0, np.abs(u).max()))
        for which, jac in enumerate((fd.d_x, fd.d_xd, fd.d_u)):
            assert _rel(jac, _central(ffd, [np.zeros(dp), V, u], which, steps[which])) <= 1e-6, ("FD", which)


def test_pkm_zero_friction_is_the_frictionless_robot_bit_for_bit(pkm):
    """``<dynamics damping="0" friction="0">`` on every joint is no friction: no table, and ID,
    FD and the HOID give the frictionless robot's numbers bit for bit."""
    name, plain, _, _ = pkm
    with open(os.path.join(ROBOTS, name + ".urdf"), encoding="utf-8") as f:
        zero = load_robot(with_friction(f.read(), damping=0.0, coulomb=0.0))
    assert zero.friction is None
    pose, V, A = next(_states(plain, CASES[name][0], np.random.default_rng(3), 1))
    sp, sz = plain.inverse_kinematics(pose), zero.inverse_kinematics(pose)
    u = plain.inverse_dynamics(sp, V, A)
    assert np.array_equal(u, zero.inverse_dynamics(sz, V, A))
    assert np.array_equal(plain.forward_dynamics(sp, V, u), zero.forward_dynamics(sz, V, u))
    ders = (V, A, 0.5 * A, 0.1 * A)
    assert np.array_equal(plain.higher_order_inverse_dynamics(pose, *ders).ddu,
                          zero.higher_order_inverse_dynamics(pose, *ders).ddu)
