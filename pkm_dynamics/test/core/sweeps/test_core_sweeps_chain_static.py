"""The static payload forces of a batch of module-chain configurations (core/sweeps, the load
chart's kernel) against single public calls: ``u_0`` = the robot's ``inverse_dynamics(x, 0, 0)``
(joint friction included), ``u_1`` = that of the robot carrying 1 kg at its tool
(``robot_with_payload``) minus ``u_0``; refused rows NaN, the others solved."""
from __future__ import annotations

import os

import numpy as np
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.core.description.examples import module_chain_urdf
from pkm_dynamics.core.description.payload import Payload, robot_with_payload
from pkm_dynamics.core.errors import PkmDynamicsError, StateError
from pkm_dynamics.core.sweeps.chain_static import static_payload_forces, static_payload_states

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "robots")


def strokes(robot, rng, count):
    """Random configurations (count, n) inside the strokes (an unlimited actuator in [-2, 2])."""
    lo = np.array([i.lower if np.isfinite(i.lower) else -2.0 for i in robot.chain.info])
    hi = np.array([i.upper if np.isfinite(i.upper) else 2.0 for i in robot.chain.info])
    return lo + (hi - lo) * rng.uniform(size=(count, len(lo)))


@pytest.mark.parametrize("name", ["heavy_duty_4dof.urdf", "linear_4bar_1dof.urdf", "generated"])
def test_static_payload_forces_match_single_id_calls(name):
    robot = load_robot(module_chain_urdf(3) if name == "generated" else os.path.join(ROBOTS, name))
    assert robot.kind == "module_chain"
    x = strokes(robot, np.random.default_rng(7), 64)
    u0, u1, ok = static_payload_forces(robot, x)
    assert ok.sum() >= 32
    loaded = robot_with_payload(robot, Payload(1.0))
    z = np.zeros(robot.n)
    for i in np.flatnonzero(ok)[:12]:
        a = robot.inverse_dynamics(x[i], z, z)
        b = loaded.inverse_dynamics(x[i], z, z)
        np.testing.assert_allclose(u0[i], a, rtol=1e-10, atol=1e-8 * np.abs(a).max())
        np.testing.assert_allclose(u1[i], b - a, rtol=1e-8, atol=1e-8 * np.abs(b - a).max())
    for i in np.flatnonzero(~ok):                    # a refused row: the robot refuses it too
        assert np.isnan(u0[i]).all() and np.isnan(u1[i]).all()
        with pytest.raises(PkmDynamicsError):
            robot.inverse_dynamics(x[i], z, z)


def test_rows_out_of_stroke_or_not_finite_are_nan_and_the_others_solved():
    robot = load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))
    x = strokes(robot, np.random.default_rng(8), 40)
    x = x[static_payload_forces(robot, x)[2]][:4]            # four rows the robot holds
    x[1, 3] = robot.chain.info[3].upper + 0.5                # beyond the extension's stroke
    x[2, 1] = np.nan
    u0, u1, ok = static_payload_forces(robot, x)
    assert ok.tolist() == [True, False, False, True]
    assert np.isnan(u0[1:3]).all() and np.isnan(u1[1:3]).all()
    z = np.zeros(4)
    a = robot.inverse_dynamics(x[3], z, z)         # the slew's torque is a round-off zero (~1e-12 N m)
    np.testing.assert_allclose(u0[3], a, rtol=1e-10, atol=1e-12 * np.abs(a).max())
    with pytest.raises(StateError, match=r"\(B, 4\)"):
        static_payload_forces(robot, x[0])


@pytest.mark.parametrize("name", ["heavy_duty_4dof.urdf", "generated"])
def test_static_recursion_matches_public_id_and_forward_kinematics_to_round_off(name):
    """The static recursion (one forward pass of closures, gravity and tool pose, one backward
    pass of two wrench columns) against the robot's public calls: ``u_0`` = ``inverse_dynamics``
    (the full Algorithm 1), ``u_1`` = the same call with the wrench of 1 kg at the tool
    ``(0, R^T g)`` (``R`` from ``forward_kinematics``), the position = ``forward_kinematics``."""
    robot = load_robot(module_chain_urdf(3) if name == "generated" else os.path.join(ROBOTS, name))
    x = strokes(robot, np.random.default_rng(11), 64)
    u0, u1, p, ok = static_payload_states(robot, x)
    assert ok.sum() >= 32 and np.isnan(p[~ok]).all()
    z = np.zeros((ok.sum(), robot.n))
    poses = robot.forward_kinematics(x[ok])
    g = np.asarray(robot.description.tree.gravity, dtype=float)
    wrench = np.zeros((ok.sum(), 6))
    wrench[:, 3:] = np.einsum("bji,j->bi", poses[:, :3, :3], g)
    a = robot.inverse_dynamics(x[ok], z, z)
    b = np.array([robot.inverse_dynamics(xi, zi, zi, wrench=wi) for xi, zi, wi in zip(x[ok], z, wrench)]) - a
    np.testing.assert_allclose(u0[ok], a, rtol=1e-12, atol=1e-12 * np.abs(a).max())
    np.testing.assert_allclose(u1[ok], b, rtol=1e-9, atol=1e-9 * np.abs(b).max())
    np.testing.assert_allclose(p[ok], poses[:, :3, 3], rtol=0, atol=1e-13 * np.abs(poses[:, :3, 3]).max())
