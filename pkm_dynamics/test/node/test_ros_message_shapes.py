"""One shape per field, over DDS: every `ros2 service call` example of the package README and
of the documentation pages (doc/*.rst), its YAML filled into the request as ros2cli fills it, is
answered with success by a node serving the robot it names, and every `ros2 topic pub` example
fills its message; a pose in a frame other than the root link is refused naming both frames; fields of the
other kind's space are refused, not ignored; InverseKinematics' optional twist and acceleration
take `has_twist` / `has_acceleration` flags. One module-chain node (heavy_duty_4dof) and one
PKM node (planar_3rrr)."""
import importlib
from pathlib import Path
import re
import shlex
import textwrap

import numpy as np
from numpy.testing import assert_array_equal
import pytest
import yaml


PACKAGE = Path(__file__).resolve().parents[2]
#: where the shell examples are: the package README and the documentation pages
DOCUMENTS = [PACKAGE / 'README.md', *sorted((PACKAGE / 'doc').glob('*.rst'))]
X0 = [0.3, 0.2, 0.25, 0.4]


@pytest.fixture(scope='module')
def chain(served_robot):
    return served_robot('heavy_duty_4dof', 'shape_chain')[:2]


@pytest.fixture(scope='module')
def pkm(served_robot):
    return served_robot('planar_3rrr', 'shape_pkm')[:2]


def message_class(type_name):
    """The class of 'pkg/Type' or 'pkg/msg/Type' (as in a field type or a ros2cli argument)."""
    parts = type_name.split('/')
    package, kind, name = (parts[0], 'msg', parts[1]) if len(parts) == 2 else parts
    return getattr(importlib.import_module(f'{package}.{kind}'), name)


def fill(msg, values, where=''):
    """Set the fields of ``msg`` from a YAML mapping, as ros2cli's set_message_fields does:
    nested mappings fill nested messages, lists of mappings fill sequences of messages, ints
    given for floats are converted; an unknown field fails the test (naming it)."""
    types = msg.get_fields_and_field_types()
    for name, value in values.items():
        assert name in types, f'{where}{name} is not a field of {type(msg).__name__}'
        field_type = types[name]
        if isinstance(value, dict):
            fill(getattr(msg, name), value, f'{where}{name}.')
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            item = message_class(re.sub(r'^sequence<|>$|\[.*\]$|,\s*\d+>$', '', field_type))
            items = []
            for k, v in enumerate(value):
                items.append(item())
                fill(items[-1], v, f'{where}{name}[{k}].')
            setattr(msg, name, items)
        elif 'double' in field_type or 'float' in field_type:
            setattr(msg, name, [float(v) for v in value] if isinstance(value, list)
                    else float(value))
        else:
            setattr(msg, name, value)


def code_blocks(path):
    """The code blocks of a document: Markdown's unlabelled fences, reStructuredText's
    ``code-block`` directives (their indented body, dedented)."""
    text = path.read_text(encoding='utf-8')
    if path.suffix == '.md':
        return re.findall(r'```\n(.*?)```', text, re.S)
    bodies = re.findall(r'^\.\. code-block:: \w+\n\n((?:(?:   .*)?\n)+)', text, re.M)
    return [textwrap.dedent(body) for body in bodies]


def documented_commands(prefix):
    """Every ``ros2 <prefix>`` command of the code blocks of the package README and the pages,
    read on over line ends as the shell does (a trailing backslash, an open double quote), with
    the robot its example is for (a ``# planar_3rrr`` comment switches a block from the crane to
    the 3-RRR)."""
    commands = []
    for block in [b for path in DOCUMENTS for b in code_blocks(path)]:
        robot, command = 'heavy_duty_4dof', ''
        for line in block.split('\n'):
            command += line
            if command.endswith('\\'):            # the shell reads on, without the line end
                command = command[:-1]
                continue
            if command.count('"') % 2:              # ... and, in quotes, with it
                command += '\n'
                continue
            if command.startswith('# planar_3rrr'):
                robot = 'planar_3rrr'
            if command.startswith(f'ros2 {prefix} '):
                commands.append((robot, command))
            command = ''
    return commands


def command_request(command):
    """(service name, type, filled request) of a ``ros2 service call`` line."""
    m = re.match(r'ros2 service call\s+(\S+)\s+(\S+)(?:\s+"(.*)")?\s*$', command, re.S)
    assert m, command
    srv = message_class(m.group(2))
    request = srv.Request()
    if m.group(3):
        values = yaml.safe_load(m.group(3))
        fill(request, values)
    return m.group(1), srv, request


def test_documented_commands_are_found():
    """The examples are where the tests look: the pages' service calls (every service, both
    robots) and topic publications, the README's."""
    pages = {path.name: sum(b.count('ros2 service call') for b in code_blocks(path))
             for path in DOCUMENTS}
    assert pages['services.rst'] >= 9 and pages['README.md'] >= 1, pages
    assert sum(b.count('ros2 topic pub') for b in code_blocks(PACKAGE / 'doc' / 'topics.rst')) >= 3
    assert sum(b.count('ros2 topic pub') for b in code_blocks(PACKAGE / 'doc' / 'running.rst')) >= 1


def test_documented_service_examples_are_answered(chain, pkm):
    commands = documented_commands('service call')
    assert len(commands) >= 8, commands
    served = {'heavy_duty_4dof': chain[1], 'planar_3rrr': pkm[1]}
    for robot, command in commands:
        name, srv, request = command_request(command)
        assert name.startswith('/pkm_dynamics/'), name
        response = served[robot].call(srv, name[len('/pkm_dynamics/'):], request)
        assert response.success, f'{command}\n-> {response.message}'
        if srv.__name__ == 'InverseKinematics' and robot == 'heavy_duty_4dof':
            # the services page: IK of FK(x), seeded with x, gives x back
            assert np.abs(np.subtract(response.actuator_state.position, X0)).max() < 1e-8
        if srv.__name__ == 'InverseKinematics' and robot == 'planar_3rrr':
            robot_ = pkm[0]
            P = np.eye(4)
            P[:2, 3] = [0.01, -0.01]
            V = [0.1 if c == 'vx' else 0.0 for c in robot_.task_space]
            expected = robot_.inverse_kinematics(P, np.array(V))
            assert_array_equal(response.actuator_state.velocity, expected.actuators_d)


def test_documented_topic_examples_fill_their_messages():
    commands = documented_commands('topic pub')
    assert len(commands) >= 3, commands
    flags = {'-1', '--once', '--keep-alive'}              # options without a value
    shell = {'>', '&', '|', ';', '&&'}                    # the command ends at these
    for _, command in commands:
        words = shlex.split(command)[3:]                  # after `ros2 topic pub`
        words = words[:next((k for k, w in enumerate(words) if w in shell), len(words))]
        positional = []
        while words:
            word = words.pop(0)
            if word.startswith('-'):
                if word not in flags:
                    words.pop(0)                          # the option's value
            else:
                positional.append(word)
        assert len(positional) == 3, command              # topic, type, message
        fill(message_class(positional[1])(), yaml.safe_load(positional[2]))


def stamped(C, frame_id=''):
    from geometry_msgs.msg import PoseStamped
    from pkm_dynamics.node.messages.conversions import matrix_pose
    msg = PoseStamped(pose=matrix_pose(C))
    msg.header.frame_id = frame_id
    return msg


def refused(response, *words):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    assert not response.success
    assert response.error_code.val == ErrorCodes.INVALID_REQUEST, response.message
    assert all(w in response.message for w in words), response.message


def test_a_pose_in_another_frame_is_refused(chain, pkm):
    from geometry_msgs.msg import Transform
    from pkm_dynamics_interfaces.srv import (ForwardDynamics, HigherOrderInverseDynamics,
                                             InverseDynamics, InverseKinematics)
    from trajectory_msgs.msg import MultiDOFJointTrajectoryPoint
    robot, client = chain
    root = robot.tree.root_link
    P = robot.forward_kinematics(np.array(X0))
    ik = InverseKinematics.Request(pose=stamped(P, 'tool0'))
    ik.seed.name, ik.seed.position = list(robot.actuated_joints), X0
    refused(client.call(InverseKinematics, 'inverse_kinematics', ik),
            'pose.header.frame_id', '"tool0"', f'"{root}"')
    for frame in (root, ''):
        ik.pose.header.frame_id = frame
        response = client.call(InverseKinematics, 'inverse_kinematics', ik)
        assert response.success, response.message
        assert np.abs(np.subtract(response.actuator_state.position, X0)).max() < 1e-8

    robot, client = pkm
    root = robot.tree.root_link
    P = robot.task_pose(np.array([0.01, -0.01, 0.05]))
    fd = ForwardDynamics.Request(pose=stamped(P, 'map'))
    fd.joint_state.name, fd.joint_state.effort = list(robot.actuated_joints), [1.0, 2.0, 3.0]
    refused(client.call(ForwardDynamics, 'forward_dynamics', fd), '"map"', f'"{root}"')
    fd.pose.header.frame_id = root
    response = client.call(ForwardDynamics, 'forward_dynamics', fd)
    assert response.success, response.message
    hoid = HigherOrderInverseDynamics.Request(pose=stamped(P, 'map'))
    refused(client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics', hoid),
            '"map"', f'"{root}"')
    request = InverseDynamics.Request()
    request.task_trajectory.header.frame_id = 'map'
    request.task_trajectory.joint_names = ['platform']
    pose = stamped(P).pose
    tf = Transform(rotation=pose.orientation)
    tf.translation.x, tf.translation.y, tf.translation.z = (pose.position.x, pose.position.y,
                                                            pose.position.z)
    request.task_trajectory.points = [MultiDOFJointTrajectoryPoint(transforms=[tf])]
    refused(client.call(InverseDynamics, 'inverse_dynamics', request),
            'task_trajectory.header.frame_id', '"map"', f'"{root}"')
    request.task_trajectory.header.frame_id = root
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert response.success, response.message
    zero = np.zeros(robot.dof)
    from pkm_dynamics.node.messages.conversions import pose_matrix
    assert_array_equal(response.feedforward.points[0].effort,
                       robot.inverse_dynamics(pose_matrix(tf), zero, zero))


def test_fields_of_the_other_space_are_refused(chain, pkm):
    from pkm_dynamics_interfaces.srv import ForwardDynamics, HigherOrderInverseDynamics
    from pkm_dynamics.node.messages.conversions import pose_matrix, task_message
    from pkm_dynamics.core.hoid.higher_order import higher_order_inverse_dynamics
    robot, client = pkm
    P = robot.task_pose(np.array([0.01, -0.01, 0.05]))
    hoid = HigherOrderInverseDynamics.Request(pose=stamped(P))
    hoid.motion.name = list(robot.actuated_joints)
    hoid.motion.position = [0.0, 0.0, 0.0]          # was silently ignored
    refused(client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics', hoid),
            'motion is set', 'parallel manipulator')
    hoid.motion = type(hoid.motion)()
    response = client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics', hoid)
    assert response.success, response.message
    zero = np.zeros(robot.dof)
    expected = higher_order_inverse_dynamics(robot, pose_matrix(hoid.pose.pose), zero, zero,
                                             zero, zero)
    assert_array_equal(response.effort.effort, expected.u)
    fd = ForwardDynamics.Request(pose=stamped(P))
    fd.joint_state.name, fd.joint_state.effort = list(robot.actuated_joints), [1.0, 2.0, 3.0]
    fd.joint_state.position = [0.0, 0.0, 0.0]
    refused(client.call(ForwardDynamics, 'forward_dynamics', fd), 'joint_state.position')

    robot, client = chain
    hoid = HigherOrderInverseDynamics.Request()
    hoid.motion.name, hoid.motion.position = list(robot.actuated_joints), X0
    hoid.twist = task_message([0.1], ('vx',))
    refused(client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics', hoid),
            'twist is set', 'module chain')
    hoid.twist = type(hoid.twist)()
    hoid.pose.header.frame_id = robot.tree.root_link
    refused(client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics', hoid),
            'pose is set')
    fd = ForwardDynamics.Request()
    fd.joint_state.name, fd.joint_state.position = list(robot.actuated_joints), X0
    fd.joint_state.effort = [0.0] * 4
    fd.twist = task_message([0.1], ('wz',))
    refused(client.call(ForwardDynamics, 'forward_dynamics', fd), 'twist is set')


def test_optional_twist_and_acceleration_take_their_flags(chain, pkm):
    from geometry_msgs.msg import Accel
    from pkm_dynamics_interfaces.srv import InverseKinematics
    from pkm_dynamics.node.messages.conversions import task_message
    robot, client = pkm
    P = robot.task_pose(np.array([0.01, -0.01, 0.05]))
    V, A = np.array([0.1, -0.2, 0.3]), np.array([1.0, 0.5, -0.5])
    request = InverseKinematics.Request(pose=stamped(P))
    request.twist = task_message(V, robot.task_space)
    refused(client.call(InverseKinematics, 'inverse_kinematics', request),
            'twist is set', 'has_twist')
    request.twist = type(request.twist)()
    request.has_acceleration = True
    request.acceleration = task_message(A, robot.task_space, Accel)
    refused(client.call(InverseKinematics, 'inverse_kinematics', request),
            'acceleration needs a twist')
    request.has_twist = True
    request.twist = task_message(V, robot.task_space)
    response = client.call(InverseKinematics, 'inverse_kinematics', request)
    assert response.success, response.message
    expected = robot.inverse_kinematics(P, V, A)
    assert_array_equal(response.actuator_state.velocity, expected.actuators_d)
    assert_array_equal(response.actuator_acceleration, expected.actuators_dd)

    robot, client = chain
    request = InverseKinematics.Request(pose=stamped(robot.forward_kinematics(np.array(X0))))
    request.acceleration = task_message([0.1], ('vx',), Accel)
    refused(client.call(InverseKinematics, 'inverse_kinematics', request),
            'acceleration is set', 'has_acceleration')


def test_task_point_reader_reads_what_the_checked_reader_does(pkm):
    """The stream's one-array reader of a task point (``task_point_reader``) gives the numbers
    of the field-by-field reader (``pose_matrix``, ``task_vector``) for a good point, and hands
    every point that reader refuses back to it (None)."""
    from geometry_msgs.msg import Transform, Twist
    from trajectory_msgs.msg import MultiDOFJointTrajectoryPoint
    from pkm_dynamics.node.messages.conversions import (TWIST_COMPONENTS, matrix_pose, pose_matrix,
                                          task_message, task_vector)
    from pkm_dynamics.node.messages.state_messages import task_point_reader
    robot = pkm[0]
    read = task_point_reader(tuple(robot.task_space))
    pose = matrix_pose(robot.task_pose(np.array([0.01, -0.01, 0.05])))

    def point(V=(0.1, -0.2, 0.3), A=(-1.0, 2.0, 0.5), q=None):
        tf = Transform()
        tf.translation.x, tf.translation.y, tf.translation.z = (
            pose.position.x, pose.position.y, pose.position.z)
        tf.rotation = pose.orientation
        if q is not None:
            tf.rotation.x, tf.rotation.y, tf.rotation.z, tf.rotation.w = q
        return MultiDOFJointTrajectoryPoint(
            transforms=[tf], velocities=[task_message(V, robot.task_space, Twist)],
            accelerations=[task_message(A, robot.task_space, Twist)])

    p = point()
    C, V, A = read(p)
    assert_array_equal(C, pose_matrix(p.transforms[0]))
    assert_array_equal(V, task_vector(p.velocities[0], robot.task_space, 'v', 'rate 1'))
    assert_array_equal(A, task_vector(p.accelerations[0], robot.task_space, 'a', 'rate 2'))
    p.velocities, p.accelerations = [], []                  # missing rates: zero
    assert_array_equal(read(p)[1:], np.zeros((2, len(robot.task_space))))
    outside = point()                       # a twist component outside the task space
    c = next(c for c in TWIST_COMPONENTS if c not in robot.task_space)
    setattr(getattr(outside.velocities[0], 'angular' if c[0] == 'w' else 'linear'), c[1], 0.5)
    too_fast = point(V=(2e2, 0.0, 0.0))
    two = point()
    two.transforms = [two.transforms[0]] * 2
    for bad in (point(q=(0.0, 0.0, 0.0, 2.0)), point(q=(float('nan'), 0.0, 0.0, 1.0)),
                point(A=(0.0, float('inf'), 0.0)), too_fast, two, outside):
        assert read(bad) is None
