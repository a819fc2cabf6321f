"""The identification accuracy tables of issue 30's closing note: per base parameter the true
value (``K pi`` of the description), the estimate and its standard deviation, from the efforts
of the robot's own inverse dynamics with Gaussian noise of 1 % of each actuator's RMS effort
(seed 0), on the motions of the tests (``test/identification_motions.py``):

* the HIAB crane (heavy_duty_4dof, module chain, actuator space): 10 s of the two-sine motion at
  50 Hz (500 samples);
* the 3-RRR (planar_3rrr, parallel robot, task space): 6 s of two-sine task motion at 50 Hz.

Then the payload estimate of the crane carrying 250 kg at the tool (as the payload tests) from 10
s of stamped states at 250 Hz (10 % jitter, no accelerations: :func:`sampled_motion`), 1 %
noise, seeds 0-4: mass and centre-of-mass errors.

    python bench/identification_accuracy.py

Tables on stdout (a few seconds once the kernels are compiled).
"""
from __future__ import annotations

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "pkm_dynamics"))
sys.path.insert(0, os.path.join(ROOT, "pkm_dynamics", "test"))

from identification_motions import crane_motion, task_motion  # noqa: E402
from pkm_dynamics.core.description.payload import Payload, robot_with_payload  # noqa: E402
from pkm_dynamics.core.identification import (base_parameters, estimate_payload, identify,  # noqa: E402
                                              robot_parameters, sampled_motion)
from pkm_dynamics.core.robot import load_robot  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")
LOAD = Payload(250.0, np.array([0.1, -0.05, 0.2]), np.diag([8.0, 6.0, 5.0]))


def noisy(u, rng):
    """``u`` with Gaussian noise of 1 % of each actuator's RMS effort."""
    return u + 0.01 * np.sqrt((u**2).mean(axis=0)) * rng.normal(size=u.shape)


def accuracy_table(name, motion):
    """Print the base parameters' true value, estimate, sigma and error in sigmas."""
    robot = load_robot(os.path.join(ROBOTS, f"{name}.urdf"))
    states = motion(robot)
    u = robot.inverse_dynamics(*states)
    base = base_parameters(robot)
    truth = base.of(robot_parameters(robot))
    est = identify(robot, *states, noisy(u, np.random.default_rng(0)), base=base)
    z = np.abs(est.parameters - truth) / est.std
    print(f"\n{name}: {len(u)} samples, {base.rank} base parameters, 1 % effort noise (seed 0); "
          f"within 3 sigma: {np.mean(z <= 3):.0%}")
    print(f"{'base parameter':60s} {'true':>12s} {'estimate':>12s} {'sigma':>10s} {'|err|/sigma':>11s}")
    for n, t, e, s, k in zip(est.names, truth, est.parameters, est.std, z):
        print(f"{n[:60]:60s} {t:12.5g} {e:12.5g} {s:10.3g} {k:11.2f}")


def payload_accuracy(seeds=5):
    """Print the crane's payload estimate from sampled windows over ``seeds``."""
    robot = load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))
    print("\nheavy_duty_4dof, 250 kg at the tool, 10 s at 250 Hz (10 % jitter), 1 % effort noise, "
          "accelerations by sampled_motion")
    print(f"{'seed':>4s} {'mass kg':>9s} {'mass err %':>10s} {'com err cm':>10s} {'mass std':>9s}")
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        t = np.arange(0.0, 10.0, 0.004) + 0.0004 * rng.uniform(-1, 1, 2500)
        x, xd, xdd = crane_motion(t)
        u = noisy(robot_with_payload(robot, LOAD).inverse_dynamics(x, xd, xdd), rng)
        _, X, XD, XDD, U = sampled_motion(t, x, xd, u)
        e = estimate_payload(robot, X[::3], XD[::3], XDD[::3], U[::3])
        print(f"{seed:4d} {e.payload.mass:9.3f} {100 * abs(e.payload.mass / LOAD.mass - 1):10.3f} "
              f"{100 * np.linalg.norm(e.payload.com - LOAD.com):10.3f} {e.mass_std:9.3f}")


def main():
    accuracy_table("heavy_duty_4dof", lambda r: crane_motion(np.arange(0.0, 10.0, 0.02)))
    accuracy_table("planar_3rrr", lambda r: task_motion(r, np.arange(0.0, 6.0, 0.02), [0.06, 0.06, 0.15]))
    payload_accuracy()


if __name__ == "__main__":
    main()
