"""~/forward_kinematics of the installed node: forward then inverse kinematics through the
services gives back the actuator positions and rates; the pose and twist match the core's
forward kinematics; M_t of a parallel robot matches the KKT route computed here
(constrained tree dynamics, core/tree/constrained.py: at zero twist and without gravity the actuator
forces u_k of a unit task acceleration e_k give J_IK^T u_k = M_t e_k); bad requests get the
culprit named and the node keeps serving."""
from types import SimpleNamespace

import numpy as np
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.testing import Client

#: actuator positions inside the strokes (module chains), task coordinates (PKMs)
MODULE_CHAINS = {'heavy_duty_4dof': [0.3, 0.2, 0.25, 0.4]}
PKMS = {'irsbot2': [0.02, -0.03], 'gough_stewart_6ups': [0.02, -0.01, 0.03, 0.01, 0.02, 0.03]}


@pytest.fixture(scope='module', params=[*MODULE_CHAINS, *PKMS])
def served(request, module_node, module_ros_node, example_robot):
    name = request.param
    text = example_robot(name)
    module_node(params={'robot_description': text}, name=f'fk_{name}')
    robot = load_robot(text)
    pkm = name in PKMS
    if pkm:
        ik = robot.inverse_kinematics(robot.task_pose(np.asarray(PKMS[name])),
                                      0.1 * np.cos(np.arange(robot.dof) + 1.0))
        x, xd = ik.actuators, ik.actuators_d
    else:
        x, xd = np.asarray(MODULE_CHAINS[name]), 0.05 + 0.02 * np.arange(robot.n)
    return SimpleNamespace(name=name, robot=robot, pkm=pkm, x=x, xd=xd,
                           client=Client(module_ros_node, f'/fk_{name}'))


def fk_request(names, x, xd=None):
    """A ForwardKinematics request naming the joints in reverse order."""
    from pkm_dynamics_interfaces.srv import ForwardKinematics
    request = ForwardKinematics.Request()
    order = list(range(len(names)))[::-1]
    request.actuator_state.name = [names[i] for i in order]
    request.actuator_state.position = [float(x[i]) for i in order]
    if xd is not None:
        request.actuator_state.velocity = [float(xd[i]) for i in order]
    return request


def by_name(js, names, field):
    values = dict(zip(js.name, getattr(js, field)))
    return np.array([values[n] for n in names])


def test_forward_then_inverse_kinematics_round_trip(served):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import ForwardKinematics, InverseKinematics
    robot, names = served.robot, list(served.robot.actuated_joints)
    fk = served.client.call(ForwardKinematics, 'forward_kinematics',
                            fk_request(names, served.x, served.xd))
    assert fk.success, fk.message
    assert fk.error_code.val == ErrorCodes.SUCCESS
    assert fk.pose.header.frame_id == robot.tree.root_link
    assert fk.has_twist
    request = InverseKinematics.Request(pose=fk.pose, has_twist=True, twist=fk.twist)
    if not served.pkm:      # a module chain's pose may have several solutions: seed with x
        request.seed.name = names
        request.seed.position = [float(v) for v in served.x]
    ik = served.client.call(InverseKinematics, 'inverse_kinematics', request)
    assert ik.success, ik.message
    assert np.linalg.norm(by_name(ik.actuator_state, names, 'position') - served.x) < 1e-8
    assert np.linalg.norm(by_name(ik.actuator_state, names, 'velocity') - served.xd) < 1e-7
    assert list(fk.joint_state.name) == list(robot.tree_joints) == list(ik.joint_state.name)
    assert np.linalg.norm(np.subtract(fk.joint_state.position, ik.joint_state.position)) < 1e-8
    assert np.linalg.norm(np.subtract(fk.joint_state.velocity, ik.joint_state.velocity)) < 1e-7


def test_pose_twist_and_task_mass_matrix_against_the_core(served):
    from pkm_dynamics_interfaces.srv import ForwardKinematics
    from pkm_dynamics.node.messages.conversions import TWIST_COMPONENTS, pose_matrix, spatial_vector
    from pkm_dynamics.core.tree.constrained import kkt_inverse_dynamics
    robot, names = served.robot, list(served.robot.actuated_joints)
    fk = served.client.call(ForwardKinematics, 'forward_kinematics',
                            fk_request(names, served.x, served.xd))
    assert fk.success, fk.message
    twist = spatial_vector(fk.twist, 'twist')
    if not served.pkm:
        expected = robot.forward_kinematics(served.x)
        assert np.linalg.norm(pose_matrix(fk.pose.pose) - expected) < 1e-12
        assert list(fk.task_space) == [] and list(fk.mass_matrix) == []
        return
    P = pose_matrix(fk.pose.pose)
    ik = robot.inverse_kinematics(P)
    assert np.linalg.norm(ik.actuators - served.x) < 1e-8
    V = np.array([twist[TWIST_COMPONENTS.index(c)] for c in robot.task_space])
    assert np.linalg.norm(ik.J_IK @ V - served.xd) < 1e-8
    d = robot.dof
    assert list(fk.task_space) == list(robot.task_space) and len(fk.mass_matrix) == d * d
    M_t = np.reshape(fk.mass_matrix, (d, d))
    desc, tree = robot.description, robot.description.tree
    act = [tree.joint_index(n) for n in names]
    columns = []
    for e in np.eye(d):
        sol = robot.inverse_kinematics(P, np.zeros(d), e, initial=ik)
        u = kkt_inverse_dynamics(desc, sol.q, np.zeros(tree.nq), sol.qdd, act,
                                 gravity=np.zeros(3))
        columns.append(sol.J_IK.T @ u)
    M_kkt = np.column_stack(columns)
    assert np.linalg.norm(M_t - M_kkt) < 1e-8 * np.linalg.norm(M_kkt)


def test_positions_only_and_bad_requests(served):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import ForwardKinematics
    names = list(served.robot.actuated_joints)
    call = lambda req: served.client.call(ForwardKinematics, 'forward_kinematics', req)  # noqa
    still = call(fk_request(names, served.x))
    assert still.success, still.message
    assert not still.has_twist and list(still.joint_state.velocity) == []
    unknown = fk_request(names, served.x)
    unknown.actuator_state.name[0] = 'no_such_joint'
    r = call(unknown)
    assert r.error_code.val == ErrorCodes.UNKNOWN_JOINT and 'no_such_joint' in r.message
    nan = fk_request(names, served.x)
    nan.actuator_state.position[0] = float('nan')
    r = call(nan)
    assert r.error_code.val == ErrorCodes.NON_FINITE and 'actuator_state.position' in r.message
    short = fk_request(names, served.x, served.xd)
    short.actuator_state.velocity = short.actuator_state.velocity[:-1]
    r = call(short)
    assert r.error_code.val == ErrorCodes.INVALID_SIZE and 'actuator_state.velocity' in r.message
    if not served.pkm:                      # beyond a stroke
        far = fk_request(names, np.asarray(served.x) + 100.0)
        r = call(far)
        assert not r.success and r.error_code.val == ErrorCodes.INVALID_STATE, r.message
    assert call(fk_request(names, served.x)).success         # still serving
