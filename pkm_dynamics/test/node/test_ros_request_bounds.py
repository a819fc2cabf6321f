"""The node's declared ranges and request bounds hold (in-process node, real request
messages): every PKM solve works at both ends of the declared ``ik.tolerance`` range, and a
trajectory longer than the documented maximum is refused before any work."""
from pathlib import Path

import numpy as np
from numpy.testing import assert_allclose
import pytest

ROBOTS = Path(__file__).resolve().parents[2] / 'robots'


def ik_request(C):
    from pkm_dynamics_interfaces.srv import InverseKinematics

    from pkm_dynamics.node.messages.conversions import matrix_pose
    request = InverseKinematics.Request()
    request.pose.pose = matrix_pose(C)
    return request


@pytest.mark.parametrize('robot', ['gough_stewart_6ups', 'planar_3rrr'])
def test_pkm_solves_at_both_ends_of_the_tolerance_range(rclpy_context, robot):
    """ik.tolerance = 1e-3 (the old upper end) made every Gough-Stewart IK, ID and FD answer
    NO_IK_SOLUTION: the whole-pose check of a solution is 1e-6. Each end of the declared
    range is accepted and gives a solution whose forward kinematics (Newton on the IK, an
    independent path) returns the requested pose."""
    from rclpy.parameter import Parameter

    from pkm_dynamics.testing import InProcessNode
    node = InProcessNode(rclpy_context, (ROBOTS / f'{robot}.urdf').read_text(),
                         namespace=f'/range_{robot}')
    try:
        (descriptor,) = node.node.describe_parameters(['ik.tolerance'])
        (declared,) = descriptor.floating_point_range
        robot_ = node.model.robot
        C = robot_.reference_pose.copy()
        C[:2, 3] += [0.004, -0.003]
        for end in (declared.from_value, declared.to_value):
            result = node.node.set_parameters([Parameter('ik.tolerance', value=end)])[0]
            assert result.successful, result.reason
            response = node.call('inverse_kinematics', ik_request(C))
            assert response.success, f'ik.tolerance = {end:g}: {response.message}'
            actuators = np.array(response.actuator_state.position)
            assert_allclose(robot_.forward_kinematics(actuators), C, atol=1e-6)
        beyond = node.node.set_parameters([Parameter('ik.tolerance',
                                                     value=declared.to_value * 10)])[0]
        assert not beyond.successful
    finally:
        node.destroy()


@pytest.mark.parametrize('robot', ['planar_3rrr', 'irsbot2'])
def test_an_unreachable_pose_at_the_largest_iteration_limit(rclpy_context, robot):
    """ik.max_iterations up to 10000 let one unreachable pose hold the node for seconds; the
    declared range ends where the answer stays short (figures: bench/fuzz_requests.py). At
    its end an unreachable pose is NO_IK_SOLUTION and the next good pose is solved."""
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from rclpy.parameter import Parameter

    from pkm_dynamics.testing import InProcessNode
    node = InProcessNode(rclpy_context, (ROBOTS / f'{robot}.urdf').read_text(),
                         namespace=f'/iterations_{robot}')
    try:
        (descriptor,) = node.node.describe_parameters(['ik.max_iterations'])
        (declared,) = descriptor.integer_range
        assert declared.to_value <= 200
        for scheme in ('nested', 'compound'):
            result = node.node.set_parameters([Parameter('ik.max_iterations',
                                                         value=declared.to_value),
                                               Parameter('ik.scheme', value=scheme)])
            assert all(r.successful for r in result)
            far = node.model.robot.reference_pose.copy()
            far[0, 3] += 3.0
            response = node.call('inverse_kinematics', ik_request(far))
            assert response.error_code.val == ErrorCodes.NO_IK_SOLUTION, response.message
            good = node.model.robot.reference_pose
            response = node.call('inverse_kinematics', ik_request(good))
            assert response.success, response.message
            assert_allclose(node.model.robot.forward_kinematics(
                np.array(response.actuator_state.position)), good, atol=1e-6)
    finally:
        node.destroy()


def test_a_trajectory_beyond_the_maximum_is_refused(rclpy_context):
    """A 10^5-point trajectory on the 3-RRR took 126 s of the node; one request holds at most
    MAX_POINTS points (INVALID_REQUEST naming the count beyond it, nothing computed)."""
    from geometry_msgs.msg import Transform
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import MultiDOFJointTrajectoryPoint

    from pkm_dynamics.core.bounds import MAX_POINTS
    from pkm_dynamics.testing import InProcessNode
    node = InProcessNode(rclpy_context, (ROBOTS / 'planar_3rrr.urdf').read_text(),
                         namespace='/max_points')
    try:
        point = MultiDOFJointTrajectoryPoint(transforms=[Transform()])
        point.transforms[0].translation.x = np.nan     # would fail if it were computed
        request = InverseDynamics.Request()
        request.task_trajectory.points = [point] * (MAX_POINTS + 1)
        response = node.call('inverse_dynamics', request)
        assert response.error_code.val == ErrorCodes.INVALID_REQUEST, response.message
        assert f'{MAX_POINTS + 1} points' in response.message
        assert f'{MAX_POINTS}' in response.message and 'split' in response.message
    finally:
        node.destroy()


def test_pkm_completion_beyond_a_stroke_is_refused(rclpy_context):
    """Joint-state completion of a PKM published the forward kinematics of actuator values
    beyond the strokes (Gough-Stewart legs at 0.5 m for strokes of +-0.08 m); it is refused naming
    the joint, and the next good state is completed as the core's forward kinematics gives."""
    from sensor_msgs.msg import JointState

    from pkm_dynamics.core.errors import StateError
    from pkm_dynamics.testing import InProcessNode
    node = InProcessNode(rclpy_context, (ROBOTS / 'gough_stewart_6ups.urdf').read_text(),
                         namespace='/completion')
    published = []
    try:
        node.node._completion_pub.publish = published.append
        names = list(node.model.actuated)
        with pytest.raises(StateError,
                           match=r"position\[0\] = 0.5 is beyond the limits .* 'leg1_p'"):
            node.node._complete(node.model, JointState(name=names, position=[0.5] * 6))
        assert published == []
        x = np.array([0.01, -0.01, 0.02, 0.0, 0.01, -0.02])
        node.node._complete(node.model, JointState(name=names, position=x.tolist()))
        (out,) = published
        _, sol = node.model.robot.forward_kinematics(x, return_solution=True)
        assert_allclose(out.position, sol.q, atol=1e-9)
    finally:
        node.destroy()
