"""Base parameters and identification from data (issue 30, items 2-3), on the HIAB crane
(heavy_duty_4dof, module chain, actuator space) and the 3RRR (parallel robot, task space): the
efforts of smooth exciting motions from the public inverse dynamics, identified with the
regressor; noise-free the base parameters to <= 1e-8, with 1 % effort noise within 3 sigma of
the truth for >= 95 % of them over repeated seeds."""
import os

import numpy as np
import pytest

from identification_motions import crane_motion, task_motion
from pkm_dynamics.core.identification import (base_parameters, excitation_score, friction_parameter_names,
                                              friction_parameters, identify, parameter_names, regressor,
                                              robot_parameters)
from pkm_dynamics.core.identification.base_parameters import random_regressor
from pkm_dynamics.core.robot import load_robot

ROBOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "robots")


def _robot(name):
    return load_robot(os.path.join(ROBOTS, f"{name}.urdf"))


@pytest.fixture(scope="module")
def crane():
    robot = _robot("heavy_duty_4dof")
    motion = crane_motion(np.arange(0.0, 10.0, 0.02))
    return robot, base_parameters(robot), motion, robot.inverse_dynamics(*motion)


@pytest.fixture(scope="module")
def rrr():
    robot = _robot("planar_3rrr")
    motion = task_motion(robot, np.arange(0.0, 6.0, 0.02), [0.06, 0.06, 0.15])
    return robot, base_parameters(robot), motion, robot.inverse_dynamics(*motion)


@pytest.mark.parametrize("name", ["heavy_duty_4dof", "linear_4bar_1dof", "planar_3rrr", "irsbot2",
                                  "gough_stewart_6ups"])
def test_base_parameters_reproduce_the_efforts(name):
    """``Y pi = Y_I (K pi)`` at other random states than those the base came from, and the rank
    is the SVD's numerical rank of those rows (another factorisation; columns of round-off size,
    parameters without effect, left out as the QR leaves them out)."""
    robot = _robot(name)
    base = base_parameters(robot)
    Y = random_regressor(robot, 10, seed=99)
    pi = robot_parameters(robot)
    u = Y @ pi
    assert np.abs(Y[..., base.independent] @ base.of(pi) - u).max() <= 1e-10 * np.abs(u).max()
    A = random_regressor(robot, seed=5).reshape(-1, pi.size)
    norms = np.linalg.norm(A, axis=0)
    A = A[:, norms > 1e-10 * norms.max()] / norms[norms > 1e-10 * norms.max()]    # round-off columns: none
    assert base.rank == np.linalg.matrix_rank(A, tol=1e-11 * np.linalg.norm(A, 2)) < pi.size
    assert len(base.names) == base.rank


@pytest.mark.parametrize("which", ["crane", "rrr"])
def test_noise_free_identification_recovers_the_base_parameters(which, request):
    robot, base, motion, u = request.getfixturevalue(which)
    truth = base.of(robot_parameters(robot))
    est = identify(robot, *motion, u, base=base)
    assert np.abs(est.parameters - truth).max() <= 1e-8 * np.abs(truth).max()
    Y = regressor(robot, *motion).Y[..., base.independent]          # each error's share of the efforts
    share = np.abs(est.parameters - truth) * np.linalg.norm(Y.reshape(-1, base.rank), axis=0)
    assert share.max() <= 1e-8 * np.linalg.norm(u)
    assert np.abs(est.residual).max() <= 1e-8 * np.abs(u).max()


@pytest.mark.parametrize("which, seeds", [("crane", 4), ("rrr", 8)])
def test_noisy_identification_is_within_three_sigma(which, seeds, request):
    """Efforts with Gaussian noise of 1 % of each actuator's RMS effort: the truth within 3 of the
    reported standard deviations for >= 95 % of the base parameters over the seeds."""
    robot, base, motion, u = request.getfixturevalue(which)
    truth = base.of(robot_parameters(robot))
    level = 0.01 * np.sqrt((u**2).mean(axis=0))
    inside = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        est = identify(robot, *motion, u + level * rng.normal(size=u.shape), base=base)
        inside.extend(np.abs(est.parameters - truth) <= 3 * est.std)
    assert np.mean(inside) >= 0.95, np.mean(inside)


def test_bounded_identification_keeps_masses_positive(crane):
    robot, base, motion, u = crane
    truth = base.of(robot_parameters(robot))
    est = identify(robot, *motion, u, base=base, consistent=True)
    assert np.abs(est.parameters - truth).max() <= 1e-6 * np.abs(truth).max()
    bodies = est.standard.reshape(-1, 10)
    assert (bodies[:, [0, 4, 6, 9]] >= 0).all()


def test_excitation_score_prefers_the_richer_motion(crane):
    """The two-sine motion of every actuator against the same motion of the slew alone (the
    other actuators held mid-stroke): the richer motion has the lower condition number."""
    robot, base, (x, xd, xdd), _ = crane
    rich = excitation_score(robot, x, xd, xdd, base)
    held = x.copy()
    held[:, 1:] = x[:1, 1:]
    zero = np.zeros_like(xd[:, 1:])
    poor = excitation_score(robot, held, np.column_stack([xd[:, :1], zero]), np.column_stack([xdd[:, :1], zero]),
                            base)
    assert np.isfinite(rich) and rich < poor


def test_appended_linear_parameters_are_identified_with_the_inertial_ones(crane):
    """The way friction coefficients will enter: a column per actuator appended to ``Y`` (here a
    synthetic viscous term ``b_j xd_j``, efforts of the inverse dynamics plus it), base parameters
    of the extended rows, identified exactly noise-free."""
    from dataclasses import replace
    from pkm_dynamics.core.identification.base_parameters import random_states
    robot, _, motion, u = crane
    b = np.array([300.0, 2000.0, 1500.0, 800.0])
    def extended(R, xd):
        extra = np.einsum("nj,jk->njk", np.atleast_2d(xd), np.eye(4))
        return replace(R, Y=np.concatenate([R.Y, extra], axis=-1))
    states = [s for s in random_states(robot, 60, np.random.default_rng(4), 0.1) if s[0][1] < 0.5]
    rows = np.concatenate([extended(regressor(robot, *s), s[1]).Y for s in states])
    names = list(parameter_names(robot)) + [f"{j}.viscous" for j in robot.actuated_joints]
    base = base_parameters(robot, rows=rows, names=names)
    assert base.rank == base_parameters(robot).rank + 4
    R = extended(regressor(robot, *motion), motion[1])
    est = identify(robot, *motion, u + motion[1] * b, base=base, rows=R)
    truth = base.of(np.concatenate([robot_parameters(robot), b]))
    assert np.abs(est.parameters - truth).max() <= 1e-8 * np.abs(truth).max()


def test_noise_free_identification_with_the_friction_coefficients(crane):
    """The crane's inertial parameters and its joints' friction coefficients identified together
    (``regressor(..., friction_parameters=True)``, base parameters of those columns): noise-free
    the base parameters to <= 1e-8 of the largest, the friction's efforts reproduced."""
    robot, _, motion, u = crane
    R = regressor(robot, *motion, friction_parameters=True)
    names = parameter_names(robot) + friction_parameter_names(robot)
    base = base_parameters(robot, rows=R.Y, names=names)
    truth = base.of(np.concatenate([robot_parameters(robot), friction_parameters(robot)]))
    est = identify(robot, *motion, u, base=base, rows=R)
    assert np.abs(est.parameters - truth).max() <= 1e-8 * np.abs(truth).max()
    assert np.abs(est.residual).max() <= 1e-8 * np.abs(u).max()
    assert any(n.endswith(".coulomb") for n in base.names)        # the cylinders' Coulomb levels are excited


def test_identification_from_a_simulated_run(crane):
    """Data from the public ``simulate``: the crane driven open loop by the feedforward of the
    exciting motion (a schedule on the 1 ms grid, compiled RK4), sampled every 20 ms; the
    accelerations those efforts give at the sampled states (``forward_dynamics``, as a
    differentiated measurement would), efforts as applied.  The run stays near the motion (it
    excites as well: the same order of excitation score) and noise-free gives the base parameters
    to <= 1e-8 of the largest."""
    robot, base, _, _ = crane
    t = np.arange(0.0, 6.0 + 5e-4, 1e-3)
    x, xd, xdd = crane_motion(t)
    feedforward = robot.inverse_dynamics(x, xd, xdd)
    run = robot.simulate(x[0], xd[0], t[-1], efforts=feedforward, dt=1e-3)
    assert run.compiled and np.abs(run.x - x).max() < 0.01           # the run follows the motion
    k = slice(0, len(t), 20)
    X, XD, U = run.x[k], run.xd[k], run.f[k]
    XDD = robot.forward_dynamics(X, XD, U)
    reference_score = excitation_score(robot, x[k], xd[k], xdd[k], base)
    assert excitation_score(robot, X, XD, XDD, base) < 2 * reference_score
    truth = base.of(robot_parameters(robot))
    est = identify(robot, X, XD, XDD, U, base=base)
    assert np.abs(est.parameters - truth).max() <= 1e-8 * np.abs(truth).max()
