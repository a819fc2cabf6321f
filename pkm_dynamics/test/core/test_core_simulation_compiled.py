"""The compiled integrators of ``simulate`` (core/simulation/): the whole horizon of a module chain
in one kernel call.  Independent checks: the Python route (the same integrators as Python loops
over ``robot.forward_dynamics``, driven by an equivalent Python controller) to round-off, RK4 and
the semi-implicit Euler method alike; the semi-implicit method converges at first order to a
fine RK4 solution; the schedule against ``np.interp``; the named errors equal the Python
route's; the kernels are in memory once the robot is built."""
import os

import numba
import numpy as np
import pytest

from pkm_dynamics.core.errors import StateError
from pkm_dynamics.core.robot import load_robot
from pkm_dynamics.testing import frictionless
from test_core_simulation import tree_energy

ROBOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "robots")
FOUR = frictionless(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))  # friction: test/core/friction/
RRR = os.path.join(ROBOTS, "planar_3rrr.urdf")
X0 = np.array([0.3, 0.2, 0.25, 0.4])
XD0 = np.array([0.1, 0.02, -0.03, 0.05])
GAINS = np.array([2e4, 4e5, 2e5, 1e5])


@numba.njit
def pd_controller(t, x, xd):
    """A PD law about a slow sinusoid plus constant efforts (the crane's holding efforts at X0,
    filled in by the test through HOLD)."""
    return HOLD + GAINS * (X0 + 0.02 * np.sin(3.0 * t) - x) - 0.1 * GAINS * xd


HOLD = load_robot(FOUR).inverse_dynamics(X0, np.zeros(4), np.zeros(4))


def rel(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.fixture(scope="module")
def crane():
    return load_robot(FOUR)


@pytest.mark.parametrize("method", ["rk4", "semi_implicit"])
def test_constant_efforts_equal_the_python_route(crane, method):
    u = HOLD + np.array([20.0, 500.0, -300.0, 30.0])
    wrench = np.array([0.0, 5.0, 0.0, 0.0, 0.0, -10.0])
    a = crane.simulate(X0, XD0, 0.3, efforts=u, method=method, wrench=wrench)
    b = crane.simulate(X0, XD0, 0.3, controller=lambda t, x, xd: u, method=method, wrench=wrench)
    assert a.compiled and not b.compiled and a.evaluations == b.evaluations
    assert np.ptp(a.x, axis=0).min() > 1e-3                     # every actuator moves
    assert rel(a.x, b.x) <= 1e-12 and rel(a.xd, b.xd) <= 1e-12
    np.testing.assert_array_equal(a.f, np.broadcast_to(u, a.f.shape))


@pytest.mark.parametrize("method", ["rk4", "semi_implicit"])
def test_compiled_controller_equals_the_python_controller(crane, method):
    a = crane.simulate(X0, XD0, 0.4, controller=pd_controller, method=method)
    b = crane.simulate(X0, XD0, 0.4, controller=pd_controller.py_func, method=method)
    assert a.compiled and not b.compiled
    assert np.ptp(a.x, axis=0).min() > 1e-3
    assert rel(a.x, b.x) <= 1e-12 and rel(a.xd, b.xd) <= 1e-12 and rel(a.f, b.f) <= 1e-12


@pytest.mark.parametrize("method", ["rk4", "semi_implicit"])
def test_schedule_is_linear_between_samples(crane, method):
    """A schedule on the output grid against a Python controller interpolating it with np.interp."""
    t = np.linspace(0.0, 0.3, 301)
    F = HOLD + np.outer(np.sin(7.0 * t), [100.0, 5e3, 2e3, 500.0])
    a = crane.simulate(X0, XD0, 0.3, efforts=F, method=method)
    b = crane.simulate(X0, XD0, 0.3, method=method,
                       controller=lambda ti, x, xd: np.array([np.interp(ti, t, c) for c in F.T]))
    assert a.compiled
    np.testing.assert_array_equal(a.t, t)
    np.testing.assert_array_equal(a.f, F)
    assert rel(a.x, b.x) <= 1e-12 and rel(a.xd, b.xd) <= 1e-12


def test_semi_implicit_converges_at_first_order(crane):
    """Final-state error of the semi-implicit method against RK4 at 0.1 ms (itself checked
    against RK4 at 0.2 ms: far below the errors measured) halves with the step."""
    kw = dict(controller=pd_controller)
    fine = crane.simulate(X0, XD0, 0.2, dt=1e-4, **kw)
    assert np.abs(crane.simulate(X0, XD0, 0.2, dt=2e-4, **kw).x[-1] - fine.x[-1]).max() < 1e-9
    err = [np.abs(crane.simulate(X0, XD0, 0.2, dt=dt, method="semi_implicit", **kw).x[-1] - fine.x[-1]).max()
           for dt in (4e-3, 2e-3, 1e-3, 5e-4)]
    assert err[-1] > 1e-7
    ratios = np.array(err[:-1]) / np.array(err[1:])
    assert np.all((ratios > 1.7) & (ratios < 2.3)), ratios


def test_unactuated_crane_energy_under_the_compiled_integrators():
    """Spanning-tree energy (CRBA kinetic + bodies' potential: an independent path) of the crane
    without efforts under gravity: RK4 at 1 ms holds it to 1e-8 of the kinetic energy; the
    semi-implicit method's error is first order: it halves with the step (in the velocities
    ``xd`` of a configuration-dependent mass matrix the method is not symplectic: its energy
    error grows along the run, it is not bounded as for a separable Hamiltonian)."""
    robot = load_robot(FOUR)
    zero = np.zeros(4)
    xd0 = np.array([0.3, 0.05, -0.05, 0.1])

    def energy(s):
        return np.array([tree_energy(robot.tree, *robot.tree_state(x, xd)[:2]) for x, xd in zip(s.x, s.xd)]).T

    s = robot.simulate(X0, xd0, 0.3, efforts=zero)
    E, K = energy(s)
    assert s.compiled and np.ptp(K) > 0.1 * K.max()          # energy exchanged with the potential
    assert np.abs(E - E[0]).max() < 1e-8 * K.max()
    worst = []
    for dt in (2e-3, 1e-3):
        s = robot.simulate(X0, xd0, 0.3, efforts=zero, dt=dt, method="semi_implicit")
        E, K = energy(s)
        worst.append(np.abs(E - E[0]).max() / K.max())
    assert worst[1] > 1e-4 and 1.7 < worst[0] / worst[1] < 2.3, worst


def test_stroke_end_names_joint_and_time_as_the_python_route(crane):
    push = HOLD + np.array([0.0, 0.0, 0.0, 2e4])
    messages = []
    for kw in (dict(efforts=push), dict(controller=lambda t, x, xd: push)):
        with pytest.raises(StateError, match=r"simulation at t = 0\.[0-9]+ s: .*'extension'.*stroke") as exc:
            crane.simulate(X0, np.zeros(4), 2.0, **kw)
        messages.append(str(exc.value))
    assert messages[0] == messages[1]


@numba.njit
def late_nan(t, x, xd):
    out = HOLD.copy()
    if t > 0.05:
        out[2] = np.nan
    return out


@numba.njit
def three_efforts(t, x, xd):
    return HOLD[:3].copy()


@numba.njit
def scalar_effort(t, x, xd):
    return 1.0


def test_bad_efforts_are_named(crane):
    for ctl, when in ((late_nan, "0.0505"), (three_efforts, "0")):   # as the Python route words them
        messages = []
        for c in (ctl, ctl.py_func):
            with pytest.raises(StateError, match=rf"simulation at t = {when} s: the efforts at t = {when} s must be "
                                                 r"4 finite values \(slew, lift, tilt, extension\)") as exc:
                crane.simulate(X0, XD0, 0.1, controller=c)
            messages.append(str(exc.value))
        assert messages[0] == messages[1]
    with pytest.raises(StateError, match="controller scalar_effort returns float64"):
        crane.simulate(X0, XD0, 0.1, controller=scalar_effort)
    F = np.tile(HOLD, (101, 1))
    F[37, 1] = np.inf
    with pytest.raises(StateError, match=r"simulation at t = 0\.037 s: the efforts at t = 0\.037 s must be 4 finite"):
        crane.simulate(X0, XD0, 0.1, efforts=F)
    with pytest.raises(StateError, match=r"schedule has shape \(100, 4\), expected \(101, 4\)"):
        crane.simulate(X0, XD0, 0.1, efforts=F[:100])
    with pytest.raises(StateError, match="efforts at t = 0 s must be 4 finite"):
        crane.simulate(X0, XD0, 0.1, efforts=np.array([1.0, np.nan, 0.0, 0.0]))
    with pytest.raises(StateError, match=r"wrench has shape \(3,\)"):
        crane.simulate(X0, XD0, 0.1, efforts=HOLD, wrench=np.zeros(3))
    messages = []
    for kw in (dict(efforts=HOLD), dict(controller=lambda t, x, xd: HOLD)):
        with pytest.raises(StateError, match=r"simulation at t = 0 s: .*wrench") as exc:
            crane.simulate(X0, XD0, 0.1, wrench=np.array([0, 0, 0, 0, 0, np.nan]), **kw)
        messages.append(str(exc.value))
    assert messages[0] == messages[1]


PROBE = """
import sys
import numpy as np
from numba.core import event
from pkm_dynamics.core.robot import load_robot
robot = load_robot(sys.argv[1])
assert "pkm_dynamics.core.simulation.simulation_kernels" in sys.modules
SK = sys.modules["pkm_dynamics.core.simulation.simulation_kernels"]
assert SK.integrate.signatures and SK.integrate_controlled.signatures
x0, u = np.array([0.3, 0.2, 0.25, 0.4]), np.array(sys.argv[2:], dtype=float)
with event.install_recorder("numba:compile") as rec:
    robot.simulate(x0, np.zeros(4), 0.01, efforts=u)
    robot.simulate(x0, np.zeros(4), 0.01, efforts=np.tile(u, (11, 1)), method="semi_implicit")
    robot.simulate(x0, np.zeros(4), 0.01, controller=SK.zero_controller)
print([str(e.data["dispatcher"]) for _, e in rec.buffer if e.is_start])
"""


def test_kernels_are_loaded_when_the_robot_is_built():
    """In a fresh process: building the crane loads both integrator entries; simulating with a
    constant, a schedule and a compiled controller then compiles nothing."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", PROBE, FOUR, *map(repr, HOLD.tolist())], capture_output=True,
                         text=True, timeout=600, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_pkm_takes_every_effort_source_through_the_python_route():
    """3-RRR: a schedule and a compiled controller give what the equivalent Python controller gives."""
    robot = load_robot(RRR, gravity=[0.0, -9.80665, 0.0])
    t = np.linspace(0.0, 0.02, 5)
    F = np.outer(1.0 + 10.0 * t, [0.3, -0.2, 0.1])

    @numba.njit
    def ctl(ti, x, xd):
        return np.array([0.3, -0.2, 0.1]) - 0.5 * xd

    for method in ("rk4", "semi_implicit"):
        a = robot.simulate(np.zeros(3), np.zeros(3), 0.02, efforts=F, dt=0.005, method=method)
        b = robot.simulate(np.zeros(3), np.zeros(3), 0.02, dt=0.005, method=method,
                           controller=lambda ti, x, xd: np.array([np.interp(ti, t, c) for c in F.T]))
        assert not a.compiled and np.abs(a.x[-1]).max() > 1e-6
        np.testing.assert_allclose(a.x, b.x, rtol=0, atol=1e-12)
        c = robot.simulate(np.zeros(3), np.zeros(3), 0.02, controller=ctl, dt=0.005, method=method)
        d = robot.simulate(np.zeros(3), np.zeros(3), 0.02, controller=ctl.py_func, dt=0.005, method=method)
        np.testing.assert_array_equal(c.x, d.x)
