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


def publish_states(node, publisher, robot, t, motion, efforts, start_ns):
    """The measured actuator states ``motion`` (positions, velocities) and ``efforts`` as
    JointState messages (joint names reversed) stamped ``start_ns + t``, published at the
    stamps' pace (a driver's joint_states)."""
    from sensor_msgs.msg import JointState
    names = list(robot.actuated_joints)[::-1]
    wall = time.monotonic() - t[0]
    for k, tk in enumerate(t):
        delay = wall + tk - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        msg = JointState(name=names, position=list(motion[0][k][::-1]), velocity=list(motion[1][k][::-1]),
                         effort=list(efforts[k][::-1]))
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(start_ns + int(round(tk * 1e9)), 10**9)
        publisher.publish(msg)


def last_seconds(seconds, apply=False):
    from pkm_dynamics_interfaces.srv import EstimatePayload
    return EstimatePayload.Request(last_seconds=seconds, apply=apply)


@pytest.fixture(scope='module')
def streamed(crane, module_ros_node):
    """10 s of the crane's loaded motion at 250 Hz (stamps with 10 % jitter) with 1 % effort
    noise, published on the node's measured actuator states (``/actuator_states``)."""
    from sensor_msgs.msg import JointState
    from pkm_dynamics.testing import matched_publisher, spin_until
    robot, client, _, _ = crane
    rng = np.random.default_rng(2)
    t = np.arange(0.0, 10.0, 0.004) + 0.0004 * rng.uniform(-1, 1, 2500)
    motion = crane_motion(t)
    u = robot_with_payload(robot, LOAD).inverse_dynamics(*motion)
    u = u + 0.01 * np.sqrt((u**2).mean(axis=0)) * rng.normal(size=u.shape)
    publisher = matched_publisher(module_ros_node, JointState, '/actuator_states', 10)
    start_ns = module_ros_node.get_clock().now().nanoseconds
    publish_states(module_ros_node, publisher, robot, t, motion, u, start_ns)
    spin_until(module_ros_node, lambda: False, 0.3)         # the last messages delivered
    return robot, client, publisher, start_ns + int(round(t[-1] * 1e9))


def test_crane_payload_from_the_last_seconds_of_joint_states(streamed):
    """Issue 30 item 4 end to end: the last 10 s of measured states the node kept, estimated and
    applied; the time to answer is printed (the figure of the closing note)."""
    from pkm_dynamics_interfaces.srv import EstimatePayload
    robot, client, _, _ = streamed
    start = time.perf_counter()
    response = client.call(EstimatePayload, 'estimate_payload', last_seconds(10.0, apply=True))
    elapsed = time.perf_counter() - start
    assert response.success, response.message
    assert abs(response.mass - LOAD.mass) <= 0.02 * LOAD.mass
    assert np.linalg.norm(np.array(response.com) - LOAD.com) <= 0.02
    assert 800 <= response.samples <= 1000 and 'last 10 s of /actuator_states' in response.message
    assert response.applied and model_payload(client)[0] == response.mass
    print(f'estimate_payload from the last 10 s of joint states: {response.message}; answered in '
          f'{elapsed:.3f} s; mass error {abs(response.mass - LOAD.mass) / LOAD.mass:.2%}, centre of mass '
          f'error {np.linalg.norm(np.array(response.com) - LOAD.com) * 100:.2f} cm')


def test_bad_last_seconds_windows_are_refused_and_nothing_is_applied(streamed):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import EstimatePayload
    from pkm_dynamics.testing import spin_until
    robot, client, publisher, end_ns = streamed
    before = model_payload(client)
    short = client.call(EstimatePayload, 'estimate_payload', last_seconds(0.02, apply=True))
    assert not short.success and 'at least 10 are needed' in short.message
    more = client.call(EstimatePayload, 'estimate_payload', last_seconds(30.0, apply=True))
    assert not more.success and 'payload_estimation.buffer_seconds' in more.message
    negative = client.call(EstimatePayload, 'estimate_payload', last_seconds(-1.0, apply=True))
    assert not negative.success and 'not a positive time' in negative.message
    both = last_seconds(5.0, apply=True)
    both.trajectory = window(robot, [m[:20] for m in crane_motion(np.arange(0.0, 1.0, 0.05))],
                             np.zeros((20, 4))).trajectory
    mixed = client.call(EstimatePayload, 'estimate_payload', both)
    assert not mixed.success and 'not both' in mixed.message
    # 0.4 s at rest, one effort NaN: refused naming the joint; at rest: not excited
    t = 0.004 * np.arange(1, 101)
    rest = [np.repeat(crane_motion(np.zeros(1))[0], 100, axis=0), np.zeros((100, 4))]
    u = robot.inverse_dynamics(rest[0], rest[1], rest[1])
    u[60, 1] = np.nan
    publish_states(client.node, publisher, robot, t, rest, u, end_ns)
    spin_until(client.node, lambda: False, 0.3)
    nan = client.call(EstimatePayload, 'estimate_payload', last_seconds(0.35, apply=True))
    assert not nan.success and nan.error_code.val == ErrorCodes.NON_FINITE
    assert f'joint "{robot.actuated_joints[1]}"' in nan.message and 'is nan' in nan.message
    still = client.call(EstimatePayload, 'estimate_payload', last_seconds(0.15, apply=True))
    assert not still.success and "does not excite the payload's mass" in still.message
    assert model_payload(client)[0] == before[0] and not still.applied       # nothing applied, still serving


def test_task_states_of_a_parallel_robot_from_its_actuator_states(example_robot):
    """A parallel robot's ``last_seconds`` window: the Gough-Stewart's actuator states of a task
    motion at 250 Hz (its inverse kinematics) back to the platform poses and task twists (forward
    kinematics, eq. 30) and the task accelerations (Savitzky-Golay), against the motion itself."""
    from identification_motions import task_motion
    from pkm_dynamics.core import load_robot
    from pkm_dynamics.node.payload_service import task_states
    robot = load_robot(example_robot('gough_stewart_6ups'))
    t = np.arange(0.0, 1.0, 0.004)
    poses, twists, rates = task_motion(robot, t, [0.02] * 6)
    sol = robot.inverse_kinematics(poses, twists, rates)
    X, XD, XDD = task_states(robot, t, np.asarray(sol.actuators), np.asarray(sol.actuators_d))
    assert np.abs(X - poses).max() <= 1e-9 and np.abs(XD - twists).max() <= 1e-9
    assert (np.abs(XDD - rates)[15:-15].max(axis=0) <= 1e-3 * np.abs(rates).max(axis=0)).all()
