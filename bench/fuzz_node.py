"""A fuzz campaign against the INSTALLED node, run as its own process over loopback DDS.

Parts (each against a fresh node process of ``pkm_dynamics.testing.NodeProcess``):

* ``services``: the generators of ``pkm_dynamics/test/test_fuzz_requests.py`` (special floats,
  wrong sizes and names, non-unit quaternions, far poses, states beyond strokes, rates beyond
  the bounds) for every dynamics service including ``forward_kinematics``, over the five
  example robots, plus trajectories of up to 10^5 points; after each request, a good
  inverse-dynamics request must answer the core's own numbers (computed in this process);
* ``descriptions``: bad robot descriptions (NaN/Inf numbers, DTD/entities, huge, two parents,
  file paths, garbage) set as the ``robot_description`` parameter and published on the
  ``robot_description`` topic: each must be refused with a message, the previous model keep
  serving (model info and a good request checked);
* ``payload``: bad ``payload.*`` values: refused, model kept;
* ``topics``: malformed references and actuator states on the reference / task-reference and
  completion topics, good ones between: every output finite and within the joint limits, the
  good ones answered with the core's numbers;
* ``lifecycle``: deactivate/activate/cleanup/configure cycles while another thread calls
  inverse dynamics: every answer right or NOT_ACTIVE / NO_MODEL;
* ``leak``: the node's RSS over a few thousand calls (good and bad).

Counts per robot and class: deaths (the process exited), hangs (no answer within 2 s for one
point), FAILURE, success with non-finite numbers, success with a joint beyond its limits,
wrong answers to the next good request, bad descriptions / payloads accepted, non-finite topic
outputs; an exit code of -11 when the node is stopped is counted apart ("exit -11 at stop"),
as is a node that does not exit within 20 s of SIGINT ("no exit at stop", then killed).
Exits non-zero on any violation. JSON in ``bench/results/fuzz_node.json``.

    .venv/bin/python bench/fuzz_node.py [--examples N] [--seed S] [--robots a,b]
        [--parts services,descriptions,payload,topics,lifecycle,leak]
"""
import argparse
import json
import math
import os
from pathlib import Path
import re
import sys
import tempfile
import threading
import time
import warnings

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'bench'))
from common import load_suite, machine  # noqa: E402

ROBOTS_DIR = ROOT / 'pkm_dynamics' / 'robots'
#: the node's namespace: its own, so that no other node on the DDS domain answers or publishes
NAMESPACE = f'/fuzz_node_{os.getpid()}'
PREFIX = f'{NAMESPACE}/pkm_dynamics'
#: a point unanswered this long is a hang
HANG = 2.0
RESEND_AFTER = 5.0


def rss_mb(pid):
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024.0
    return float('nan')


class Tally:
    """Counts per (robot, class) and a few examples of each violation."""

    VIOLATIONS = ('death', 'hang', 'failure', 'non_finite', 'beyond_limits', 'wrong_next',
                  'accepted_bad', 'kept_model_lost', 'topic_non_finite', 'topic_wrong',
                  'unclear_message')

    def __init__(self):
        self.counts = {}
        self.examples = {}

    def add(self, robot, what, example=None, n=1):
        key = f'{robot}:{what}'
        self.counts[key] = self.counts.get(key, 0) + n
        if example is not None and what in self.VIOLATIONS:
            self.examples.setdefault(key, [])
            if len(self.examples[key]) < 5:
                self.examples[key].append(str(example)[:400])
                print(f'  !! {robot} {what}: {str(example)[:300]}', flush=True)

    def violations(self):
        return sum(v for k, v in self.counts.items() if k.split(':')[1] in self.VIOLATIONS)


class Remote:
    """A node process and this process's clients of it; ``model`` is the same description's
    model built here (the independent numbers). ``call`` raises TimeoutError on a hang."""

    def __init__(self, campaign, robot, params=None, text=None):
        from pkm_dynamics.core.interface import SolverOptions
        from pkm_dynamics.node.model import STANDARD_GRAVITY, Model
        from pkm_dynamics.testing import NodeProcess
        self.campaign, self.robot = campaign, robot
        text = text if text is not None else (ROBOTS_DIR / f'{robot}.urdf').read_text()
        params = dict(params if params is not None else {'robot_description': text})
        # the node's default solver parameters (config/pkm_dynamics.yaml)
        options = SolverOptions(singularity_threshold=1e6)
        self.model = Model(text, STANDARD_GRAVITY, options)
        campaign.started += 1
        self.process = NodeProcess(campaign.workdir, params=params,
                                   name=f'node_{campaign.started}',
                                   ros_args=['-r', f'__ns:={NAMESPACE}'])
        self.clients = {}
        self.ros = campaign.ros
        self.wait_ready()

    def srv_type(self, service):
        from pkm_dynamics_interfaces import srv
        from rcl_interfaces.srv import SetParameters, SetParametersAtomically
        from lifecycle_msgs.srv import ChangeState
        return {'set_parameters': SetParameters,
                'set_parameters_atomically': SetParametersAtomically,
                'change_state': ChangeState}.get(service) or getattr(
            srv, ''.join(w.capitalize() for w in service.split('_')))

    def client(self, service, node=None):
        node = node or self.ros
        key = (service, node.get_name())
        if key not in self.clients:
            c = node.create_client(self.srv_type(service), f'{PREFIX}/{service}')
            if not c.wait_for_service(timeout_sec=30.0):
                raise RuntimeError(f'{service} did not appear')
            self.clients[key] = c
        return self.clients[key]

    def call(self, service, request, timeout=HANG, node=None, resend=False):
        """The answer to ``request``; sent once (``resend``: again every RESEND_AFTER s, for
        the first calls while discovery settles: a long call sent twice is computed twice)."""
        from pkm_dynamics import testing
        testing.RESEND_AFTER = RESEND_AFTER if resend else 1e9
        return testing._request(node or self.ros, self.client(service, node), request, timeout,
                                service)

    def wait_ready(self):
        """Every service discovered and answering (a first request may be lost to discovery:
        sent again until answered)."""
        for service in ('get_model_info', *self.campaign.suite.SERVICES):
            self.call(service, self.srv_type(service).Request(), timeout=30.0, resend=True)

    def stop(self):
        """SIGINT; the exit code. A node that does not exit within 20 s is killed and counted
        apart ("no exit at stop"), as an exit -11: the shutdown path is main()'s."""
        try:
            code = self.process.stop(timeout=20.0)
        except TimeoutError:
            self.campaign.tally.add(self.robot, 'no exit at stop (killed)')
            return None
        if code == -11:
            self.campaign.tally.add(self.robot, 'exit -11 at stop')
        elif code not in (0, None):
            self.campaign.tally.add(self.robot, f'exit {code} at stop')
        return code


class Campaign:
    def __init__(self, args):
        import rclpy
        from rclpy.signals import SignalHandlerOptions
        self.args = args
        self.suite = load_suite()
        self.tally = Tally()
        self.workdir = Path(tempfile.mkdtemp(prefix='fuzz_node_'))
        self.started = 0
        self.context = rclpy.Context()
        rclpy.init(context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        self.ros = rclpy.create_node('fuzz_node_client', context=self.context)
        self.rng = np.random.default_rng(args.seed)
        self.times = []
        self.figures = {}

    def start(self, robot, **kwargs):
        return Remote(self, robot, **kwargs)

    # -- one request, classified ---------------------------------------------------------------
    def request(self, remote, service, request):
        """Send one fuzz request, then the good request; classify. Returns the (maybe
        restarted) remote."""
        t = self.tally
        t0 = time.perf_counter()
        try:
            response = remote.call(service, request)
        except TimeoutError:
            t.add(remote.robot, 'hang', f'{service}: no answer within {HANG} s')
            return self.recover(remote)
        self.times.append(time.perf_counter() - t0)
        t.add(remote.robot, 'requests')
        try:
            code = self.suite.check_answer(remote.model, service, response)
            t.add(remote.robot, f'code {code}')
        except AssertionError as exc:
            msg = str(exc)
            kind = ('failure' if response.error_code.val == 99999 else
                    'non_finite' if 'non-finite' in msg else
                    'beyond_limits' if 'beyond' in msg else 'failure')
            t.add(remote.robot, kind, f'{service}: {msg}')
        try:
            self.suite.good_request_is_right(remote)
        except TimeoutError:
            t.add(remote.robot, 'hang', 'good request after a fuzz request')
            return self.recover(remote)
        except AssertionError as exc:
            t.add(remote.robot, 'wrong_next', f'after {service}: {exc}')
        return remote

    def recover(self, remote):
        """After a hang: the node alive? (else a death) — wait for it, or restart it."""
        if not remote.process.running():
            self.tally.add(remote.robot, 'death', f'exit code {remote.process.process.returncode}')
        else:
            from pkm_dynamics_interfaces.srv import GetModelInfo
            try:
                remote.call('get_model_info', GetModelInfo.Request(), timeout=30.0)
                return remote
            except TimeoutError:
                self.tally.add(remote.robot, 'hang', 'the node did not answer for 30 s')
        remote.process.process.kill()
        remote.process.stop()
        return self.start(remote.robot)

    # -- parts -----------------------------------------------------------------------------------
    def services(self, robot):
        from hypothesis import HealthCheck, Phase, given, seed, settings
        remote = self.start(robot)
        holder = [remote]
        for service in self.suite.SERVICES:
            @seed(self.args.seed)
            @settings(max_examples=self.args.examples, deadline=None, database=None,
                      phases=[Phase.generate], suppress_health_check=list(HealthCheck))
            @given(request=self.suite.requests(remote.model, service))
            def run(request):
                holder[0] = self.request(holder[0], service, request)
            run()
            print(f'{robot:20s} {service:30s} done', flush=True)
        self.huge_trajectories(holder[0])
        if not holder[0].process.running():
            self.tally.add(robot, 'death', 'found dead at the end')
        holder[0].stop()

    def huge_trajectories(self, remote):
        """Inverse dynamics of 10^3 .. 10^5 points: a bounded answer (refused beyond the
        documented maximum) within :meth:`trajectory_time`."""
        from pkm_dynamics_interfaces import srv
        from trajectory_msgs.msg import JointTrajectoryPoint
        m = remote.model
        for count in (1000, 1001, 100000):
            r = srv.InverseDynamics.Request()
            if m.kind == 'parallel':
                r.task_trajectory.points = [self._task_point(remote)] * count
            else:
                x = self.suite.nominal_state(m)
                r.trajectory.joint_names = list(m.actuated)
                r.trajectory.points = [JointTrajectoryPoint(positions=x, velocities=[0.01] * len(x))
                                       for _ in range(count)]
            t0 = time.perf_counter()
            try:
                response = remote.call('inverse_dynamics', r, timeout=self.trajectory_time(count))
            except TimeoutError:
                self.tally.add(remote.robot, 'hang', f'inverse_dynamics of {count} points')
                remote = self.recover(remote)
                continue
            self.tally.add(remote.robot, 'requests')
            self.figures.setdefault('huge_trajectory_s', []).append(
                (remote.robot, count, round(time.perf_counter() - t0, 3), response.success,
                 response.message[:120]))
            try:
                self.suite.check_answer(m, 'inverse_dynamics', response)
            except AssertionError as exc:
                self.tally.add(remote.robot, 'failure', exc)

    @staticmethod
    def trajectory_time(count):
        """The answer time allowed for ``count`` points: HANG, plus 20 ms per point computed (a
        PKM point costs an IK and an inverse dynamics, doc/services.rst "Input bounds") and 0.1 ms per
        point sent (transport and conversion), beyond which the request is counted a hang."""
        from pkm_dynamics.core.bounds import MAX_POINTS
        return HANG + 0.02 * min(count, MAX_POINTS) + 1e-4 * count

    def _task_point(self, remote):
        from geometry_msgs.msg import Transform, Twist
        from trajectory_msgs.msg import MultiDOFJointTrajectoryPoint
        from pkm_dynamics.node.messages.conversions import matrix_quaternion
        C = remote.model.robot.reference_pose
        t = Transform()
        t.translation.x, t.translation.y, t.translation.z = C[:3, 3].tolist()
        (t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w) = matrix_quaternion(
            C[:3, :3]).tolist()
        return MultiDOFJointTrajectoryPoint(transforms=[t], velocities=[Twist()])

    def model_kept(self, remote, what):
        """The model serving is still the robot's: model info and a good request."""
        from pkm_dynamics_interfaces.srv import GetModelInfo
        try:
            info = remote.call('get_model_info', GetModelInfo.Request(), timeout=30.0)
            if not info.success or info.robot_name != remote.model.name:
                self.tally.add(remote.robot, 'kept_model_lost', f'{what}: {info.message}')
            self.suite.good_request_is_right(remote)
        except TimeoutError:
            self.tally.add(remote.robot, 'hang', f'after {what}')
        except AssertionError as exc:
            self.tally.add(remote.robot, 'wrong_next', f'after {what}: {exc}')

    def bad_descriptions(self, good):
        """(label, text) of bad descriptions made from the example ``good``."""
        def sub(pattern, repl):
            text, n = re.subn(pattern, repl, good, count=1)
            assert n == 1, pattern
            return text
        bad = []
        for v in ('nan', 'inf', '-inf', '1e308', '-1', '0'):
            bad.append((f'mass {v}', sub(r'<mass value="[^"]*"', f'<mass value="{v}"')))
        for v in ('nan', 'inf', '-1', '1e308'):
            bad.append((f'ixx {v}', sub(r'ixx="[^"]*"', f'ixx="{v}"')))
        bad.append(('triangle inequality', sub(r'ixx="[^"]*"', 'ixx="1000"')))
        bad.append(('com nan', sub(r'(<inertial>\s*<origin[^>]*xyz=")[^"]*"', r'\1nan 0 0"')))
        bad.append(('joint origin nan', sub(r'(<joint[^>]*>\s*(?:<[^>]*>\s*)*?<origin[^>]*xyz=")'
                                            r'[^"]*"', r'\1nan 0 0"')))
        for v in ('nan 0 0', 'inf 0 0', '0 0 0', '1e-13 0 0'):
            bad.append((f'axis {v}', sub(r'<axis xyz="[^"]*"', f'<axis xyz="{v}"')))
        bad.append(('limit nan', sub(r'lower="[^"]*"', 'lower="nan"')))
        bad.append(('limit lower > upper', sub(r'lower="[^"]*"', 'lower="1e6"')))
        bad.append(('DTD with an entity', '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "'
                    + 'x' * 1000 + '">]>' + good.split('?>', 1)[-1].replace(
                        '<robot ', '<robot a="&a;" ', 1)))
        lol = '<!DOCTYPE lolz [<!ENTITY l0 "lol">' + ''.join(
            f'<!ENTITY l{k} "{("&l%d;" % (k - 1)) * 10}">' for k in range(1, 10)) + ']>'
        bad.append(('billion laughs', lol + '<robot name="&l9;"/>'))
        bad.append(('external entity', '<!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                    '<robot name="&e;"/>'))
        bad.append(('huge (12 MB)', good.replace('</robot>', '<!--' + 'x' * 12_000_000
                                                 + '--></robot>')))
        bad.append(('20000-joint chain', '<robot name="long">' + ''.join(
            f'<link name="l{k}"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" '
            f'iyy="1" iyz="0" izz="1"/></inertial></link>' for k in range(20001)) + ''.join(
            f'<joint name="j{k}" type="revolute"><parent link="l{k}"/><child link="l{k + 1}"/>'
            f'<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
            for k in range(20000)) + '</robot>'))
        two = re.search(r'<joint name="([^"]+)"[^>]*>.*?</joint>', good, re.S).group(0)
        bad.append(('two parents', good.replace(
            '</robot>', re.sub(r'name="[^"]+"', 'name="second_parent_joint"', two, count=1)
            + '</robot>')))
        bad.append(('file path /etc/passwd', '/etc/passwd'))
        bad.append(('file path of a robot', str(ROBOTS_DIR / 'planar_3rrr.urdf')))
        bad.append(('garbage bytes', bytes(self.rng.integers(1, 127, 2000, dtype=np.uint8))
                    .decode('ascii')))
        bad.append(('truncated', good[:len(good) // 2]))
        bad.append(('JSON', '{"robot": {"name": "x"}}'))
        bad.append(('empty robot', '<robot name="empty"/>'))
        bad.append(('unknown actuated joint', sub(r'joint="[^"]*"', 'joint="no_such_joint"')))
        return bad

    def unclear(self, message, label):
        """Why a refusal message is not a clear one (None if it is)."""
        if not message.strip():
            return 'empty message'
        if len(message) > 2000:
            return f'{len(message)} characters (echoes the input?)'
        if 'root:' in message:
            return 'echoes a file'
        return None

    def descriptions(self, robot):
        """Each bad description via the parameter (node started with the good one) and via the
        topic (node started without it, the good one published first)."""
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
        from rcl_interfaces.srv import SetParameters
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String
        good = (ROBOTS_DIR / f'{robot}.urdf').read_text()
        bad = self.bad_descriptions(good)
        remote = self.start(robot)
        for label, text in bad:
            request = SetParameters.Request(parameters=[Parameter(
                name='robot_description', value=ParameterValue(
                    type=ParameterType.PARAMETER_STRING, string_value=text))])
            t0 = time.perf_counter()
            try:
                result = remote.call('set_parameters', request, timeout=30.0).results[0]
            except TimeoutError:
                self.tally.add(robot, 'hang', f'parameter {label}')
                remote = self.recover(remote)
                continue
            self.figures.setdefault('description_refusal_s', []).append(
                round(time.perf_counter() - t0, 3))
            self.tally.add(robot, 'bad descriptions (parameter)')
            if result.successful:
                self.tally.add(robot, 'accepted_bad', f'parameter: {label}')
                request.parameters[0].value.string_value = good      # serve the good one again
                remote.call('set_parameters', request, timeout=30.0)
            elif self.unclear(result.reason, label):
                self.tally.add(robot, 'unclear_message',
                               f'{label}: {self.unclear(result.reason, label)}: '
                               f'{result.reason[:200]}')
            self.model_kept(remote, f'parameter {label}')
        remote.stop()
        # the topic
        remote = self.start(robot, params={'robot_description': ''}, text=good)
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
        pub = self.ros.create_publisher(String, f'{NAMESPACE}/robot_description', qos)
        pub.publish(String(data=good))
        from pkm_dynamics.testing import spin_until
        from pkm_dynamics_interfaces.srv import GetModelInfo

        def loaded():
            return remote.call('get_model_info', GetModelInfo.Request(), 30.0).success
        spin_until(self.ros, lambda: 'loaded robot' in remote.process.log(), 30.0)
        if not loaded():
            self.tally.add(robot, 'kept_model_lost', 'the good description on the topic')
        marker = 'robot description from the robot_description topic rejected'
        for label, text in bad:
            before = remote.process.log().count(marker)
            pub.publish(String(data=text))
            if not spin_until(self.ros, lambda: remote.process.log().count(marker) > before,
                              30.0):
                if not remote.process.running():
                    self.tally.add(robot, 'death', f'topic {label}')
                    remote = self.start(robot, params={'robot_description': ''}, text=good)
                    pub.publish(String(data=good))
                    continue
                self.tally.add(robot, 'accepted_bad', f'topic: {label} (no rejection logged)')
            self.tally.add(robot, 'bad descriptions (topic)')
            self.model_kept(remote, f'topic {label}')
        # lifecycle after rejections: the last valid description is configured again
        from lifecycle_msgs.msg import Transition
        from lifecycle_msgs.srv import ChangeState
        for tid in (Transition.TRANSITION_DEACTIVATE, Transition.TRANSITION_CLEANUP,
                    Transition.TRANSITION_CONFIGURE, Transition.TRANSITION_ACTIVATE):
            r = ChangeState.Request()
            r.transition.id = tid
            if not remote.call('change_state', r, timeout=30.0).success:
                self.tally.add(robot, 'kept_model_lost', f'transition {tid} after rejections')
        self.model_kept(remote, 'reconfigure after rejected topic descriptions')
        self.ros.destroy_publisher(pub)
        remote.stop()

    def payload(self, robot):
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
        from rcl_interfaces.srv import SetParametersAtomically
        remote = self.start(robot)
        D, DA, S = (ParameterType.PARAMETER_DOUBLE, ParameterType.PARAMETER_DOUBLE_ARRAY,
                    ParameterType.PARAMETER_STRING)
        cases = [('payload.mass', D, v) for v in (math.nan, math.inf, -1.0, 1e308, -0.0 - 1e-9)]
        cases += [('payload.com', DA, v) for v in ([math.nan, 0, 0], [math.inf, 0, 0], [0, 0],
                                                   [1e308, 0, 0], [0, 0, 0, 0])]
        cases += [('payload.inertia', DA, v) for v in (
            [math.nan, 0, 0, 1, 0, 1], [-1, 0, 0, 1, 0, 1], [10, 0, 0, 1, 0, 1],
            [1, 0, 0, 1, 0], [math.inf] * 6, [1, 5, 0, 1, 0, 1], [1e308, 0, 0, 1e308, 0, 1e308])]
        cases += [('payload.mass', S, 'heavy'), ('payload.com', D, 1.0)]
        for name, kind, value in cases:
            pv = ParameterValue(type=kind)
            if kind == D:
                pv.double_value = float(value)
            elif kind == DA:
                pv.double_array_value = [float(v) for v in value]
            else:
                pv.string_value = value
            params = [Parameter(name=name, value=pv)]
            if name != 'payload.mass':      # with a mass, so that the inertia is checked
                params.append(Parameter(name='payload.mass', value=ParameterValue(
                    type=D, double_value=1.0)))
            try:
                result = remote.call('set_parameters_atomically', SetParametersAtomically.Request(
                    parameters=params), timeout=30.0).result
            except TimeoutError:
                self.tally.add(robot, 'hang', f'payload {name}={value}')
                remote = self.recover(remote)
                continue
            self.tally.add(robot, 'bad payloads')
            if result.successful:
                self.tally.add(robot, 'accepted_bad', f'payload {name} = {value}')
            elif self.unclear(result.reason, name):
                self.tally.add(robot, 'unclear_message', f'payload {name}: {result.reason}')
            self.model_kept(remote, f'payload {name} = {value}')
        remote.stop()

    def bad_vector(self, nominal):
        """A list like ``nominal``: near it, with special entries, or of a wrong length."""
        rng, special = self.rng, self.suite.SPECIAL
        v = [float(x) + rng.normal(0, 0.01) for x in nominal]
        mode = rng.integers(0, 5)
        if mode == 1:
            v[rng.integers(0, len(v))] = float(rng.choice(special))
        elif mode == 2:
            v = v[:-1] if rng.random() < 0.5 else v + [0.0]
        elif mode == 3:
            v = [float(rng.choice(special)) for _ in v]
        return v

    def topics(self, robot):
        """Malformed references (actuator or task) and actuator states, good ones between."""
        from geometry_msgs.msg import Transform, Twist
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import (JointTrajectory, JointTrajectoryPoint,
                                         MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint)
        from pkm_dynamics.testing import Collector, matched_publisher, spin_until
        remote = self.start(robot)
        m = remote.model
        commands = Collector(self.ros, Float64MultiArray, f'{PREFIX}/feedforward/commands')
        joint_states = Collector(self.ros, JointState, f'{NAMESPACE}/joint_states')
        commands.wait_for_publisher(self.ros)
        joint_states.wait_for_publisher(self.ros)
        states_pub = matched_publisher(self.ros, JointState, f'{NAMESPACE}/actuator_states', 100)
        actuators = self.suite.nominal_actuators(m)
        if m.kind == 'parallel':
            ref_pub = matched_publisher(self.ros, MultiDOFJointTrajectory,
                                        f'{PREFIX}/task_reference', 100)
            C = m.robot.reference_pose
        else:
            ref_pub = matched_publisher(self.ros, JointTrajectory, f'{PREFIX}/reference', 100)
            x0 = self.suite.nominal_state(m)
        names = list(m.actuated)
        sent = 0
        for k in range(self.args.topic_messages):
            good = k % 5 == 0
            if m.kind == 'parallel':
                p = MultiDOFJointTrajectoryPoint()
                pos = C[:3, 3].tolist() if good else self.bad_vector(C[:3, 3].tolist())
                t = Transform()
                if len(pos) == 3:
                    t.translation.x, t.translation.y, t.translation.z = pos
                from pkm_dynamics.node.messages.conversions import matrix_quaternion
                q = matrix_quaternion(C[:3, :3]).tolist()
                q = q if good else self.bad_vector(q)
                if len(q) == 4:
                    t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w = q
                p.transforms = [t]
                tw = Twist()
                v = [0.0] * 6 if good else self.bad_vector([0.0] * 6)
                if len(v) == 6:
                    tw.angular.x, tw.angular.y, tw.angular.z = v[:3]
                p.velocities = [tw]
                ref_pub.publish(MultiDOFJointTrajectory(joint_names=['platform'], points=[p]))
            else:
                pos = x0 if good else self.bad_vector(x0)
                vel = [0.01] * len(x0) if good else self.bad_vector([0.01] * len(x0))
                jn = names if good or self.rng.random() < 0.8 else names[:-1] + ['nope']
                ref_pub.publish(JointTrajectory(joint_names=jn, points=[JointTrajectoryPoint(
                    positions=pos, velocities=vel)]))
            a = actuators if good else self.bad_vector(actuators)
            states_pub.publish(JointState(name=names, position=a))
            sent += 1
            spin_until(self.ros, lambda: False, 0.01)   # a stream the node keeps up with
        spin_until(self.ros, lambda: False, 3.0)
        self.tally.add(robot, 'topic messages', n=2 * sent)
        self.tally.add(robot, 'feedforward outputs', n=len(commands.messages))
        self.tally.add(robot, 'completion outputs', n=len(joint_states.messages))
        for msg in commands.messages:
            if not np.isfinite(msg.data).all():
                self.tally.add(robot, 'topic_non_finite', f'feedforward {list(msg.data)}')
        tree = m.description.tree
        for msg in joint_states.messages:
            x = np.asarray(msg.position)
            idx = [tree.joint_index(n) for n in msg.name]
            if not np.isfinite(x).all() or not np.isfinite(msg.velocity).all():
                self.tally.add(robot, 'topic_non_finite', f'completion {list(x)}')
            elif np.any(x < tree.lower[idx] - 1e-9) or np.any(x > tree.upper[idx] + 1e-9):
                self.tally.add(robot, 'beyond_limits', f'completion {list(x)}')
        # the good ones: the last outputs are the core's numbers
        if m.kind == 'parallel':
            expected = m.robot.inverse_dynamics(C, np.zeros(m.robot.dof), np.zeros(m.robot.dof))
        else:
            expected = m.robot.inverse_dynamics(np.array(x0), np.full(len(x0), 0.01),
                                                np.zeros(len(x0)))
        good_out = [msg for msg in commands.messages
                    if np.allclose(msg.data, expected, rtol=1e-9, atol=1e-9)]
        from pkm_dynamics.core.forward_state import forward_state
        q_good = forward_state(m.robot, np.array(actuators)).q
        # completion of a PKM: Newton's method from the previous state, accurate to ~1e-8
        good_completions = sum(np.allclose(msg.position, q_good, rtol=0, atol=1e-7)
                               for msg in joint_states.messages)
        near = [float(np.abs(np.subtract(msg.position, q_good)).max())
                for msg in joint_states.messages
                if np.allclose(msg.position, q_good, rtol=0, atol=1e-5)]
        expected_good = self.args.topic_messages // 5
        self.figures.setdefault('topics', []).append(
            {'robot': robot, 'sent': sent, 'feedforward': len(commands.messages),
             'good_right': len(good_out), 'good_sent': expected_good,
             'completion': len(joint_states.messages), 'completion_right': good_completions,
             'completion_near': len(near), 'completion_near_max_dev': max(near, default=0.0)})
        # the completion's queue holds 10 states (the latest win): a lost one is a figure, a
        # wrong one (within 1e-5 of the good state, the bad states' noise is ~1e-2, but not
        # within 1e-7) a violation
        if len(near) > good_completions:
            self.tally.add(robot, 'topic_wrong', f'{len(near) - good_completions} completions '
                           f'of a good actuator state off by up to {max(near):.3g}')
        if len(good_out) < expected_good:
            self.tally.add(robot, 'topic_wrong',
                           f'{len(good_out)} of {expected_good} good references answered right')
        if not remote.process.running():
            self.tally.add(robot, 'death', 'after the topic messages')
        self.ros.destroy_subscription(commands.subscription)
        self.ros.destroy_subscription(joint_states.subscription)
        self.ros.destroy_publisher(states_pub)
        self.ros.destroy_publisher(ref_pub)
        remote.stop()

    def lifecycle(self, robot):
        """Transition cycles while a second thread calls inverse dynamics."""
        import rclpy
        from lifecycle_msgs.msg import Transition
        from lifecycle_msgs.srv import ChangeState
        remote = self.start(robot)
        loader = rclpy.create_node('fuzz_node_load', context=self.context)
        stop, answers = threading.Event(), {'right': 0, 'refused': 0, 'wrong': 0, 'hang': 0}

        def load():
            view = type('View', (), {})()
            view.model = remote.model
            view.call = lambda s, r: remote.call(s, r, timeout=HANG, node=loader)
            while not stop.is_set():
                try:
                    self.suite.good_request_is_right(view)
                    answers['right'] += 1
                except TimeoutError:
                    answers['hang'] += 1
                except AssertionError as exc:
                    if ('NOT_ACTIVE' in str(exc) or 'is inactive' in str(exc)
                            or 'unconfigured' in str(exc) or 'no robot' in str(exc)):
                        answers['refused'] += 1
                    else:
                        answers['wrong'] += 1
                        self.tally.add(robot, 'wrong_next', f'under lifecycle: {exc}')
        thread = threading.Thread(target=load)
        thread.start()
        labels = ['deactivate', 'activate', 'deactivate', 'cleanup', 'configure', 'activate']
        ids = {'configure': Transition.TRANSITION_CONFIGURE,
               'activate': Transition.TRANSITION_ACTIVATE,
               'deactivate': Transition.TRANSITION_DEACTIVATE,
               'cleanup': Transition.TRANSITION_CLEANUP}
        failed = 0
        try:
            for _ in range(self.args.lifecycle_cycles):
                for label in labels:
                    r = ChangeState.Request()
                    r.transition.id = ids[label]
                    try:
                        if not remote.call('change_state', r, timeout=30.0).success:
                            failed += 1
                    except TimeoutError:
                        self.tally.add(robot, 'hang', f'lifecycle {label}')
                    time.sleep(0.2)             # the load thread calls meanwhile
        finally:
            stop.set()
            thread.join()
            loader.destroy_node()
        self.tally.add(robot, 'lifecycle transitions', n=self.args.lifecycle_cycles * 6)
        if failed:
            self.tally.add(robot, 'failure', f'{failed} lifecycle transitions failed')
        if answers['hang']:
            self.tally.add(robot, 'hang', f"{answers['hang']} calls under lifecycle", )
        self.figures.setdefault('lifecycle', []).append({'robot': robot, **answers})
        self.model_kept(remote, 'lifecycle cycles')
        remote.stop()

    def leak(self, robot):
        """RSS of the node over ``--leak-calls`` calls: good and bad inverse dynamics."""
        from hypothesis import HealthCheck, Phase, given, seed, settings
        remote = self.start(robot)
        pid = remote.process.process.pid
        samples = []
        holder = [remote]
        count = [0]

        @seed(self.args.seed + 1)
        @settings(max_examples=self.args.leak_calls // 2, deadline=None, database=None,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck))
        @given(request=self.suite.requests(remote.model, 'inverse_dynamics'))
        def run(request):
            holder[0] = self.request(holder[0], 'inverse_dynamics', request)
            count[0] += 2
            if count[0] % 200 == 0:
                samples.append((count[0], rss_mb(pid)))
        run()
        self.figures.setdefault('leak', []).append({'robot': robot, 'rss_mb': samples})
        print(f'{robot} RSS (calls, MB): {samples[:1]} ... {samples[-3:]}', flush=True)
        holder[0].stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--examples', type=int, default=60,
                        help='fuzz requests per robot and service')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--robots', default='', help='comma-separated subset of the examples')
    parser.add_argument('--parts', default='services,descriptions,payload,topics,lifecycle,leak')
    parser.add_argument('--topic-messages', type=int, default=500)
    parser.add_argument('--lifecycle-cycles', type=int, default=10)
    parser.add_argument('--leak-calls', type=int, default=3000)
    args = parser.parse_args()
    warnings.simplefilter('ignore', RuntimeWarning)
    from pkm_dynamics.testing import use_loopback_ros
    use_loopback_ros()
    campaign = Campaign(args)
    robots = [r for r in args.robots.split(',') if r] or list(campaign.suite.ROBOTS)
    parts = args.parts.split(',')
    t0 = time.perf_counter()
    try:
        for part in parts:
            for robot in (robots if part in ('services', 'descriptions', 'payload', 'topics')
                          else robots[:1] if part == 'leak' else robots[:2]):
                print(f'== {part} {robot}', flush=True)
                getattr(campaign, part)(robot)
    finally:
        campaign.ros.destroy_node()
        campaign.context.try_shutdown()
    t = np.array(campaign.times) if campaign.times else np.zeros(1)
    campaign.figures['answer_ms'] = {'median': float(np.median(t) * 1e3),
                                     'max': float(t.max() * 1e3)}
    print(json.dumps({'counts': dict(sorted(campaign.tally.counts.items())),
                      'figures': campaign.figures}, indent=1, default=str)[:20000])
    out = ROOT / 'bench' / 'results' / 'fuzz_node.json'
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({'machine': machine(), 'args': vars(args),
                               'seconds': time.perf_counter() - t0,
                               'counts': campaign.tally.counts,
                               'examples': campaign.tally.examples,
                               'figures': campaign.figures}, indent=1, default=str))
    bad = campaign.tally.violations()
    print(f'{bad} violations in {time.perf_counter() - t0:.0f} s; logs in {campaign.workdir}')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
