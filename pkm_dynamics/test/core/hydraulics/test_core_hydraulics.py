"""Hydraulic actuators (issue 27 items 1, 2): the ``<hydraulics>`` description, the map from
motion and force to pressures, flows, spool and power, and the reverse map, each against a
route that does not share its code:

* the HIAB examples carry the numbers of ``hiab_xs031/hydraulics.json``, read here;
* the map's answer satisfies the valve's orifice equations, the force balance and the chamber
  continuity written out here (residuals at round-off), and pressures -> force -> pressures
  round-trips to 1e-12;
* the force rate is the higher-order inverse dynamics' ``du`` (paper 002, the Taylor route);
* a hydraulic simulation of the HIAB crane written here (scipy's integrator over the robot's
  public forward dynamics plus the chamber pressure dynamics and the valves' orifice flows,
  optionally the spool dynamics) driven by the spool commands of the feedforward tracks the
  data's test motion.
"""
import json
from pathlib import Path
import re

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicSpline

from pkm_dynamics.core import DescriptionError, StateError, load_robot, parse_description
from pkm_dynamics.core.description.examples import module_chain_urdf
from pkm_dynamics.core.hydraulics.hydraulic_feedforward import force_rate
from pkm_dynamics.core.hydraulics.valve_cylinder import HydraulicLimitError, cylinder_force, hydraulic_state

from hiab_motions import hiab_test_motion

ROBOTS = Path(__file__).resolve().parents[3] / 'robots'
HYDRAULICS = json.loads((ROBOTS / 'hiab_xs031' / 'hydraulics.json').read_text())
CRANE = (ROBOTS / 'heavy_duty_4dof.urdf').read_text()


@pytest.fixture(scope='module')
def crane():
    return load_robot(str(ROBOTS / 'heavy_duty_4dof.urdf'))


def test_hiab_examples_carry_the_data():
    """Both crane examples carry the cylinders, valves, supply, return and bulk modulus of
    hydraulics.json (areas from the diameters, K = Q_N / sqrt(dp_N))."""
    for name, joints in (('heavy_duty_4dof', ('lift', 'tilt', 'extension')), ('linear_4bar_1dof', ('lift',))):
        h = parse_description(str(ROBOTS / f'{name}.urdf')).hydraulics
        assert h.joints == joints
        assert (h.supply_pressure, h.return_pressure, h.bulk_modulus) == (
            HYDRAULICS['supply_pressure'], HYDRAULICS['return_pressure'], HYDRAULICS['oil_bulk_modulus'])
        for c, v in zip(h.cylinders, h.valves):
            data = HYDRAULICS['cylinders'][c.joint]
            valve = HYDRAULICS['valves'][data['valve']]
            D, d = data['piston_diameter'], data['rod_diameter']
            assert c.area_a == pytest.approx(np.pi * D**2 / 4, rel=1e-15)
            assert c.area_b == pytest.approx(np.pi * (D**2 - d**2) / 4, rel=1e-14)
            assert (c.stroke, c.retracted, c.dead_volume_a, c.dead_volume_b) == (
                data['stroke'], 0.0, data['dead_volume_A'], data['dead_volume_B'])
            assert v.flow_coefficient == pytest.approx(valve['nominal_flow'] / np.sqrt(valve['nominal_pressure_drop']),
                                                       rel=1e-15)
            assert (v.spool_limit, v.spool_natural_frequency, v.spool_damping, v.spool_slew_rate) == (
                valve['spool_limits'][1], valve['spool_natural_frequency'], valve['spool_damping'],
                valve['spool_slew_rate'])


def test_hiab_examples_are_what_the_generator_writes():
    """The committed crane descriptions are make_hiab_urdfs.py's output for the data beside it
    (the hydraulics included): regenerating changes nothing."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('make_hiab_urdfs', ROBOTS / 'make_hiab_urdfs.py')
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    data = json.loads(Path(gen.DEFAULT_JSON).read_text())
    for name, four in (('linear_4bar_1dof', False), ('heavy_duty_4dof', True)):
        assert gen.make(data, four, HYDRAULICS) == (ROBOTS / f'{name}.urdf').read_text()


def _edit(old, new):
    assert old in CRANE
    return CRANE.replace(old, new, 1)


LIFT = '<cylinder joint="lift" bore="0.08" rod="0.045"'
SUPPLY = 'supply_pressure="19000000.0" '


@pytest.mark.parametrize('text, match', [
    (_edit(LIFT, '<cylinder joint="lift" bore="-0.08" rod="0.045"'),
     r'<cylinder joint="lift">: bore="-0.08" must be in \(0'),
    (_edit(LIFT, '<cylinder joint="lift" bore="0.08" rod="0.08"'),
     r'<cylinder joint="lift">: rod 0.08 m must be smaller than bore 0.08 m'),
    (_edit(SUPPLY, ''), r"<hydraulics>: missing attribute 'supply_pressure'"),
    (_edit(SUPPLY, 'supply_pressure="5e5" '), r'<hydraulics>: return_pressure .* must be below supply_pressure'),
    (_edit('bulk_modulus="800000000.0"', 'bulk_modulus="nan"'), r'<hydraulics>: bulk_modulus="nan" must be in'),
    (_edit(LIFT, '<cylinder joint="slew" bore="0.08" rod="0.045"'),
     r'<cylinder joint="slew">: joint .slew. is revolute, a cylinder drives a prismatic joint'),
    (_edit('dead_volume_a="0.003"', 'dead_volume_a="-1"'),
     r'<cylinder joint="lift">: dead_volume_a="-1" must be in \[0'),
    (_edit('stroke="0.59"', 'stroke="0.3"'), r'<cylinder joint="lift">: the joint limits .* leave the stroke'),
    (_edit('nominal_pressure_drop="7000000.0" spool_limit="1.0"', 'nominal_pressure_drop="0" spool_limit="1.0"'),
     r'<valve joint="lift">: nominal_pressure_drop="0" must be in \(0'),
    (re.sub(r'\s*<valve joint="tilt"[^>]*/>', '', CRANE), r'<cylinder joint="tilt">: no <valve> meters it'),
])
def test_bad_hydraulic_elements_are_refused(text, match):
    """Impossible values are refused naming the element (and its joint) and the attribute."""
    with pytest.raises(DescriptionError, match=match):
        parse_description(text)


def _states(robot, rng, batch):
    """Random states inside the strokes, forces inside the valve's reach, force rates."""
    lo, hi = robot.tree.lower[[robot.tree.joint_index(j) for j in robot.actuated_joints]], \
        robot.tree.upper[[robot.tree.joint_index(j) for j in robot.actuated_joints]]
    lo, hi = np.where(np.isfinite(lo), lo, -1.0), np.where(np.isfinite(hi), hi, 1.0)
    x = lo + (hi - lo) * rng.uniform(0.05, 0.95, (batch, len(lo)))
    xd = rng.normal(0, 0.05, (batch, len(lo)))
    F = rng.uniform(-2e4, 5e4, (batch, len(lo)))
    Fd = rng.normal(0, 2e4, (batch, len(lo)))
    return x, xd, F, Fd


def test_valve_equations_hold(crane):
    """The answer satisfies, written out here: the orifice flows of a 4/3 valve with one
    coefficient per edge (meter-in from the supply, meter-out to the return), the force balance,
    and the chamber continuity with the pressure rates the flows imply, whose force rate is dF/dt."""
    m = crane.hydraulic_model
    spec = crane.description.hydraulics
    x, xd, F, Fd = _states(crane, np.random.default_rng(27), 200)
    h = hydraulic_state(m, x, xd, F, Fd, check=False)
    ok = np.ones(h.spool.shape, bool)
    for v in h.violations:
        ok[v.point, m.joints.index(v.joint)] = False
    assert ok.sum() > 300
    pS, pT, beta = spec.supply_pressure, spec.return_pressure, spec.bulk_modulus
    for c, (cyl, valve) in enumerate(zip(spec.cylinders, spec.valves)):
        j = crane.actuated_joints.index(cyl.joint)
        s, pa, pb = h.spool[:, c], h.pressure_a[:, c], h.pressure_b[:, c]
        ext = s > 0
        with np.errstate(invalid='ignore'):          # beyond the valve (not compared)
            qa = valve.flow_coefficient * s * np.sqrt(np.where(ext, pS - pa, pa - pT))
            qb = valve.flow_coefficient * s * np.sqrt(np.where(ext, pb - pT, pS - pb))
        k = ok[:, c]
        np.testing.assert_allclose(qa[k], h.flow_a[k, c], rtol=1e-10, atol=1e-16)
        np.testing.assert_allclose(qb[k], h.flow_b[k, c], rtol=1e-10, atol=1e-16)
        np.testing.assert_allclose(cyl.area_a * pa - cyl.area_b * pb, F[:, j], rtol=1e-12, atol=1e-7)
        VA = cyl.dead_volume_a + cyl.area_a * (x[:, j] - cyl.retracted)
        VB = cyl.dead_volume_b + cyl.area_b * (cyl.retracted + cyl.stroke - x[:, j])
        pad = beta / VA * (h.flow_a[:, c] - cyl.area_a * xd[:, j])
        pbd = beta / VB * (-h.flow_b[:, c] + cyl.area_b * xd[:, j])
        np.testing.assert_allclose((cyl.area_a * pad - cyl.area_b * pbd)[k], Fd[k, j], rtol=1e-8, atol=1e-6)
        power = np.where(ext, pS * h.flow_a[:, c] - pT * h.flow_b[:, c], pT * h.flow_a[:, c] - pS * h.flow_b[:, c])
        np.testing.assert_allclose(h.hydraulic_power[:, c], power, rtol=1e-12, atol=1e-9)


def test_pressure_force_round_trip(crane):
    """Pressures -> force -> pressures (and force -> pressures -> force) to 1e-12."""
    m = crane.hydraulic_model
    x, xd, F, Fd = _states(crane, np.random.default_rng(5), 100)
    h = hydraulic_state(m, x, xd, F, Fd, check=False)
    force = cylinder_force(m, h.pressure_a, h.pressure_b)
    np.testing.assert_allclose(force, F[:, m.index], rtol=1e-12, atol=1e-12 * np.abs(F).max())
    u = F.copy()
    u[:, m.index] = force
    back = hydraulic_state(m, x, xd, u, Fd, check=False)
    for a, b in ((back.pressure_a, h.pressure_a), (back.pressure_b, h.pressure_b)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    with pytest.raises(StateError, match="pressure_b of cylinder 'tilt' is nan"):
        cylinder_force(m, h.pressure_a[0], np.array([1e6, np.nan, 1e6]))


def test_force_rate_is_the_hoid_du(crane):
    """dF/dt of the feedforward (chain rule on the ID derivatives) equals the higher-order
    inverse dynamics' du (paper 002's Taylor route for a module chain)."""
    X = hiab_test_motion(np.array([0.3, 2.0]), case=2)
    for k in range(2):
        u, du = force_rate(crane, X[0][k], X[1][k], X[2][k], X[3][k])
        ref = crane.higher_order_inverse_dynamics(X[0][k], X[1][k], X[2][k], X[3][k], np.zeros(4))
        np.testing.assert_allclose(u, ref.u, rtol=1e-10, atol=1e-6)
        np.testing.assert_allclose(du, ref.du, rtol=1e-8, atol=1e-6 * np.abs(ref.du).max())


def test_limits_are_named(crane):
    """What the valve cannot deliver is refused naming cylinder, quantity and limit; with
    check=False the same comes back as ``violations``."""
    X = hiab_test_motion(np.array([1.0]), case=1)[:, 0]
    xd = X[1].copy()
    xd[3] = 0.6                                # extension at 0.6 m/s: more than its valve's flow
    with pytest.raises(HydraulicLimitError, match=r"cylinder 'extension': spool 1\.[0-9]+ is beyond the limit 1 "):
        crane.hydraulics(X[0], xd, X[2], X[3])
    xdd = X[2].copy()
    xdd[1] = 40.0                              # lift accelerating at 40 m/s^2: beyond the supply
    with pytest.raises(HydraulicLimitError,
                       match=r"cylinder 'lift': pressure_a .* Pa is above the supply 1\.9e\+07 Pa"):
        crane.hydraulics(X[0], X[1], xdd, X[3])
    h = crane.hydraulics(X[0], xd, X[2], X[3], check=False)
    assert [(v.joint, v.quantity, v.limit, v.point) for v in h.violations] == [('extension', 'spool', 1.0, 0)]
    assert h.spool[2] == h.violations[0].value > 1.0
    h = crane.hydraulics(X[0], X[1], xdd, X[3], check=False)
    assert ('lift', 'pressure_a', 19e6) in {(v.joint, v.quantity, v.limit) for v in h.violations}
    assert h.spool[0] == 1.0            # beyond the supply: the spool saturated
    assert crane.hydraulics(X[0], X[1], X[2], X[3]).violations == []


def test_robot_without_hydraulics_answers_empty_arrays():
    robot = load_robot(module_chain_urdf(2))
    x = np.full(2, 0.1)
    h = robot.hydraulics(x, x, x, x)
    assert h.joints == () and h.pressure_a.shape == (0,) and h.spool.shape == (0,)


def simulate_crane(robot, case, duration, spool_dynamics, dt=1e-3, carried=True):
    """The HIAB crane driven open loop by the feedforward's spool commands (sampled every
    ``dt``, cubic spline between; the slew, not hydraulic, by its inverse-dynamics torque):
    scipy's DOP853 over the robot's forward dynamics and, per cylinder, the chamber pressures
    ``dp_A/dt = beta/V_A (Q_A - A_A xd)``, ``dp_B/dt = beta/V_B (-Q_B + A_B xd)`` with the
    valve's orifice flows (a negative pressure drop: flow reversed); with ``spool_dynamics``
    the spool follows its command as the data's second-order system (natural frequency,
    damping) with its rate limited to the slew rate; ``carried``: the feedforward with the
    pressures carried along the trajectory (``times``), else each sample's steady-state level.
    Returns ``(t, x_sim, x_ref)``."""
    spec = robot.description.hydraulics
    idx = [robot.actuated_joints.index(c.joint) for c in spec.cylinders]
    A_a = np.array([c.area_a for c in spec.cylinders])
    A_b = np.array([c.area_b for c in spec.cylinders])
    K = np.array([v.flow_coefficient for v in spec.valves])
    V_a0 = np.array([c.dead_volume_a - c.area_a * c.retracted for c in spec.cylinders])
    V_b0 = np.array([c.dead_volume_b + c.area_b * (c.retracted + c.stroke) for c in spec.cylinders])
    pS, pT, beta = spec.supply_pressure, spec.return_pressure, spec.bulk_modulus
    wn = np.array([v.spool_natural_frequency for v in spec.valves])
    zeta = np.array([v.spool_damping for v in spec.valves])
    rate = np.array([v.spool_slew_rate for v in spec.valves])
    t = np.arange(0.0, duration + 0.5 * dt, dt)
    X = hiab_test_motion(t, case)
    h = robot.hydraulics(X[0], X[1], X[2], X[3], times=t if carried else None)
    spool = CubicSpline(t, h.spool)
    slew = CubicSpline(t, robot.inverse_dynamics(X[0], X[1], X[2])[:, 0])

    def root(d):
        return np.sign(d) * np.sqrt(np.abs(d))

    def rhs(time, y):
        x, xd, pa, pb = y[:4], y[4:8], y[8:11], y[11:14]
        command = spool(time)
        s = y[14:17] if spool_dynamics else command
        qa = np.where(s > 0, K * s * root(pS - pa), K * s * root(pa - pT))
        qb = np.where(s > 0, K * s * root(pb - pT), K * s * root(pS - pb))
        u = np.empty(4)
        u[0] = slew(time)
        u[idx] = A_a * pa - A_b * pb
        xc, xdc = x[idx], xd[idx]
        out = [xd, robot.forward_dynamics(x, xd, u), beta / (V_a0 + A_a * xc) * (qa - A_a * xdc),
               beta / (V_b0 - A_b * xc) * (-qb + A_b * xdc)]
        if spool_dynamics:
            sd = y[17:20]
            out += [np.clip(sd, -rate, rate), wn**2 * (command - s) - 2 * zeta * wn * sd]
        return np.concatenate(out)

    y0 = [X[0][0], X[1][0], h.pressure_a[0], h.pressure_b[0]] + ([h.spool[0], np.zeros(3)] if spool_dynamics else [])
    atol = [np.full(4, 1e-10), np.full(4, 1e-9), np.full(6, 1e-2)] + ([np.full(6, 1e-9)] if spool_dynamics else [])
    sol = solve_ivp(rhs, (0.0, t[-1]), np.concatenate(y0), method='DOP853', rtol=1e-10, atol=np.concatenate(atol),
                    t_eval=t, max_step=2e-3)
    assert sol.success, sol.message
    return sol.t, sol.y[:4].T, X[0][:len(sol.t)]


@pytest.fixture(scope='module')
def tracking(crane):
    """Largest tracking errors (slew [rad], cylinders [m]) over the test motion 1, one period:
    the feedforward with the pressures carried along the trajectory, without and with the spool
    dynamics, and with each sample's steady-state level."""
    out = {}
    for key, spool_dynamics, carried in (('carried', False, True), ('spool dynamics', True, True),
                                         ('steady level', False, False)):
        t, xs, xr = simulate_crane(crane, 1, 2 * np.pi, spool_dynamics, carried=carried)
        out[key] = np.abs(xs - xr).max(axis=0)
    return out


def test_hydraulic_simulation_tracks_the_motion(tracking):
    """Open loop on the feedforward's spool commands (pressures carried along the trajectory)
    the simulated crane follows the data's test motion 1 over one period (2 pi s) within 1 mrad
    / 1 mm (issue 27) -- in fact within 1e-7 m, the integrators' accuracy -- with the spool
    dynamics neglected; with them (30 Hz, the valve's lag, not in the feedforward) within 2 mm
    (figures in doc/hydraulics.rst)."""
    assert tracking['carried'][0] <= 1e-3 and tracking['carried'][1:].max() <= 1e-3
    assert tracking['carried'].max() <= 1e-7, tracking['carried']
    assert tracking['spool dynamics'][0] <= 1e-3 and tracking['spool dynamics'][1:].max() <= 2e-3


def test_steady_level_misses_the_reversals(tracking):
    """Each sample's steady-state level instead (the map of the present state, valve_cylinder
    (H5)): the error arises at the velocity reversals, where that level jumps (1-3 mm here);
    what carrying the level as a state removes."""
    err = tracking['steady level']
    assert 0.5e-3 < err[1:].max() <= 4e-3, err
    assert err[1:].max() > 1e3 * tracking['carried'][1:].max()


def test_given_pressures_meet_the_valve(crane):
    """(H6): with chamber A pressures given (off the steady level), the answer still satisfies
    the orifice equations, the force balance and the continuity whose force rate is dF/dt; at
    the steady level it is (H5)."""
    m = crane.hydraulic_model
    spec = crane.description.hydraulics
    x, xd, F, Fd = _states(crane, np.random.default_rng(11), 200)
    steady = hydraulic_state(m, x, xd, F, Fd, check=False)
    same = hydraulic_state(m, x, xd, F, Fd, check=False, pressure_a=steady.pressure_a)
    ok = np.abs(steady.spool) < 0.9 * m.spool_limit
    np.testing.assert_allclose(same.spool[ok], steady.spool[ok], rtol=1e-10)
    shifted = steady.pressure_a + np.random.default_rng(3).uniform(-2e5, 2e5, steady.pressure_a.shape)
    h = hydraulic_state(m, x, xd, F, Fd, check=False, pressure_a=shifted)
    pS, pT, beta = spec.supply_pressure, spec.return_pressure, spec.bulk_modulus
    bad = np.zeros(h.spool.shape, bool)
    for v in h.violations:
        bad[v.point, m.joints.index(v.joint)] = True
    assert (~bad).sum() > 300
    for c, (cyl, valve) in enumerate(zip(spec.cylinders, spec.valves)):
        j = crane.actuated_joints.index(cyl.joint)
        s, pa, pb, k = h.spool[:, c], h.pressure_a[:, c], h.pressure_b[:, c], ~bad[:, c]
        ext = s > 0
        with np.errstate(invalid='ignore'):
            qa = valve.flow_coefficient * s * np.sqrt(np.where(ext, pS - pa, pa - pT))
            qb = valve.flow_coefficient * s * np.sqrt(np.where(ext, pb - pT, pS - pb))
        np.testing.assert_allclose(qa[k], h.flow_a[k, c], rtol=1e-10, atol=1e-16)
        np.testing.assert_allclose(qb[k], h.flow_b[k, c], rtol=1e-10, atol=1e-16)
        np.testing.assert_allclose(cyl.area_a * pa - cyl.area_b * pb, F[:, j], rtol=1e-12, atol=1e-7)
        VA = cyl.dead_volume_a + cyl.area_a * (x[:, j] - cyl.retracted)
        VB = cyl.dead_volume_b + cyl.area_b * (cyl.retracted + cyl.stroke - x[:, j])
        pad = beta / VA * (h.flow_a[:, c] - cyl.area_a * xd[:, j])
        pbd = beta / VB * (-h.flow_b[:, c] + cyl.area_b * xd[:, j])
        np.testing.assert_allclose(pad[k], h.pressure_rate_a[k, c], rtol=1e-12, atol=1e-3)
        np.testing.assert_allclose((cyl.area_a * pad - cyl.area_b * pbd)[k], Fd[k, j], rtol=1e-8, atol=1e-6)


def test_hydraulic_simulation_tracks_between_reversals(crane):
    """Before the first velocity reversal (tilt at pi/4 s) even the steady level tracks within
    0.1 mm."""
    t, xs, xr = simulate_crane(crane, 1, 0.75, False, carried=False)
    assert np.abs(xs - xr).max() <= 1e-4
