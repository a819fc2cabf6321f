"""~/estimate_payload over DDS (issue 30, item 4): the installed node serving the HIAB crane
(heavy_duty_4dof) estimates a 250 kg load at the tool from a window of 1000 points (20 s at 50 Hz)
whose efforts are the loaded robot's inverse dynamics (the core's, the load added to the
description) with 1 % noise: mass within 2 %, centre of mass within 2 cm, and applied on
request (GetModelInfo then reports it).  Bad windows (too few points, NaN efforts, no motion, a
negative mass) are refused naming why, nothing is applied, and the node keeps serving."""
import time

import numpy as np
import pytest

from identification_motions import crane_motion
from pkm_dynamics.core.description.payload import Payload, robot_with_payload

LOAD = Payload(250.0, np.array([0.1, -0.05, 0.2]), np.diag([8.0, 6.0, 5.0]))


@pytest.fixture(scope='module')
def crane(served_robot):
    robot, client, _ = served_robot('heavy_duty_4dof', 'payload_estimation')
    motion = crane_motion(np.arange(0.0, 20.0, 0.02))
    u = robot_with_payload(robot, LOAD).inverse_dynamics(*motion)
    rng = np.random.default_rng(1)
    noisy = u + 0.01 * np.sqrt((u**2).mean(axis=0)) * rng.normal(size=u.shape)
    return robot, client, motion, noisy


def window(robot, motion, efforts, apply=False, reverse=True):
    """An EstimatePayload request: the window in `trajectory` (joint names reversed: matched by
    name) with the efforts in its points."""
    from pkm_dynamics_interfaces.srv import EstimatePayload
    from trajectory_msgs.msg import JointTrajectoryPoint
    order = slice(None, None, -1) if reverse else slice(None)
    request = EstimatePayload.Request()
    request.trajectory.joint_names = list(robot.actuated_joints)[order]
    for x, xd, xdd, f in zip(*motion, efforts):
        request.trajectory.points.append(JointTrajectoryPoint(
            positions=list(x[order]), velocities=list(xd[order]), accelerations=list(xdd[order]),
            effort=list(f[order])))
    request.apply = apply
    return request


def model_payload(client):
    from pkm_dynamics_interfaces.srv import GetModelInfo
    info = client.call(GetModelInfo, 'get_model_info')
    return info.payload_mass, np.array(info.payload_com)


def test_bad_windows_are_refused_and_nothing_is_applied(crane):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import EstimatePayload
    robot, client, motion, u = crane
    short = client.call(EstimatePayload, 'estimate_payload',
                        window(robot, [m[:5] for m in motion], u[:5], apply=True))
    assert not short.success and 'window of 5 samples is too short' in short.message
    bad = u.copy()
    bad[7, 2] = np.nan
    nan = client.call(EstimatePayload, 'estimate_payload', window(robot, motion, bad, apply=True))
    assert not nan.success and nan.error_code.val == ErrorCodes.NON_FINITE
    assert 'trajectory.points[7].effort' in nan.message
    rest = [np.repeat(motion[0][:1], 50, axis=0), np.zeros((50, 4)), np.zeros((50, 4))]
    still = robot_with_payload(robot, LOAD).inverse_dynamics(*rest)
    at_rest = client.call(EstimatePayload, 'estimate_payload', window(robot, rest, still, apply=True))
    assert not at_rest.success and at_rest.error_code.val == ErrorCodes.INVALID_STATE
    assert "does not excite the payload's mass and centre of mass" in at_rest.message
    bare = robot.inverse_dynamics(*motion)
    lighter = bare - (robot_with_payload(robot, LOAD).inverse_dynamics(*motion) - bare)
    negative = client.call(EstimatePayload, 'estimate_payload', window(robot, motion, lighter, apply=True))
    assert not negative.success and 'is not positive' in negative.message and not negative.applied
    assert model_payload(client)[0] == 0.0                           # nothing applied


def test_crane_payload_estimated_and_applied(crane):
    from pkm_dynamics_interfaces.srv import EstimatePayload
    robot, client, motion, u = crane
    request = window(robot, motion, u, apply=True)
    start = time.perf_counter()
    response = client.call(EstimatePayload, 'estimate_payload', request)
    elapsed = time.perf_counter() - start
    assert response.success, response.message
    assert response.payload_link == 'tcp' and response.samples == 1000
    assert abs(response.mass - LOAD.mass) <= 0.02 * LOAD.mass
    assert np.linalg.norm(np.array(response.com) - LOAD.com) <= 0.02
    assert response.mass_std > 0 and all(s > 0 for s in response.com_std)
    assert response.applied and 'applied' in response.message
    print(f'estimate_payload: {response.message}; answered in {elapsed:.3f} s')
    mass, com = model_payload(client)
    assert mass == response.mass and np.array_equal(com, response.com)
    # the model now carries the estimate: a second window gives the whole load again, not zero
    again = client.call(EstimatePayload, 'estimate_payload', window(robot, motion, u, reverse=False))
    assert again.success and abs(again.mass - response.mass) <= 1e-6 * LOAD.mass and not again.applied
