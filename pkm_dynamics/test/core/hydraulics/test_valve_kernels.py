"""The compiled valve-cylinder map (:mod:`~pkm_dynamics.core.hydraulics.valve_kernels`, what the
API calls) against its numpy route (:mod:`~pkm_dynamics.core.hydraulics.valve_reference`), to
1e-12: the steady level (H5) with the compressibility term, the pressures as given (H6), the
carried pressures' Heun step (alone, with the stream's restart, and along a trajectory), the
reverse map (H1) and the limits named; and the kernels in memory once the crane is built (no
compilation at the first request)."""
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.core.hydraulics.hydraulic_feedforward import force_rate
from pkm_dynamics.core.hydraulics.hydraulic_trajectory import pressure_step, pressure_trajectory
from pkm_dynamics.core.hydraulics.valve_cylinder import HydraulicLimitError, cylinder_force, hydraulic_state
from pkm_dynamics.core.hydraulics.valve_reference import reference_state, reference_step

from hiab_motions import hiab_test_motion

ROBOTS = Path(__file__).resolve().parents[3] / 'robots'
FIELDS = ('force', 'force_rate', 'pressure_a', 'pressure_b', 'flow_a', 'flow_b', 'spool', 'hydraulic_power',
          'volume_a', 'volume_b', 'pressure_rate_a', 'pressure_rate_b')


@pytest.fixture(scope='module')
def crane():
    return load_robot(str(ROBOTS / 'heavy_duty_4dof.urdf'))


def _states(robot, rng, batch):
    """States inside the strokes with forces and rates from inside the valves' reach to beyond
    the supply, some at rest (v = 0 exactly: xd = 0 and no force rate)."""
    joints = [robot.tree.joint_index(j) for j in robot.actuated_joints]
    lo, hi = robot.tree.lower[joints], robot.tree.upper[joints]
    lo, hi = np.where(np.isfinite(lo), lo, -1.0), np.where(np.isfinite(hi), hi, 1.0)
    x = lo + (hi - lo) * rng.uniform(0.05, 0.95, (batch, len(lo)))
    xd = rng.normal(0, 0.1, (batch, len(lo)))
    F = rng.uniform(-1.5e5, 2e5, (batch, len(lo)))
    Fd = rng.normal(0, 2e4, (batch, len(lo)))
    xd[:10], Fd[:10] = 0.0, 0.0
    return x, xd, F, Fd


def assert_same(h, ref):
    """Every field to 1e-12 of its scale, and the same limits named in the same order."""
    for name in FIELDS:
        a, b = getattr(h, name), getattr(ref, name)
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * max(np.abs(b).max(), 1e-300), err_msg=name)
    assert [(v.joint, v.quantity, v.limit, v.point) for v in h.violations] == \
        [(v.joint, v.quantity, v.limit, v.point) for v in ref.violations]
    np.testing.assert_allclose([v.value for v in h.violations], [v.value for v in ref.violations], rtol=1e-12)


def test_steady_and_given_pressures_agree_with_numpy(crane):
    """(H1)-(H6) of 300 samples (batch, one sample, a (3, 100) batch), every limit kind among
    them, against the numpy route."""
    m = crane.hydraulic_model
    x, xd, F, Fd = _states(crane, np.random.default_rng(26), 300)
    h = hydraulic_state(m, x, xd, F, Fd, check=False)
    assert_same(h, reference_state(m, x, xd, F, Fd, check=False))
    assert {v.quantity for v in h.violations} == {'pressure_a', 'pressure_b', 'spool'}
    assert {v.limit for v in h.violations} >= {m.p_s, m.p_t, 1.0, -1.0}
    assert_same(hydraulic_state(m, x[13], xd[13], F[13], None, check=False),
                reference_state(m, x[13], xd[13], F[13], None, check=False))
    shape = (3, 100, x.shape[1])
    assert_same(hydraulic_state(m, *(a.reshape(shape) for a in (x, xd, F, Fd)), check=False),
                reference_state(m, *(a.reshape(shape) for a in (x, xd, F, Fd)), check=False))
    given = h.pressure_a + np.random.default_rng(1).uniform(-3e5, 3e5, h.pressure_a.shape)
    assert_same(hydraulic_state(m, x, xd, F, Fd, check=False, pressure_a=given),
                reference_state(m, x, xd, F, Fd, check=False, pressure_a=given))
    with pytest.raises(HydraulicLimitError) as compiled:
        hydraulic_state(m, x, xd, F, Fd)
    with pytest.raises(HydraulicLimitError) as numpy_route:
        reference_state(m, x, xd, F, Fd)
    assert str(compiled.value) == str(numpy_route.value)


def test_carried_pressures_agree_with_numpy(crane):
    """The Heun step (H6) from a carried state, and the HIAB data's test motion 1 (1 ms samples,
    velocity reversals among them) carried from the steady level or from given pressures, against
    the numpy route's steps."""
    m = crane.hydraulic_model
    times = 0.7 + 1e-3 * np.arange(200)                 # the tilt reverses at pi/4 s
    X = hiab_test_motion(times, 1)
    x, xd = X[0], X[1]
    F, Fd = force_rate(crane, *X)
    for start in (None, reference_state(m, x[0], xd[0], F[0], Fd[0], check=False).pressure_a + 1e5):
        ref = [reference_state(m, x[0], xd[0], F[0], Fd[0], check=False, pressure_a=start)]
        for k in range(1, 200):
            ref.append(reference_step(m, ref[-1], 1e-3, x[k], xd[k], F[k], Fd[k]))
            assert_same(pressure_step(m, ref[-2], 1e-3, x[k], xd[k], F[k], Fd[k]), ref[-1])
        h = pressure_trajectory(m, times, x, xd, F, Fd, pressure_a0=start, check=False)
        for name in FIELDS:
            want = np.stack([getattr(r, name) for r in ref])
            np.testing.assert_allclose(getattr(h, name), want, rtol=1e-12, atol=1e-12 * np.abs(want).max(),
                                       err_msg=name)
        want = [(v.joint, v.quantity, v.limit, k) for k, r in enumerate(ref) for v in r.violations]
        assert [(v.joint, v.quantity, v.limit, v.point) for v in h.violations] == want


def test_restart_takes_the_steady_level(crane):
    """The stream's restart: a carried pressure beyond the supply gives the steady level of
    (H5) for the whole sample; one the valve holds is carried as without restart."""
    m = crane.hydraulic_model
    x, xd, F, Fd = (a[20] for a in _states(crane, np.random.default_rng(3), 40))
    F = np.clip(F, -1e4, 1e4)
    steady = reference_state(m, x, xd, F, Fd, check=False)
    assert not steady.violations
    held = reference_state(m, x, xd, F, Fd, check=False, pressure_a=steady.pressure_a + 1e4)
    assert_same(pressure_step(m, held, 1e-3, x, xd, F, Fd, restart=True), reference_step(m, held, 1e-3, x, xd, F, Fd))
    away = reference_state(m, x, xd, F, Fd, check=False, pressure_a=np.where(np.arange(m.n) == 1, 2 * m.p_s, 1e6))
    carried = reference_step(m, away, 1e-3, x, xd, F, Fd)
    assert any(v.quantity != 'spool' for v in carried.violations)
    assert_same(pressure_step(m, away, 1e-3, x, xd, F, Fd), carried)
    assert_same(pressure_step(m, away, 1e-3, x, xd, F, Fd, restart=True), steady)
    nan = reference_state(m, x, xd, F, Fd, check=False, pressure_a=np.full(m.n, np.nan))
    assert_same(pressure_step(m, nan, 1e-3, x, xd, F, Fd, restart=True), steady)


def test_reverse_map_is_the_force_balance(crane):
    """Pressures -> force by the kernel equals A_A p_A - A_B p_B written out, to 1e-12."""
    m = crane.hydraulic_model
    rng = np.random.default_rng(2)
    pa, pb = rng.uniform(1e6, 19e6, (2, 50, m.n))
    spec = crane.description.hydraulics
    want = np.array([c.area_a for c in spec.cylinders]) * pa - np.array([c.area_b for c in spec.cylinders]) * pb
    np.testing.assert_allclose(cylinder_force(m, pa, pb), want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    np.testing.assert_allclose(cylinder_force(m, pa[0], pb[0]), want[0], rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_valve_kernels_are_loaded_when_the_crane_is_built():
    """In a fresh process, building the HIAB crane puts every valve kernel in memory (loaded from
    the cache or compiled then), before any hydraulic call."""
    code = ("import sys; from pkm_dynamics.core import load_robot; "
            "from pkm_dynamics.core.hydraulics import valve_kernels as V; "
            f"load_robot({str(ROBOTS / 'heavy_duty_4dof.urdf')!r}); "
            "names = ('hydraulic_states', 'pressure_step_state', 'pressure_steps', 'cylinder_forces'); "
            "print([n for n in names if not getattr(V, n).signatures])")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == '[]', run.stdout
