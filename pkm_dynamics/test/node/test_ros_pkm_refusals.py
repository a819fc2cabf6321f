"""Parallel robots refuse impossible requests (issue 10 defect 3): success = false with the
error code and a message naming the joint, limb or loop, never efforts from a state beyond the
joint limits or at a singularity; the node keeps serving. gough_stewart_6ups with the node's
default thresholds, planar_3rrr for a pose off the task manifold, IRSBot-2 for the loop
singularity threshold parameter."""
import numpy as np
import pytest


@pytest.fixture(scope='module')
def gough(served_robot):
    return served_robot('gough_stewart_6ups', 'refuse_gough')[:2]


def stamped(C):
    """PoseStamped of a 4x4 pose matrix (frame_id empty: the root link)."""
    from geometry_msgs.msg import PoseStamped
    from pkm_dynamics.node.messages.conversions import matrix_pose
    return PoseStamped(pose=matrix_pose(C))


def _pose(z):
    from geometry_msgs.msg import PoseStamped
    pose = PoseStamped()
    pose.pose.position.z = z
    return pose


def test_ik_beyond_the_joint_limits_is_invalid_state(gough):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import InverseKinematics
    robot, client = gough
    response = client.call(InverseKinematics, 'inverse_kinematics',
                           InverseKinematics.Request(pose=_pose(2.0)))
    assert not response.success
    assert response.error_code.val == ErrorCodes.INVALID_STATE, response.message
    assert "joint 'leg" in response.message and 'outside its limits' in response.message
    good = robot.task_pose(np.array([0.02, -0.03, 0.05, 0.01, -0.02, 0.03]))
    response = client.call(InverseKinematics, 'inverse_kinematics',
                           InverseKinematics.Request(pose=stamped(good)))
    assert response.success, response.message
    q = np.array(response.joint_state.position)
    assert np.all((q >= robot.tree.lower) & (q <= robot.tree.upper))


def test_dynamics_in_the_base_plane_are_refused(gough):
    """ID at z = 0 used to answer 1.9e13 N, HOID with an empty request 1.7e16."""
    from geometry_msgs.msg import Transform
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import HigherOrderInverseDynamics, InverseDynamics
    from trajectory_msgs.msg import MultiDOFJointTrajectoryPoint
    _, client = gough
    request = InverseDynamics.Request()
    request.task_trajectory.joint_names = ['platform']
    tf = Transform()
    tf.rotation.w = 1.0
    request.task_trajectory.points = [MultiDOFJointTrajectoryPoint(transforms=[tf])]
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert not response.success
    assert response.error_code.val == ErrorCodes.INVALID_STATE, response.message
    assert "joint 'leg" in response.message
    response = client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics',
                           HigherOrderInverseDynamics.Request())
    assert not response.success
    assert response.error_code.val == ErrorCodes.INVALID_STATE, response.message
    assert "joint 'leg" in response.message
    assert not any(abs(u) > 1e6 for u in response.effort.effort)


def test_pose_off_the_task_manifold_is_named(served_robot):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import InverseKinematics
    robot, client, _ = served_robot('planar_3rrr', 'refuse_planar')
    P = robot.reference_pose.copy()
    P[2, 3] += 0.05
    response = client.call(InverseKinematics, 'inverse_kinematics',
                           InverseKinematics.Request(pose=stamped(P)))
    assert response.error_code.val == ErrorCodes.INVALID_STATE, response.message
    assert 'off the task manifold' in response.message and 'vz' in response.message


def test_loop_singularity_threshold_parameter(served_robot):
    """ik.loop_singularity_threshold: kappa(G_y) beyond it is SINGULAR naming limb and loop."""
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import InverseKinematics
    robot, client, _ = served_robot('irsbot2', 'refuse_loop',
                                    **{'ik.loop_singularity_threshold': 1.5})
    response = client.call(InverseKinematics, 'inverse_kinematics', InverseKinematics.Request(
        pose=stamped(robot.task_pose(np.array([0.02, 0.05])))))
    assert response.error_code.val == ErrorCodes.SINGULAR, response.message
    assert 'limb1 loop' in response.message and 'kappa(G_y)' in response.message
