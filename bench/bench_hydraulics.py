"""Cost of the hydraulic feedforward outputs per reference, interleaved with the force-only path:
the crane (``heavy_duty_4dof``) on the HIAB data's test motion 1 (``test/hiab_motions.py``),
1 ms samples, the streaming path's core calls and output bytes in this process (no DDS):

* force only: the inverse dynamics of the point and the ``commands`` bytes;
* with ``pressure`` and ``valve``: the same, the jerk of the reference spline to the next
  sample, u and du from the compiled derivatives (``force_rate``), the pressures carried from
  the previous sample (``pressure_step``) and the two outputs' bytes.

    .venv/bin/python bench/bench_hydraulics.py [--repeats N]

Medians and p99 [us] on stdout, and the valve model's share of the hydraulic path.
"""
import argparse
from pathlib import Path
import sys
import time

import numpy as np

from common import machine

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / 'pkm_dynamics' / 'test'))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeats', type=int, default=3)
    args = parser.parse_args()
    from hiab_motions import hiab_test_motion
    from pkm_dynamics.core.hoid.reference_derivatives import hermite_rates
    from pkm_dynamics.core.hydraulics.hydraulic_feedforward import force_rate
    from pkm_dynamics.core.hydraulics.hydraulic_trajectory import pressure_step
    from pkm_dynamics.core.hydraulics.valve_cylinder import hydraulic_state
    from pkm_dynamics.node.model import Model
    text = (HERE.parent / 'pkm_dynamics' / 'robots' / 'heavy_duty_4dof.urdf').read_text()
    model = Model(text, [0.0, 0.0, -9.80665])
    robot, out, m = model.robot, model.ff_outputs, model.robot.hydraulic_model
    t = np.arange(0.0, 2 * np.pi, 1e-3)
    X = hiab_test_motion(t, 1)
    state = [hydraulic_state(m, X[0][0], X[1][0], *force_rate(robot, *(a[0] for a in X)), check=False)]

    def force_only(k):
        return out.commands(robot.inverse_dynamics(X[0][k], X[1][k], X[2][k]))

    def hydraulic(k):
        x, xd, xdd = X[0][k], X[1][k], X[2][k]
        commands = out.commands(robot.inverse_dynamics(x, xd, xdd))
        jerk, _ = hermite_rates(1e-3, np.stack([x, xd, xdd]), np.stack([X[0][k + 1], X[1][k + 1], X[2][k + 1]]))
        u, du = force_rate(robot, x, xd, xdd, jerk)
        t = time.perf_counter()
        state[0] = h = pressure_step(m, state[0], 1e-3, x, xd, u, du)
        valve.append(time.perf_counter() - t)
        return commands, out.pressure(h), out.valve(h)

    valve = []
    force_only(0), hydraulic(1)
    a, b = [], []
    valve.clear()
    for _ in range(args.repeats):
        for k in range(1, len(t) - 1):
            t0 = time.perf_counter()
            force_only(k)
            t1 = time.perf_counter()
            hydraulic(k)
            b.append(time.perf_counter() - t1)
            a.append(t1 - t0)
    a, b = np.array(a) * 1e6, np.array(b) * 1e6
    print(f"machine: {machine()['cpu']}, {machine()['cores']} cores")
    print(f"force only           : median {np.median(a):7.1f} us, p99 {np.percentile(a, 99):8.1f} us")
    print(f"with pressure + valve: median {np.median(b):7.1f} us, p99 {np.percentile(b, 99):8.1f} us "
          f"(+{np.median(b) - np.median(a):.1f} us)")
    c = np.array(valve) * 1e6
    print(f"  of which the valve model (pressure_step): median {np.median(c):7.1f} us, "
          f"p99 {np.percentile(c, 99):8.1f} us")


if __name__ == '__main__':
    main()
