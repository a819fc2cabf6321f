"""Higher-order inverse dynamics (paper 002) and series-elastic feedforward.

Independent checks only:
* u-dot and u-ddot against 4th-order central differences of u(t) along the example paths;
* 3rd and 4th derivatives of the inverse kinematics against differences of the (lower-order)
  IK solution along the path;
* paper 002's recursion against the Taylor-jet general route (different algorithms sharing
  only the tree data) to 1e-10;
* u against the KKT inverse dynamics of the tree with the loop constraints as multipliers
  (core/tree/constrained.py fed the IK's tree motion: it checks the force balance of that motion and
  shares the cut-joint rows; the IK and ID themselves are checked against Pinocchio in
  test_core_independent_kkt.py), and against the module-chain ID of paper 000 for heavy-duty
  manipulators;
* SEA motor torque against eq. 2 with the motor acceleration from differences of q_m(t).
"""
import os

import numpy as np
import pytest

from pkm_dynamics.core import DescriptionError, load_robot
from pkm_dynamics.core.tree.constrained import kkt_inverse_dynamics
from pkm_dynamics.core.description.robot_description import parse_description
from pkm_dynamics.core.hoid import jet_dynamics as JD
from pkm_dynamics.core.hoid.higher_order import hoid_model, higher_order_inverse_dynamics
from pkm_dynamics.core.hoid.simple_limb import simple_limb_inverse_kinematics
from pkm_dynamics.core.hoid.hoid_motions import gough_stewart_roll, pick_and_place, roll_angle, sin2_jerk_step
from pkm_dynamics.core.spatial.se3 import exp_se3, exp_se3_batch, log_se3_batch, pose
from pkm_dynamics.core.tree.tree_dynamics import forward_kinematics

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "robots")


def robot_path(name):
    return os.path.join(ROBOTS, name + ".urdf")


def rel(a, b):
    return np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(np.linalg.norm(b), 1e-300)


def central(f, t0, h):
    """4th-order central differences: (f, f', f'') at t0 from f(t0 + k h), k = -2..2."""
    fm2, fm1, f0, fp1, fp2 = (np.asarray(f(t0 + k * h)) for k in (-2, -1, 0, 1, 2))
    d1 = (fm2 - 8 * fm1 + 8 * fp1 - fp2) / (12 * h)
    d2 = (-fm2 + 16 * fm1 - 30 * f0 + 16 * fp1 - fp2) / (12 * h * h)
    return f0, d1, d2


@pytest.fixture(scope="module")
def gsp():
    return parse_description(robot_path("gough_stewart_6ups"))


@pytest.fixture(scope="module")
def rrr():
    return parse_description(robot_path("planar_3rrr"))


CASES = {
    "gsp": (gough_stewart_roll, (0.13, 0.3, 0.61, 0.87), 2e-3),
    # sin^2 jerk: 10 Hz pulses, kinks of the snap every 0.1 s -> h = 0.5 ms, times off the kinks
    "rrr": (pick_and_place, (0.11, 0.23, 0.33, 0.62), 5e-4),
}


@pytest.mark.parametrize("which", sorted(CASES))
def test_example_robots_are_simple_limb_pkm(which, gsp, rrr):
    desc = gsp if which == "gsp" else rrr
    m = hoid_model(desc)
    assert m.limbs is not None, m.limb_reason
    if which == "gsp":
        # paper 002 Sec. VI-A: spanning tree with 21 DOF and 15 independent constraints
        assert desc.tree.nq == 21 and m.jets.constraints.size == 15
        assert len(m.limbs.limbs) == 6 and all(lb.N == 6 for lb in m.limbs.limbs)
    else:
        assert len(m.limbs.limbs) == 3 and all(lb.N == 3 for lb in m.limbs.limbs)


@pytest.mark.parametrize("which", sorted(CASES))
def test_recursive_route_equals_taylor_route(which, gsp, rrr):
    desc = gsp if which == "gsp" else rrr
    motion, times, _ = CASES[which]
    for t in times:
        C, Vt = motion(t)
        a = higher_order_inverse_dynamics(desc, C, *Vt, method="recursive")
        b = higher_order_inverse_dynamics(desc, C, *Vt, method="taylor")
        assert a.method == "recursive" and b.method == "taylor"
        for k in ("u", "du", "ddu"):
            assert rel(a[k], b[k]) < 1e-10, (k, t)
        for order in range(5):
            assert rel(a.tree_motion[order], b.tree_motion[order]) < 1e-10, (order, t)


@pytest.mark.parametrize("which", sorted(CASES))
def test_limb_inverse_kinematics_equals_general_loop_closure(which, gsp, rrr):
    """The per-limb closure of the recursive route (cold, and warm from another sample) against
    the whole-tree Newton closure of the general route."""
    desc = gsp if which == "gsp" else rrr
    motion, times, _ = CASES[which]
    m = hoid_model(desc)
    prev = None
    for t in times:
        C = motion(t)[0]
        q_gen = JD.close_loops(m.jets, C)
        assert rel(simple_limb_inverse_kinematics(m.limbs, C), q_gen) < 1e-10, t
        if prev is not None:
            assert rel(simple_limb_inverse_kinematics(m.limbs, C, q_guess=prev), q_gen) < 1e-10, t
        prev = q_gen


def test_batched_exp_log_equal_spatial():
    rng = np.random.default_rng(3)
    for angle in (0.0, 1e-8, 1e-4, 0.3, 2.0, 3.1):
        X = rng.normal(size=(5, 6))
        X[:, :3] *= angle / np.maximum(np.linalg.norm(X[:, :3], axis=1, keepdims=True), 1e-300)
        E = exp_se3_batch(X)
        for k in range(5):
            assert np.abs(E[k] - exp_se3(X[k])).max() < 1e-13
            assert np.abs(E[k][:3, :3] @ E[k][:3, :3].T - np.eye(3)).max() < 1e-14
        assert np.abs(log_se3_batch(E) - X).max() < 1e-12


@pytest.mark.parametrize("which", sorted(CASES))
def test_u_equals_kkt_inverse_dynamics(which, gsp, rrr):
    desc = gsp if which == "gsp" else rrr
    motion, times, _ = CASES[which]
    act = hoid_model(desc).jets.actuated
    for t in times:
        r = higher_order_inverse_dynamics(desc, *((lambda C, V: (C, *V))(*motion(t))))
        q = r.tree_motion
        u_kkt = kkt_inverse_dynamics(desc, q[0], q[1], q[2], act)
        assert rel(r.u, u_kkt) < 1e-10
        # the platform really follows the prescribed pose
        m = hoid_model(desc)
        F = forward_kinematics(desc.tree, q[0])[m.jets.platform_body] @ m.jets.platform_offset
        assert np.abs(F - motion(t)[0]).max() < 1e-10


def along(desc, motion, q0, pick):
    """``s -> pick(result at motion(s))``, every call warm-started at ``q0`` (for differences)."""
    def f(s):
        Cs, Vs = motion(s)
        return pick(higher_order_inverse_dynamics(desc, Cs, *Vs, q_guess=q0))
    return f


@pytest.mark.parametrize("which", sorted(CASES))
def test_derivatives_against_differences(which, gsp, rrr):
    """u, du, ddu and the IK's tree motion (q to its 4th derivative) against 4th-order central
    differences in time."""
    desc = gsp if which == "gsp" else rrr
    motion, times, h = CASES[which]
    for t in times:
        C, Vt = motion(t)
        r = higher_order_inverse_dynamics(desc, C, *Vt)
        q0 = r.tree_motion[0]
        u, du, ddu = central(along(desc, motion, q0, lambda r: r.u), t, h)
        assert rel(r.u, u) < 1e-12
        assert rel(r.du, du) < 1e-6, t
        assert rel(r.ddu, ddu) < 1e-6, t
        qdd, q3, q4 = central(along(desc, motion, q0, lambda r: r.tree_motion[2]), t, h)
        assert rel(r.tree_motion[3], q3) < 1e-6
        assert rel(r.tree_motion[4], q4) < 1e-6
        _, q1, q2 = central(along(desc, motion, q0, lambda r: r.tree_motion[0]), t, h)
        assert rel(r.tree_motion[1], q1) < 1e-6 and rel(r.tree_motion[2], q2) < 1e-6


def test_sea_feedforward_equations(rrr):
    """eqs. 1-2: q_m = theta_a + K^-1 u, and tau = u + M_m qdd_m with qdd_m from differences."""
    motion, times, h = CASES["rrr"]
    K = np.array([a.stiffness for a in rrr.actuators])
    Mm = np.array([a.motor_inertia for a in rrr.actuators])
    for t in times:
        C, Vt = motion(t)
        r = higher_order_inverse_dynamics(rrr, C, *Vt)
        assert np.allclose(r.motor_position, r.actuator_motion[0] + r.u / K, rtol=0, atol=1e-14)
        qm, qmd, qmdd = central(along(rrr, motion, r.tree_motion[0], lambda r: r.motor_position),
                                t, h)
        assert rel(r.motor_velocity, qmd) < 1e-6
        assert rel(r.motor_acceleration, qmdd) < 1e-6
        assert rel(r.motor_torque, r.u + Mm * qmdd) < 1e-6


def test_batched_call_and_key_access(gsp):
    ts = np.linspace(0.05, 0.95, 7)
    poses, V = zip(*(gough_stewart_roll(t) for t in ts))
    V = np.array(V)
    r = higher_order_inverse_dynamics(gsp, np.array(poses), V[:, 0], V[:, 1], V[:, 2], V[:, 3])
    assert r["u"].shape == (7, 6) and r.du.shape == (7, 6) and r["ddu"].shape == (7, 6)
    assert r.motor_torque.shape == (7, 6) and r.tree_motion.shape == (7, 5, 21)
    for k in range(len(ts)):
        one = higher_order_inverse_dynamics(gsp, poses[k], *V[k])
        assert rel(r.ddu[k], one.ddu) < 1e-10
    with pytest.raises(KeyError):
        r["nonsense"]


def test_roll_motion_matches_paper_range():
    ts = np.linspace(0, 1, 201)
    th = np.array([roll_angle(t)[0] for t in ts])
    assert abs(th.min() + 0.5) < 1e-12 and abs(th.max() - 0.5) < 1e-3
    # its derivatives are the derivatives (4th-order differences)
    h = 1e-3
    _, d1, d2 = central(lambda s: roll_angle(s)[0], 0.3, h)
    assert rel(roll_angle(0.3)[1], d1) < 1e-9 and rel(roll_angle(0.3)[2], d2) < 1e-7


# --- module chains and hybrid limbs: the general (Taylor) route -------------------------

def _sine_path(x0, t, amp, w):
    phase = np.arange(len(x0)) * 0.7
    return [x0 * (k == 0) + amp * w**k * np.sin(w * t + phase + k * np.pi / 2) for k in range(5)]


@pytest.mark.parametrize("name,amp", [("heavy_duty_4dof", np.array([0.3, 0.04, 0.04, 0.15])),
                                      ("linear_4bar_1dof", np.array([0.05]))])
def test_module_chain_against_chain_id_and_differences(name, amp):
    robot = load_robot(robot_path(name))
    desc = robot.description
    m = hoid_model(desc)
    assert m.limbs is None
    lo, hi = desc.tree.lower[m.jets.actuated], desc.tree.upper[m.jets.actuated]
    ok = np.isfinite(lo) & np.isfinite(hi)
    mid = np.zeros(len(lo))
    mid[ok] = 0.5 * (lo[ok] + hi[ok])
    w = 1.3
    for t in (0.2, 0.9):
        x = _sine_path(mid, t, amp, w)
        r = higher_order_inverse_dynamics(robot, *x)
        assert r.method == "taylor"
        # u equals the analytic module-chain ID of paper 000 (the earlier issue)
        assert rel(r.u, robot.inverse_dynamics(x[0], x[1], x[2])) < 1e-9
        u, du, ddu = central(lambda s: higher_order_inverse_dynamics(robot, *_sine_path(mid, s, amp, w)).u, t, 5e-3)
        assert rel(r.du, du) < 1e-6 and rel(r.ddu, ddu) < 1e-6
    with pytest.raises(DescriptionError, match="recursion"):
        higher_order_inverse_dynamics(robot, *_sine_path(mid, 0.2, amp, w), method="recursive")


def test_hybrid_limb_pkm_irsbot2_against_differences():
    desc = parse_description(robot_path("irsbot2"))
    m = hoid_model(desc)
    assert m.limbs is None                       # hybrid limbs: Taylor route
    F0 = forward_kinematics(desc.tree, np.zeros(desc.tree.nq))[m.jets.platform_body] @ m.jets.platform_offset
    w, ax, az = 2.0, 0.04, 0.03

    def motion(t):
        p = F0[:3, 3] + np.array([ax * np.sin(w * t), 0.0, az * np.sin(2 * w * t)])
        # task space (vx, vz): body-fixed = world components (constant orientation)
        Vt = np.array([[ax * w**(k + 1) * np.sin(w * t + (k + 1) * np.pi / 2),
                        az * (2 * w)**(k + 1) * np.sin(2 * w * t + (k + 1) * np.pi / 2)] for k in range(4)])
        return pose(F0[:3, :3], p), Vt

    for t in (0.3, 1.1):
        C, Vt = motion(t)
        r = higher_order_inverse_dynamics(desc, C, *Vt)
        q = r.tree_motion
        assert rel(r.u, kkt_inverse_dynamics(desc, q[0], q[1], q[2], m.jets.actuated)) < 1e-9
        u, du, ddu = central(lambda s: higher_order_inverse_dynamics(desc, *(lambda c, v: (c, *v))(*motion(s)),
                                                                    q_guess=q[0]).u, t, 5e-3)
        assert rel(r.du, du) < 1e-6 and rel(r.ddu, ddu) < 1e-6


@pytest.mark.parametrize("name,motion", [("gough_stewart_6ups", gough_stewart_roll), ("planar_3rrr", pick_and_place)])
def test_robot_method_and_u_equals_parallel_robot_id(name, motion):
    """``robot.higher_order_inverse_dynamics`` on the loaded PKM; u equals the task-space ID of
    paper 001 (eq. 45, ``ParallelRobot.inverse_dynamics``)."""
    robot = load_robot(robot_path(name))
    for t in (0.17, 0.58):
        C, Vt = motion(t)
        r = robot.higher_order_inverse_dynamics(C, *Vt)
        assert r.method == "recursive"
        assert rel(r.u, robot.inverse_dynamics(C, Vt[0], Vt[1])) < 1e-9


def test_module_chain_robot_method():
    robot = load_robot(robot_path("linear_4bar_1dof"))
    x = _sine_path(np.array([0.3]), 0.4, np.array([0.05]), 1.3)
    r = robot.higher_order_inverse_dynamics(*x)
    assert rel(r["u"], robot.inverse_dynamics(x[0], x[1], x[2])) < 1e-9
    assert r.du.shape == (1,) and r.ddu.shape == (1,)


def test_sin2_jerk_step_against_differences_and_its_definition():
    """Each derivative of the step against central differences of the one below it; the jerk
    is the sin^2 pulse train of its definition; rest to rest from 0 to 1."""
    h = 1e-6
    for tau in np.linspace(0.013, 0.987, 17):
        s = sin2_jerk_step(tau)
        for k in range(4):
            d = (sin2_jerk_step(tau + h)[k] - sin2_jerk_step(tau - h)[k]) / (2 * h)
            assert abs(d - s[k + 1]) <= 1e-6 * max(1.0, abs(s[k + 1])), (tau, k)
        sign = (1, -1, -1, 1)[int(4 * tau)]
        peak = sin2_jerk_step(0.125)[3]
        assert abs(s[3] - sign * peak * np.sin(4 * np.pi * tau) ** 2) <= 1e-12 * peak
    np.testing.assert_allclose(sin2_jerk_step(1e-12), [0, 0, 0, 0, 0], atol=1e-9 * peak)
    np.testing.assert_allclose(sin2_jerk_step(1.0 - 1e-12), [1, 0, 0, 0, 0], atol=1e-9 * peak)


def test_pick_and_place_is_snap_continuous_so_u_ddot_is(rrr):
    """At every start and end of a move (issue 10: the snap used to jump there, so u-dot,
    u-ddot and the motor torque stepped) the motion up to the snap and u, u-dot, u-ddot
    are continuous: the values 1 ns before and after agree to 1e-5 of their size along the
    cycle; during a dwell the platform is at rest (the old 7th-order step kept its end snap
    of -840 d / move^4 through the dwell, a motion that does not exist)."""
    move, dwell = 0.4, 0.1
    eps = 1e-9
    along_cycle = [higher_order_inverse_dynamics(rrr, C, *V) for C, V in map(pick_and_place, np.linspace(0, 1, 21))]
    sizes = {key: max(np.abs(r[key]).max() for r in along_cycle) for key in ("u", "du", "ddu")}
    for t in (move + 0.5 * dwell, 2 * move + 1.5 * dwell):      # a dwell is rest: every derivative 0
        np.testing.assert_array_equal(pick_and_place(t)[1], np.zeros((4, 3)))
    for t in (move, move + dwell, 2 * move + dwell, 2 * (move + dwell)):
        (Cb, Vb), (Ca, Va) = pick_and_place(t - eps), pick_and_place(t + eps)
        for k in range(4):
            scale = max(np.abs(pick_and_place(s)[1][k]).max() for s in np.linspace(0, 1, 41))
            assert np.abs(Vb[k] - Va[k]).max() <= 1e-5 * scale, (t, k)
        rb = higher_order_inverse_dynamics(rrr, Cb, *Vb)
        ra = higher_order_inverse_dynamics(rrr, Ca, *Va)
        for key in ("u", "du", "ddu"):
            assert np.abs(ra[key] - rb[key]).max() <= 1e-5 * sizes[key], (t, key)
