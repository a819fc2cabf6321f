"""Payload estimation (issue 30, item 4): the HIAB crane (heavy_duty_4dof) carrying 250 kg at its
tool, efforts of the loaded robot's public inverse dynamics (the payload added as the
description's load, :func:`~pkm_dynamics.core.description.payload.robot_with_payload`) with 1 %
noise, estimated with the bare robot: mass within 2 %, centre of mass within 2 cm; noise-free:
exact to round-off.  Bad windows are refused naming why."""
import os

import numpy as np
import pytest

from identification_motions import crane_motion
from pkm_dynamics.core.description.payload import Payload, robot_with_payload
from pkm_dynamics.core.identification import IdentificationError, estimate_payload
from pkm_dynamics.core.robot import load_robot

ROBOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "robots")
LOAD = Payload(250.0, np.array([0.1, -0.05, 0.2]), np.diag([8.0, 6.0, 5.0]))


@pytest.fixture(scope="module")
def crane():
    robot = load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))
    x, xd, xdd = crane_motion(np.arange(0.0, 20.0, 0.01))            # 20 s at 100 Hz
    return robot, (x, xd, xdd), robot_with_payload(robot, LOAD).inverse_dynamics(x, xd, xdd)


def noisy(u, rng, level=0.01):
    """``u`` with Gaussian noise of ``level`` times each actuator's RMS effort."""
    return u + level * np.sqrt((u**2).mean(axis=0)) * rng.normal(size=u.shape)


def test_noise_free_window_gives_the_load_exactly(crane):
    robot, motion, u = crane
    e = estimate_payload(robot, *motion, u)
    assert e.inertia and e.estimated[-1] == "Izz" and e.link == "tcp"
    assert abs(e.payload.mass - LOAD.mass) <= 1e-8 * LOAD.mass
    assert np.abs(e.payload.com - LOAD.com).max() <= 1e-9
    assert np.abs(e.payload.inertia - LOAD.inertia).max() <= 1e-7


@pytest.mark.parametrize("seed", range(3))
def test_crane_payload_with_one_percent_noise(crane, seed):
    robot, motion, u = crane
    e = estimate_payload(robot, *motion, noisy(u, np.random.default_rng(seed)))
    assert abs(e.payload.mass - LOAD.mass) <= 0.02 * LOAD.mass
    assert np.linalg.norm(e.payload.com - LOAD.com) <= 0.02
    assert abs(e.payload.mass - LOAD.mass) <= 4 * e.mass_std
    assert (np.abs(e.payload.com - LOAD.com) <= 4 * e.com_std).all()


def test_the_payload_the_model_carries_is_taken_out(crane):
    """Estimated with a model that already carries a 100 kg load (``carried``): the whole load."""
    robot, motion, u = crane
    carried = Payload(100.0, np.array([0.0, 0.1, 0.0]), np.diag([1.0, 2.0, 2.5]))
    e = estimate_payload(robot_with_payload(robot, carried), *motion, u, carried=carried)
    assert abs(e.payload.mass - LOAD.mass) <= 1e-8 * LOAD.mass
    assert np.abs(e.payload.com - LOAD.com).max() <= 1e-9


def test_parallel_robot_platform_payload():
    """Gough-Stewart (6 task DOF): a 20 kg load at the platform, noise-free, exactly (inertia
    included); 3-RRR (planar): mass and in-plane centre of mass exactly, the normal component
    not sensed (held at zero, std NaN), the inertia about the normal sensed."""
    from identification_motions import task_motion
    for name, amp, load in (("gough_stewart_6ups", [0.02, 0.02, 0.03, 0.03, 0.03, 0.03],
                             Payload(20.0, np.array([0.02, -0.01, 0.05]), np.diag([0.2, 0.3, 0.25]))),
                            ("planar_3rrr", [0.06, 0.06, 0.15], Payload(0.5, np.array([0.01, -0.01, 0.0])))):
        robot = load_robot(os.path.join(ROBOTS, f"{name}.urdf"))
        motion = task_motion(robot, np.arange(0.0, 2.0, 0.02), amp)
        e = estimate_payload(robot, *motion, robot_with_payload(robot, load).inverse_dynamics(*motion))
        assert abs(e.payload.mass - load.mass) <= 1e-8 * load.mass
        assert np.abs(e.payload.com - load.com).max() <= 1e-9
    assert e.estimated == ("m", "mcx", "mcy", "Izz") and np.isnan(e.com_std[2])
    assert not e.inertia                  # I_zz alone (about the link origin) is no physical inertia


def test_too_few_samples_are_refused(crane):
    robot, (x, xd, xdd), u = crane
    with pytest.raises(IdentificationError, match="window of 5 samples is too short"):
        estimate_payload(robot, x[:5], xd[:5], xdd[:5], u[:5])


def test_a_window_without_motion_is_refused(crane):
    robot, (x, xd, xdd), u = crane
    rest = np.repeat(x[:1], 50, axis=0)
    zero = np.zeros_like(rest)
    u_rest = robot_with_payload(robot, LOAD).inverse_dynamics(rest, zero, zero)
    with pytest.raises(IdentificationError, match="does not excite the payload's mass and centre of mass"):
        estimate_payload(robot, rest, zero, zero, u_rest)


def test_nan_efforts_are_refused_naming_the_sample(crane):
    robot, motion, u = crane
    bad = u.copy()
    bad[7, 2] = np.nan
    with pytest.raises(IdentificationError, match="sample 7, actuator 2 is nan"):
        estimate_payload(robot, *motion, bad)


def test_a_negative_mass_estimate_is_refused(crane):
    """Efforts of the robot *lighter* than its model (the load removed from the model's view):
    the estimate is a negative mass, refused."""
    robot, motion, _ = crane
    loaded = robot_with_payload(robot, LOAD)
    with pytest.raises(IdentificationError, match="payload mass -250.* is not positive"):
        estimate_payload(loaded, *motion, robot.inverse_dynamics(*motion))
