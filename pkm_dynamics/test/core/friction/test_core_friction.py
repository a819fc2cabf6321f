"""Joint and actuator friction (issue 27 item 3): the law, the description elements, and module
chains with friction in ID, FD, their derivatives, the HOID, ``simulate``; each against a route
that does not share the friction code (the law's formula, finite differences of the tree
kinematics for ``G = dq/dx``, the power balance, the Pinocchio KKT route with the joint friction
torques added, central differences)."""
import os
import re

import numpy as np
import pytest

from pinocchio_loops import PinocchioLoops
from pkm_dynamics.core import load_robot
from pkm_dynamics.core.errors import DescriptionError
from pkm_dynamics.core.friction.friction_kernels import friction_law
from pkm_dynamics.core.friction.friction_model import friction_torques
from pkm_dynamics.core.tree.constrained import kkt_forward_dynamics
from pkm_dynamics.testing import chain_states, frictionless, with_friction

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "robots")
#: the HIAB cylinder curves of ../shared/models/hiab_xs031/hydraulics.json (FCp = FCn, bp = bn)
CYLINDER = dict(coulomb=4000.0, viscous=3000.0, smoothing_velocity=0.01)


def _text(name):
    """An example robot without its friction (the examples carry the HIAB curves)."""
    return frictionless(os.path.join(ROBOTS, name + ".urdf"))


def frictional(text, actuators=(), cylinder=CYLINDER, damping=0.1, coulomb=2.0):
    return with_friction(text, actuators, cylinder, damping, coulomb)


@pytest.fixture(scope="module")
def crane():
    """The HIAB 4-DoF crane without and with friction (cylinders: the HIAB curves; every
    passive and slew joint: URDF damping and Coulomb friction)."""
    text = _text("heavy_duty_4dof")
    return load_robot(text), load_robot(frictional(text, ("lift", "tilt", "extension"))), frictional(
        text, ("lift", "tilt", "extension"))


def _rel(a, b):
    return np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1.0)


# ---------------------------------------------------------------- the law

def test_friction_law_formula_and_derivatives():
    """The compiled law against its formula (large rates: Coulomb + viscous; zero: zero; the
    Stribeck excess near rest), both routes agreeing, derivatives against central differences."""
    row = np.array([100.0, 20.0, 50.0, 0.2, 0.01])
    table = row[None]
    for v in (-3.0, -0.05, -1e-3, 0.0, 2e-3, 0.07, 1.5):
        tau, d1, d2 = friction_law(row, v)
        want = (100.0 + 50.0 * np.exp(-(v / 0.2) ** 2)) * np.tanh(v / 0.01) + 20.0 * v
        assert tau == pytest.approx(want, rel=1e-14, abs=1e-12)
        ref = [a[0] for a in friction_torques(table, np.array([v]))]
        np.testing.assert_allclose((tau, d1, d2), ref, rtol=1e-12, atol=1e-9)
        h = 1e-7
        f = [friction_law(row, v + s * h) for s in (1, -1)]
        assert d1 == pytest.approx((f[0][0] - f[1][0]) / (2 * h), rel=1e-6, abs=1e-3)
        assert d2 == pytest.approx((f[0][1] - f[1][1]) / (2 * h), rel=1e-6, abs=1e-1)
    assert friction_law(row, 5.0)[0] == pytest.approx(100.0 + 20.0 * 5.0, rel=1e-12)
    assert friction_law(row, 0.0)[0] == 0.0



def test_friction_law_without_coulomb_level_is_the_viscous_term_exactly():
    """A row without Coulomb level and Stribeck excess (a URDF damping, or no friction) takes the
    law's short path (no tanh): the same numbers as the numpy route's full formula, bit for bit."""
    for row in (np.array([0.0, 0.1, 0.0, 0.2, 0.01]), np.array([0.0, 0.0, 0.0, 0.2, 0.01])):
        for v in (-3.0, -1e-3, 0.0, 2e-3, 1.5):
            ref = [a[0] for a in friction_torques(row[None], np.array([v]))]
            np.testing.assert_array_equal(friction_law(row, v), ref)


# ---------------------------------------------------------------- the description

def test_urdf_dynamics_and_friction_elements_are_read(crane):
    _, robot, _ = crane
    fr = robot.friction
    for j in robot.tree_joints:
        row = fr.row(j)
        if j in ("lift", "tilt", "extension"):
            assert fr.sources[robot.tree_joints.index(j)] == "friction"
            np.testing.assert_array_equal(row[[0, 1, 4]], [4000.0, 3000.0, 0.01])
        elif robot.tree.joint_types[robot.tree_joints.index(j)] == "revolute":
            np.testing.assert_array_equal(row[[0, 1]], [2.0, 0.1])
    assert load_robot(_text("heavy_duty_4dof")).friction is None


def test_hiab_examples_carry_the_crane_friction_curves():
    """The generated HIAB examples: the cylinders' curves of hydraulics.json (Coulomb 4000 N,
    viscous 3000 N s/m, no Stribeck excess) and the pivots' damping 0.1 N m s/rad."""
    import json
    with open(os.path.join(ROBOTS, "hiab_xs031", "hydraulics.json"), encoding="utf-8") as f:
        data = json.load(f)
    robot = load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))
    for cyl in ("lift", "tilt", "extension"):
        c = data["friction"][data["cylinders"][cyl]["friction"]]
        np.testing.assert_array_equal(robot.friction.row(cyl)[:3], [c["FCp"], c["bp"], c["FSp"]])
    for j in ("lift_link_joint", "lift_cylinder_joint", "tilt_link_joint", "tilt_cylinder_joint"):
        assert robot.friction.row(j)[1] == data["revolute_joint_damping"]
    assert robot.friction.row("slew")[:3].tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("element, culprit", [
    ('<friction joint="lift" coulomb="-1"/>', 'coulomb="-1"'),
    ('<friction joint="lift" viscous="nan"/>', 'viscous="nan"'),
    ('<friction joint="lift" smoothing_velocity="0"/>', 'smoothing_velocity="0"'),
    ('<friction joint="lift" stribeck="10" stribeck_velocity="-0.1"/>', 'stribeck_velocity="-0.1"'),
    ('<friction joint="lift" coulomb="1e12"/>', 'coulomb="1e12"'),
    ('<friction joint="lift" colomb="1"/>', "colomb"),
    ('<friction joint="no_such_joint" coulomb="1"/>', "no_such_joint"),
    ('<friction coulomb="1"/>', "no joint attribute"),
    ('<friction joint="lift" coulomb="1"/><friction joint="lift" viscous="1"/>', "given twice"),
])
def test_bad_friction_elements_are_refused_naming_them(element, culprit):
    text = _text("linear_4bar_1dof").replace("<pkm_dynamics>\n", "<pkm_dynamics>\n" + element, 1)
    with pytest.raises(DescriptionError, match=re.escape(culprit)) as err:
        load_robot(text)
    assert "friction" in str(err.value)


def test_bad_urdf_dynamics_and_two_sources_are_refused():
    text = _text("linear_4bar_1dof")
    bad = re.sub(r'(<joint name="lift_link_joint" type="revolute">)', r'\1<dynamics damping="-0.5"/>', text)
    with pytest.raises(DescriptionError, match=r"joint 'lift_link_joint' <dynamics>: damping"):
        load_robot(bad)
    both = re.sub(r'(<joint name="lift" type="prismatic">)', r'\1<dynamics friction="10"/>', text)
    both = both.replace("<pkm_dynamics>\n", '<pkm_dynamics>\n<friction joint="lift" coulomb="1"/>', 1)
    with pytest.raises(DescriptionError, match=r'<friction joint="lift">: the joint has a URDF <dynamics>'):
        load_robot(both)


# ---------------------------------------------------------------- module chains

def test_zero_friction_takes_the_frictionless_path_bit_for_bit(crane):
    """URDF ``<dynamics damping="0" friction="0">`` everywhere is no friction: no table, and every
    call returns the frictionless robot's numbers bit for bit (the compiled integrator too)."""
    plain, _, _ = crane
    zero = load_robot(frictional(_text("heavy_duty_4dof"), damping=0.0, coulomb=0.0))
    assert zero.friction is None
    rng = np.random.default_rng(3)
    x, xd, xdd, _ = chain_states(plain, rng, 4, (0.2, 0.8), rate_scale=0.3)
    for a, b in ((plain.inverse_dynamics(x, xd, xdd), zero.inverse_dynamics(x, xd, xdd)),
                 (plain.forward_dynamics(x, xd, xdd * 1e4), zero.forward_dynamics(x, xd, xdd * 1e4)),
                 (plain.forward_dynamics(x[0], xd[0], xdd[0]), zero.forward_dynamics(x[0], xd[0], xdd[0])),
                 (plain.inverse_dynamics_derivatives(x, xd, xdd).d_x,
                  zero.inverse_dynamics_derivatives(x, xd, xdd).d_x),
                 (plain.joint_reactions(x, xd, xdd * 1e4).joint_wrenches,
                  zero.joint_reactions(x, xd, xdd * 1e4).joint_wrenches),
                 (plain.simulate(x[0], 0 * xd[0], 0.05).x, zero.simulate(x[0], 0 * xd[0], 0.05).x)):
        assert np.array_equal(a, b)


def _G_by_differences(robot, x, h=1e-6):
    """``G = dq/dx`` (nq, n) by central differences of the tree positions (no friction code)."""
    cols = []
    for e in np.eye(robot.n):
        cols.append((robot.tree_state(x + h * e)[0] - robot.tree_state(x - h * e)[0]) / (2 * h))
    return np.array(cols).T


def test_actuator_friction_is_G_transpose_tau_and_balances_the_power(crane):
    """``u_f = ID_friction - ID`` equals ``G^T tau_f(qd)`` with G from differences of the tree
    positions and tau_f from the numpy law at the tree rates; its power ``xd^T u_f`` equals the
    joints' ``qd^T tau_f`` (what friction dissipates)."""
    plain, robot, _ = crane
    rng = np.random.default_rng(5)
    for x, xd, xdd, _ in zip(*chain_states(robot, rng, 6, (0.2, 0.8), rate_scale=0.2)):
        uf = robot.inverse_dynamics(x, xd, xdd) - plain.inverse_dynamics(x, xd, xdd)
        _, qd, _ = robot.tree_state(x, xd)
        tau = friction_torques(robot.friction.table, qd)[0]
        assert _rel(uf, _G_by_differences(robot, x).T @ tau) < 1e-7
        assert xd @ uf == pytest.approx(qd @ tau, rel=1e-10, abs=1e-9)
        assert qd @ tau > 0.0                       # friction dissipates


def test_crane_with_friction_against_pinocchio_kkt_with_joint_friction_torques(crane):
    """ID: Pinocchio's route ``rnea + tau_f = S^T u + G^T lambda`` (its own loop rows and
    closure); FD: the KKT system of the tree with ``S^T u - tau_f`` as joint torques."""
    _, robot, text = crane
    ref = PinocchioLoops(text, robot.tree_joints, robot.tree.gravity)
    rng = np.random.default_rng(7)
    for x, xd, xdd, _ in zip(*chain_states(robot, rng, 4, (0.2, 0.8), rate_scale=0.3)):
        q, qd, qdd = ref.close(x, xd, xdd)
        tau_f = friction_torques(robot.friction.table, qd)[0]
        u0, _ = ref.inverse_dynamics(q, qd, qdd)
        th = ref.to_pin(q)
        ref.kinematics(th)
        _, G, _ = ref.loop_rows(th)
        A = np.hstack([ref._actuator_rows().T, G.T @ ref._constraint_basis(G)])
        uf = np.linalg.lstsq(A, ref.to_pin(tau_f), rcond=None)[0][:robot.n]
        assert _rel(robot.inverse_dynamics(x, xd, xdd), u0 + uf) < 1e-9
        f = u0 + rng.normal(scale=2000.0, size=robot.n)
        tau = np.zeros(robot.tree.nq)
        tau[[robot.tree_joints.index(j) for j in robot.actuated_joints]] = f
        qdd_ref, _ = kkt_forward_dynamics(robot.description, q, qd, tau - tau_f)
        assert _rel(robot.tree_state(x, xd, robot.forward_dynamics(x, xd, f))[2], qdd_ref) < 1e-9


def test_round_trip_and_batches_with_friction(crane):
    _, robot, _ = crane
    rng = np.random.default_rng(9)
    X, XD, XDD, W = chain_states(robot, rng, 5, (0.2, 0.8), rate_scale=0.3)
    U = robot.inverse_dynamics(X, XD, XDD, wrench=W)
    assert _rel(robot.forward_dynamics(X, XD, U, wrench=W), XDD) < 1e-11
    for i in range(len(X)):
        assert np.array_equal(robot.inverse_dynamics(X[i], XD[i], XDD[i], wrench=W[i]), U[i])
        assert _rel(robot.forward_dynamics(X[i], XD[i], U[i], wrench=W[i]), XDD[i]) < 1e-11


def test_one_state_with_friction_is_one_kernel_call_with_the_layered_numbers(crane):
    """One state of FD and ID with friction runs in one kernel call (the thread knows the entry
    point of ``chain_dynamics_friction_one`` after it) and gives the numbers of the layered route
    (``u_f`` by the friction kernel alone, then the frictionless robot's call) bit for bit, and
    those of the numpy reference route (:mod:`module_chain_dynamics`) plus ``u_f`` to 1e-12."""
    from pkm_dynamics.core.module_chain import chain_friction_kernels as FK
    from pkm_dynamics.core.module_chain.chain_friction import chain_friction_forces
    from pkm_dynamics.core.module_chain.module_chain_dynamics import (chain_inverse_dynamics,
                                                                     parallel_serial_forward_dynamics)
    plain, robot, _ = crane
    rng = np.random.default_rng(13)
    for x, xd, xdd, _ in zip(*chain_states(robot, rng, 6, (0.2, 0.8), rate_scale=0.3)):
        uf = chain_friction_forces(robot.compiled, robot.friction.table, x, xd)[0]
        u = robot.inverse_dynamics(x, xd, xdd)
        assert np.array_equal(u, plain.inverse_dynamics(x, xd, xdd) + uf)
        assert _rel(u, chain_inverse_dynamics(robot.chain, x, xd, xdd) + uf) < 1e-12
        f = u + rng.normal(scale=2000.0, size=robot.n)
        a = robot.forward_dynamics(x, xd, f)
        assert np.array_equal(a, plain.forward_dynamics(x, xd, f - uf))
        assert _rel(a, parallel_serial_forward_dynamics(robot.chain, x, xd, f - uf)) < 1e-12
    assert robot.compiled.data().entries.known(FK.chain_dynamics_friction_one) is not None


def test_one_state_with_friction_in_a_new_thread_first_and_then_through_the_entry_point(crane):
    """A thread's first call with friction goes through the dispatcher, its next calls through
    the per-thread arguments of :func:`chain_friction.friction_call`: both give the main thread's
    numbers bit for bit, and a bad state on the short path still raises the frictionless robot's
    error."""
    import threading
    from pkm_dynamics.core.module_chain.chain_friction import friction_call
    plain, robot, _ = crane
    rng = np.random.default_rng(21)
    X, XD, XDD, _ = chain_states(robot, rng, 3, (0.2, 0.8), rate_scale=0.3)
    want = [(robot.inverse_dynamics(x, xd, xdd), robot.forward_dynamics(x, xd, xdd * 1e3)) for x, xd, xdd in
            zip(X, XD, XDD)]
    got, calls, errors = [], [], []

    def work():
        calls.append(friction_call(robot.compiled))                 # None: no entry point yet
        for x, xd, xdd in zip(X, XD, XDD):
            got.append((robot.inverse_dynamics(x, xd, xdd), robot.forward_dynamics(x, xd, xdd * 1e3)))
        calls.append(friction_call(robot.compiled))
        try:
            robot.forward_dynamics(np.array([0.3, 0.25, 0.3, 1.5]), np.zeros(4), np.zeros(4))
        except Exception as exc:                                     # noqa: BLE001 (compared below)
            errors.append(exc)
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert calls[0] is None and calls[1] is not None
    for (u, a), (u2, a2) in zip(want, got):
        assert np.array_equal(u, u2) and np.array_equal(a, a2)
    with pytest.raises(Exception) as plain_error:
        plain.forward_dynamics(np.array([0.3, 0.25, 0.3, 1.5]), np.zeros(4), np.zeros(4))
    assert type(errors[0]) is type(plain_error.value) and str(errors[0]) == str(plain_error.value)


@pytest.mark.parametrize("which", ["inverse", "forward"])
def test_derivatives_with_friction_against_central_differences(crane, which):
    _, robot, _ = crane
    rng = np.random.default_rng(11)
    x, xd, xdd, _ = chain_states(robot, rng, None, (0.2, 0.8), rate_scale=0.3)
    if which == "inverse":
        call, third, d = robot.inverse_dynamics, xdd, robot.inverse_dynamics_derivatives(x, xd, xdd)
    else:
        third = robot.inverse_dynamics(x, xd, xdd)
        call, d = robot.forward_dynamics, robot.forward_dynamics_derivatives(x, xd, third)
    h = 1e-6
    for arg, got in ((0, d.d_x), (1, d.d_xd), (2, d.d_u)):
        num = []
        for e in np.eye(robot.n):
            args_p, args_m = [x, xd, third], [x, xd, third]
            args_p[arg], args_m[arg] = args_p[arg] + h * e, args_m[arg] - h * e
            num.append((call(*args_p) - call(*args_m)) / (2 * h))
        assert _rel(got, np.array(num).T) <= 1e-6, (which, arg)


def test_hoid_with_friction_against_differences_of_the_inverse_dynamics(crane):
    """``u, du, ddu`` of the HOID with friction: ``u`` equals the ID with friction, ``du`` and
    ``ddu`` the central differences (4th order) of that ID along the polynomial motion."""
    _, robot, _ = crane
    x0 = np.array([0.3, 0.25, 0.3, 0.5])
    c = np.array([[0.05, -0.04, 0.03, 0.06], [0.2, 0.1, -0.15, 0.1], [0.3, -0.2, 0.1, 0.2], [0.4, 0.3, -0.2, 0.1]])

    def motion(t):
        p = [x0 + c[0] * t + c[1] * t ** 2 / 2 + c[2] * t ** 3 / 6 + c[3] * t ** 4 / 24,
             c[0] + c[1] * t + c[2] * t ** 2 / 2 + c[3] * t ** 3 / 6, c[1] + c[2] * t + c[3] * t ** 2 / 2,
             c[2] + c[3] * t, c[3]]
        return p
    res = robot.higher_order_inverse_dynamics(*motion(0.0))
    u = lambda t: robot.inverse_dynamics(*motion(t)[:3])      # noqa: E731
    h = 1e-3
    assert _rel(res.u, u(0.0)) < 1e-11
    assert _rel(res.du, (8 * (u(h) - u(-h)) - u(2 * h) + u(-2 * h)) / (12 * h)) < 1e-6     # O(h^4)
    assert _rel(res.ddu, (16 * (u(h) + u(-h)) - 30 * u(0.0) - u(2 * h) - u(-2 * h)) / (12 * h * h)) < 1e-6


def _energy(plain, x0, x, xd, hold):
    """``T + V - hold^T x`` (relative to ``x0``): ``T = xd^T M xd / 2`` with ``M = dID/dxdd`` and
    ``V`` the line integral of the gravity forces ``ID(x, 0, 0)`` from ``x0`` (Gauss-Legendre)."""
    s, w = np.polynomial.legendre.leggauss(20)
    s, w, z = 0.5 * (s + 1.0), 0.5 * w, np.zeros(len(x))
    dx = x - x0
    V = sum(wi * plain.inverse_dynamics(x0 + si * dx, z, z) @ dx for si, wi in zip(s, w))
    M = plain.inverse_dynamics_derivatives(x, z, z).d_u
    return 0.5 * xd @ M @ xd + V - hold @ dx


def test_simulate_with_friction_dissipates_what_friction_takes(crane):
    """Under constant efforts ``hold`` the frictionless crane keeps ``T + V - hold^T x``; with
    friction it loses exactly the friction work ``int xd^T u_f dt`` (``u_f`` from the ID with and
    without friction).  The compiled integrator equals the Python route (RK4 on
    ``robot.forward_dynamics``) to round-off."""
    plain, robot, _ = crane
    x0, xd0 = np.array([0.3, 0.25, 0.3, 0.5]), np.array([0.1, 0.05, -0.04, 0.05])
    z = np.zeros(4)
    hold = plain.inverse_dynamics(x0, z, z)
    run = robot.simulate(x0, xd0, 0.2, efforts=hold, dt=1e-4)     # resolves the friction near rest
    assert run.compiled
    from pkm_dynamics.core.simulation.reference import Dynamics, rk4
    Y, _ = rk4(Dynamics(robot, lambda t, x, xd: hold, None, None), np.concatenate([x0, xd0]), run.t)
    assert _rel(run.x, Y[:, :4]) < 1e-12 and _rel(run.xd, Y[:, 4:]) < 1e-12
    free = plain.simulate(x0, xd0, 0.2, efforts=hold, dt=1e-4)
    e0 = _energy(plain, x0, x0, xd0, hold)
    drift = _energy(plain, x0, free.x[-1], free.xd[-1], hold) - e0
    lost = e0 - _energy(plain, x0, run.x[-1], run.xd[-1], hold)
    power = np.array([xd @ (robot.inverse_dynamics(x, xd, z) - plain.inverse_dynamics(x, xd, z))
                      for x, xd in zip(run.x, run.xd)])
    work = np.trapezoid(power, run.t)
    assert work > 0.0 and lost > 0.0
    assert abs(drift) < 1e-4 * work
    assert lost == pytest.approx(work, rel=1e-3)


def test_reactions_with_friction_carry_each_joints_friction_torque(crane):
    """The compiled chain reactions (paper 000's route) with friction: every tree joint's wrench
    along its screw is its effort less its friction torque (``-tau_f`` for a passive joint), the
    accelerations are the FD's with friction, and the general route (tree + KKT multipliers,
    :mod:`..reactions.reactions`) gives the same wrenches."""
    from pkm_dynamics.core.reactions.reactions import joint_reactions as general
    _, robot, _ = crane
    rng = np.random.default_rng(13)
    x, xd, _, W = chain_states(robot, rng, None, (0.2, 0.8), rate_scale=0.3, wrench_scale=500.0)
    u = robot.inverse_dynamics(x, xd, np.zeros(robot.n)) + rng.normal(scale=2000.0, size=robot.n)
    R = robot.joint_reactions(x, xd, u, wrench=W)
    assert _rel(R.acceleration, robot.forward_dynamics(x, xd, u, wrench=W)) < 1e-12
    _, qd, _ = robot.tree_state(x, xd)
    effort = -friction_torques(robot.friction.table, qd)[0]
    effort[[robot.tree_joints.index(j) for j in robot.actuated_joints]] += u
    along = np.einsum("ij,ij->i", robot.tree.X, R.joint_wrenches)
    assert _rel(along, effort) < 1e-9
    G = general(robot, x, xd, u, wrench=W)
    assert _rel(R.joint_wrenches, G.joint_wrenches) < 1e-8


@pytest.mark.parametrize("call", ["inverse_dynamics", "forward_dynamics", "inverse_dynamics_derivatives",
                                  "joint_reactions"])
def test_bad_states_raise_the_frictionless_robots_errors(crane, call):
    """A state beyond a stroke, a NaN or a wrong shape: the robot with friction raises the error
    (type and message) the frictionless robot raises."""
    plain, robot, _ = crane
    x, z = np.array([0.3, 0.25, 0.3, 0.5]), np.zeros(4)
    for bad in ([0.3, 0.25, 0.3, 1.5], [0.3, np.nan, 0.3, 0.5], [0.3, 0.25, 0.3]):
        args = (np.array(bad), z[:len(bad)], z[:len(bad)])
        with pytest.raises(Exception) as want:
            getattr(plain, call)(*args)
        with pytest.raises(type(want.value)) as got:
            getattr(robot, call)(*args)
        assert str(got.value) == str(want.value)
    with pytest.raises(Exception) as want:
        getattr(plain, call)(x, z, np.zeros(3))
    with pytest.raises(type(want.value), match=re.escape(str(want.value))):
        getattr(robot, call)(x, z, np.zeros(3))
