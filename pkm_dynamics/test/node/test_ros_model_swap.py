"""Model swaps in the installed node: a new description is built without holding up the
services of the model serving, replaces it for every thread at once (the streaming topics'
warm starts included), a rejected description never replaces the last valid one, and a
description is XML text — never a path read from the node's disk."""
import threading
import time

import numpy as np

from pkm_dynamics.core import load_robot
from pkm_dynamics.core.description.examples import module_chain_urdf
from pkm_dynamics.testing import Client, Collector, matched_publisher, spin_until

from test_ros_lifecycle import transition


def model_info(client):
    from pkm_dynamics_interfaces.srv import GetModelInfo
    return client.call(GetModelInfo, 'get_model_info')


def parameter_request(text):
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    return SetParameters.Request(parameters=[Parameter(
        name='robot_description',
        value=ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=text))])


def set_description(client, text):
    from rcl_interfaces.srv import SetParameters
    return client.call(SetParameters, 'set_parameters', parameter_request(text)).results[0]


def task_reference(robot, x):
    """A one-point task reference (MultiDOFJointTrajectory) at task coordinates ``x``, with a
    small task velocity and acceleration."""
    from geometry_msgs.msg import Accel, Transform, Twist
    from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint
    from pkm_dynamics.node.messages.conversions import matrix_pose, task_message
    pose = matrix_pose(robot.task_pose(x))
    tf = Transform(rotation=pose.orientation)
    tf.translation.x, tf.translation.y, tf.translation.z = (
        pose.position.x, pose.position.y, pose.position.z)
    msg = MultiDOFJointTrajectory(joint_names=['platform'])
    V, A = np.full(robot.dof, 0.01), np.full(robot.dof, -0.02)
    msg.points = [MultiDOFJointTrajectoryPoint(
        transforms=[tf], velocities=[task_message(V, robot.task_space, Twist)],
        accelerations=[task_message(A, robot.task_space, Accel)])]
    return msg


def test_swaps_while_streaming(start_node, ros_node, example_robot):
    """3-RRR <-> 6-UPS swaps while actuator states and task references stream: after each
    swap, completion and feedforward answer the new robot with outputs of its size, and no
    actuator state (valid for both robots) is ever refused."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import MultiDOFJointTrajectory
    texts = {name: example_robot(name) for name in ('planar_3rrr', 'gough_stewart_6ups')}
    robots = {name: load_robot(text) for name, text in texts.items()}
    # every warning logged (no throttling), so that none about an actuator state can hide
    process = start_node(params={'robot_description': texts['planar_3rrr'],
                                 'warning_period': 0.0})
    client = Client(ros_node)
    assert model_info(client).success
    completed = Collector(ros_node, JointState, '/joint_states')
    commands = Collector(ros_node, Float64MultiArray, '/pkm_dynamics/feedforward/commands')
    states_pub = matched_publisher(ros_node, JointState, '/actuator_states', 10)
    tasks_pub = matched_publisher(ros_node, MultiDOFJointTrajectory,
                                  '/pkm_dynamics/task_reference', 100)
    # one actuator state that is valid for both robots (each takes its own joints)
    names, positions, references = [], [], []
    for robot in robots.values():
        sol = robot.inverse_kinematics(robot.task_pose(np.full(robot.dof, 0.01)))
        names += list(robot.actuated_joints)
        positions += list(sol.actuators)
        references += [task_reference(robot, np.full(robot.dof, c)) for c in (0.005, 0.01)]
    measured = JointState(name=names, position=positions)

    stop = threading.Event()

    def stream():
        k = 0
        while not stop.is_set():
            states_pub.publish(measured)
            tasks_pub.publish(references[k % len(references)])
            k += 1
            time.sleep(0.002)

    streamer = threading.Thread(target=stream, daemon=True)
    streamer.start()
    try:
        for name in ['gough_stewart_6ups', 'planar_3rrr'] * 3:
            robot = robots[name]
            assert set_description(client, texts[name]).successful
            completed.messages.clear()
            commands.messages.clear()
            assert spin_until(ros_node, lambda: any(
                len(m.position) == len(robot.tree_joints) for m in completed.messages)), \
                (name, model_info(client).robot_name, {len(m.position) for m in completed.messages})
            assert spin_until(ros_node, lambda: any(
                len(m.data) == robot.dof for m in commands.messages)), \
                (name, model_info(client).robot_name, {len(m.data) for m in commands.messages})
    finally:
        stop.set()
        streamer.join()
    assert process.running()
    assert 'actuator state ignored' not in process.log()


def test_a_model_is_built_while_the_old_one_serves(start_node, ros_node, example_robot):
    """A large description (a 256-module crane, the largest generated chain) set as the
    parameter: while it is being built, get_model_info answers with the model serving."""
    from rcl_interfaces.srv import SetParameters
    text = example_robot('linear_4bar_1dof')
    process = start_node(params={'robot_description': text})
    client = Client(ros_node)
    assert model_info(client).robot_name == load_robot(text).description.name
    large = module_chain_urdf(256)
    large_name = load_robot(large).description.name
    setter = ros_node.create_client(SetParameters, '/pkm_dynamics/set_parameters')
    assert setter.wait_for_service(timeout_sec=20.0)
    future = setter.call_async(parameter_request(large))
    assert spin_until(ros_node, lambda: 'building the model of a new robot_description'
                      in process.log(), timeout=20.0), process.log()   # the build has begun
    info = model_info(client)
    assert not future.done(), 'get_model_info waited for the build'
    assert info.success and info.robot_name == load_robot(text).description.name
    assert spin_until(ros_node, future.done, timeout=120.0)
    assert future.result().results[0].successful, future.result().results[0].reason
    assert model_info(client).robot_name == large_name
    assert process.running()


def test_the_last_valid_description_is_kept(start_node, ros_node, example_robot):
    """Good description, then a malformed one on the topic (rejected), then deactivate /
    cleanup / configure / activate: the good one is configured again, also when the malformed
    one arrives while the node is unconfigured. Shutdown ends the process."""
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String
    publisher = ros_node.create_publisher(String, '/robot_description', QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
        reliability=ReliabilityPolicy.RELIABLE))
    good = example_robot('linear_4bar_1dof')
    name = load_robot(good).description.name
    publisher.publish(String(data=good))
    process = start_node(params={'robot_description': ''})
    client = Client(ros_node)
    assert spin_until(ros_node, lambda: model_info(client).robot_name == name, timeout=20.0)
    publisher.publish(String(data='<robot name="broken"><link name="a">'))
    assert spin_until(ros_node, lambda: 'rejected' in model_info(client).message, timeout=20.0)
    for label in ('deactivate', 'cleanup', 'configure', 'activate'):
        assert transition(client, label), label
    info = model_info(client)
    assert info.success and info.robot_name == name, info.message
    # unconfigured, a malformed one arrives: it is checked at once and not kept either
    for label in ('deactivate', 'cleanup'):
        assert transition(client, label), label
    publisher.publish(String(data='<robot name="broken again">'))
    assert spin_until(ros_node, lambda: 'rejected' in model_info(client).message, timeout=20.0)
    for label in ('configure', 'activate'):
        assert transition(client, label), label
    info = model_info(client)
    assert info.success and info.robot_name == name, info.message

    request = ChangeState.Request()
    request.transition.id = Transition.TRANSITION_ACTIVE_SHUTDOWN
    assert client.call(ChangeState, 'change_state', request).success
    assert process.process.wait(timeout=20.0) == 0, process.log()


def test_a_description_is_xml_text_not_a_path(start_node, ros_node, example_robot, tmp_path):
    """A file path as robot_description is refused; the reason is the same whether the path
    exists or not and repeats neither the path nor anything of the file."""
    text = example_robot('linear_4bar_1dof')
    process = start_node(params={'robot_description': text})
    client = Client(ros_node)
    secret = tmp_path / 'secret.xml'
    secret.write_text('<secret_root_tag/>')
    urdf = tmp_path / 'robot.urdf'
    urdf.write_text(text)
    reasons = set()
    for path in (str(urdf), str(secret), str(tmp_path / 'missing.urdf')):
        result = set_description(client, path)
        assert not result.successful
        assert path not in result.reason and 'secret_root_tag' not in result.reason
        reasons.add(result.reason)
    assert len(reasons) == 1 and 'not URDF XML text' in reasons.pop()
    assert model_info(client).robot_name == load_robot(text).description.name
    assert process.running()


def test_bad_numbers_and_entities_are_refused_naming_the_culprit(start_node, ros_node,
                                                                 example_robot):
    """Through the parameter: a NaN inertia and a NaN joint origin of a PKM are refused naming
    the link / joint, an entity-amplified description is refused before any expansion; the
    model serving keeps serving."""
    text = example_robot('linear_4bar_1dof')
    pkm = example_robot('planar_3rrr')
    process = start_node(params={'robot_description': text})
    client = Client(ros_node)
    nan_inertia = text.replace('ixx="0.28426"', 'ixx="nan"')
    nan_origin = pkm.replace('<origin xyz="1.83697019872e-17 0.3 0"', '<origin xyz="nan 0.3 0"')
    entities = ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY a "aaaaaaaaaa">'
                '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>' + text[text.index('<robot'):])
    for bad, culprit in ((nan_inertia, "link 'B11'"), (nan_origin, "joint 'limb1_a'"),
                         (entities, 'document type declaration')):
        assert bad != text and bad != pkm
        result = set_description(client, bad)
        assert not result.successful and culprit in result.reason, result.reason
    assert model_info(client).robot_name == load_robot(text).description.name
    assert process.running()


def test_the_streaming_thread_is_prepared_for_every_model(start_node, ros_node, example_robot):
    """The streaming thread makes the stream's core calls once for each model the node serves
    (the first one at configure, a swapped one when it arrives; its log line), so that the
    kernels' per-thread scratch exists before the first reference: a PKM first, then a crane
    set as the parameter, then the PKM again (a new model of the same robot)."""
    pkm, crane = example_robot('irsbot2'), example_robot('heavy_duty_4dof')
    process = start_node(params={'robot_description': pkm})
    names = [load_robot(text).description.name for text in (pkm, crane)]

    def prepared(name, times):
        return process.log().count(f'streaming thread ready for "{name}"') >= times

    assert spin_until(ros_node, lambda: prepared(names[0], 1), timeout=20.0), process.log()
    assert set_description(Client(ros_node), crane).successful
    assert spin_until(ros_node, lambda: prepared(names[1], 1), timeout=20.0), process.log()
    assert set_description(Client(ros_node), pkm).successful
    assert spin_until(ros_node, lambda: prepared(names[0], 2), timeout=20.0), process.log()
    assert 'was not prepared' not in process.log()
    assert process.running()
