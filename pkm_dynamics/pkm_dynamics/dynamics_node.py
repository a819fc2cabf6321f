"""The pkm_dynamics ROS 2 node: the core's dynamics as services and topics.

Robot description from the ``robot_description`` parameter or, when that is empty, from the
``robot_description`` topic (transient local, as robot_state_publisher publishes it): URDF XML
text, never a file path. A new description rebuilds the model; a bad one is reported and the
previous model keeps serving (a rejected one is never kept for a later configure). The model is
built in the default callback group (parameters, lifecycle, description topic) while the
services, in a group of their own, keep answering with the previous model; the new one then
replaces it for every thread at once, streaming warm starts included (they belong to the
model). Descriptions arriving during a build wait their turn.

Services (``pkm_dynamics_interfaces``): ``~/get_model_info``, ``~/forward_dynamics``,
``~/inverse_dynamics`` (one point or a trajectory), ``~/higher_order_inverse_dynamics``,
``~/inverse_kinematics``, ``~/forward_kinematics``. A run-time payload at the end effector /
platform (parameters ``payload.*``) rebuilds the model as a new description does. Topics: the
feedforward publisher (a reference in, the inverse dynamics of each reference out as it
arrives), joint-state completion (measured actuator positions in, every tree joint out) and
``/diagnostics`` at 1 Hz (``diagnostics``). Poses in requests are taken in the root link
frame only; fields of the other kind's space are refused.
Module chains work in actuator space, parallel manipulators (PKM) in task space, as the core
defines. Parameters, topics and message conventions are documented in the package README.

A managed (lifecycle) node: *configure* builds the model from the description, *activate*
serves it (services answer, feedforward and completed joint states are published);
*deactivate* stops serving, *cleanup* drops the model, *shutdown* ends the process. The
streaming publishers (lifecycle publishers) and subscriptions exist from configure to cleanup,
under fixed names (``TOPICS``) that users remap the ROS way. Configure fails without a
description. With ``autostart`` (default) the node configures and activates itself at start-up
(topic mode: when the description arrives); ``autostart: false`` leaves the transitions to a
lifecycle manager (``ros2 lifecycle set /pkm_dynamics configure``). ``~/get_model_info``
answers in every state.

This module holds no dynamics: it converts messages to arrays (``conversions``), calls the
core and converts the results back. Bad input never stops the node: services answer
``success = false`` with an error code and a message naming the problem, topics log a
throttled warning and publish nothing.
"""
import signal
import threading
import time
import xml.etree.ElementTree as ET

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Accel, Twist
import numpy as np
from pkm_dynamics_interfaces.msg import ErrorCodes
from pkm_dynamics_interfaces.srv import (ForwardDynamics, ForwardKinematics, GetModelInfo,
                                         HigherOrderInverseDynamics, InverseDynamics,
                                         InverseKinematics)
from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                ParameterType, SetParametersResult)
import rclpy
import rclpy.logging
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.exceptions import InvalidHandle, ParameterUninitializedException
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, LifecyclePublisher, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint, MultiDOFJointTrajectory

from pkm_dynamics.conversions import (TWIST_COMPONENTS, RequestError, check_frame, check_points,
                                      core_error, flagged_vector, floats, matrix_pose,
                                      name_index, ordered, pose_matrix, refuse_fields,
                                      set_fields, spatial_vector, stamped_pose_matrix,
                                      task_message, task_vector)
from pkm_dynamics.core.bounds import check_limits
from pkm_dynamics.core.description import parse_description
from pkm_dynamics.core.errors import DescriptionError
from pkm_dynamics.core.forward_state import forward_state
from pkm_dynamics.core.payload import Payload, description_with_payload
from pkm_dynamics.core.higher_order import higher_order_inverse_dynamics
from pkm_dynamics.core.robot import robot_from_description
from pkm_dynamics.diagnostics import Diagnostics

#: the feedforward output kinds (parameter ``feedforward.outputs``)
OUTPUT_KINDS = ('commands', 'joint_state', 'trajectory', 'motor')
STANDARD_GRAVITY = [0.0, 0.0, -9.80665]
#: request queue depth of every service (the ROS default, 10, drops a burst's further requests
#: silently while a long call is served)
SERVICE_QUEUE_DEPTH = 1000
#: the parameters of the run-time payload (one model rebuild however many change at once)
PAYLOAD_PARAMETERS = ('payload.mass', 'payload.com', 'payload.inertia')
#: the streaming topics by role, under fixed names resolved as the main node's (``~`` is
#: ``<namespace>/<name>``); remapped the ROS way (``--ros-args -r``, launch ``remappings=``)
TOPICS = {'reference': '~/reference', 'task_reference': '~/task_reference',
          'commands': '~/feedforward/commands', 'joint_state': '~/feedforward/joint_states',
          'trajectory': '~/feedforward/trajectory', 'motor': '~/feedforward/motor_commands',
          'completion_input': 'actuator_states', 'completion_output': 'joint_states'}


class Model:
    """One loaded robot: the core object and what GetModelInfo reports (immutable once built;
    callbacks take a reference, so a rebuild never changes a model under a running call).

    The warm starts of the streaming topics (``ff_solution``: the last feedforward IK solution
    of a PKM; ``completion_solution``: the last joint-state completion) belong to the model
    (only the streaming thread touches them), so a swap never hands one robot's solution to
    another: a new model starts cold.

    ``payload`` (:class:`~pkm_dynamics.core.payload.Payload`, default none) is added to the
    end-effector / platform body; ``text`` is kept to rebuild the model with another one.
    ``command_joints`` (parameter ``feedforward.joints``; default: the actuated joints) is the
    joint order of the ``commands`` output: every actuated joint once, else ValueError naming
    the unknown, repeated or missing joints (the robot is not served with that order)."""

    def __init__(self, text, gravity, ik, payload=None, command_joints=None):
        desc = parse_description(text, gravity, files=False)    # XML text only, never a path
        self.text = text
        self.payload = Payload() if payload is None else payload
        desc = description_with_payload(desc, self.payload)
        if desc.platform is None:
            self.robot = robot_from_description(desc)
            self.kind = 'module_chain'
            self.end_effector = self.robot.end_effector
            self.task_space = ()
        else:
            from pkm_dynamics.core.pkm import ParallelRobot
            self.robot = ParallelRobot(desc, ik_scheme=ik['scheme'], tol=ik['tolerance'],
                                       max_iter=ik['max_iterations'],
                                       singularity_threshold=ik['singularity_threshold'],
                                       loop_singularity_threshold=ik['loop_singularity_threshold'])
            self.kind = 'parallel'
            self.end_effector = desc.platform.link
            self.task_space = tuple(self.robot.task_space)
        self.description = desc
        self.name = desc.name
        self.root_link = desc.tree.root_link
        self.actuated = tuple(desc.actuated_joints)
        self.tree_joints = tuple(desc.tree.joint_names)
        self.series_elastic = tuple(a.joint for a in desc.actuators if a.series_elastic)
        joints = self.actuated if command_joints is None else list(command_joints)
        name_index(joints, self.actuated, 'parameter feedforward.joints')
        #: ``commands`` data = efforts (actuated order)[command_order]
        self.command_order = [self.actuated.index(joint) for joint in joints]
        self.num_bodies = len(ET.fromstring(desc.xml).findall('link')) if desc.xml else 0
        self.total_mass = desc.tree.total_mass
        self.gravity = floats(desc.tree.gravity)
        self.ff_solution = None
        self.completion_solution = None

    @property
    def parallel(self):
        return self.kind == 'parallel'

    def set_ik(self, ik):
        """Apply solver parameters to a PKM (the core reads them at every call)."""
        if self.parallel:
            self.robot.ik_scheme = ik['scheme']
            self.robot.tol = ik['tolerance']
            self.robot.max_iter = ik['max_iterations']
            self.robot.singularity_threshold = ik['singularity_threshold']
            self.robot.loop_singularity_threshold = ik['loop_singularity_threshold']


def _descriptor(description, kind, read_only=False, floating=None, integer=None,
                additional=None):
    d = ParameterDescriptor(type=kind, description=description, read_only=read_only)
    if floating is not None:
        d.floating_point_range = [FloatingPointRange(from_value=floating[0],
                                                     to_value=floating[1], step=0.0)]
    if integer is not None:
        d.integer_range = [IntegerRange(from_value=integer[0], to_value=integer[1], step=1)]
    if additional:
        d.additional_constraints = additional
    return d


S, D, I, B = (ParameterType.PARAMETER_STRING, ParameterType.PARAMETER_DOUBLE,
              ParameterType.PARAMETER_INTEGER, ParameterType.PARAMETER_BOOL)
SA, DA = ParameterType.PARAMETER_STRING_ARRAY, ParameterType.PARAMETER_DOUBLE_ARRAY

#: name: (default, descriptor); documented in the package README
PARAMETERS = {
    'robot_description': ('', _descriptor(
        'robot description (URDF spanning tree + pkm_dynamics extension) as XML text, not a '
        'file path; empty: read the robot_description topic. Setting it rebuilds the model '
        '(rejected if invalid).', S)),
    'gravity': (STANDARD_GRAVITY, _descriptor(
        'gravity in the root link frame [m/s^2], 3 values', DA, read_only=True)),
    'ik.tolerance': (1e-10, _descriptor(
        'PKM inverse kinematics accuracy goal (pose error and loop residual); at most 1e-7 '
        '(every solution is also checked to put the platform within 1e-6 of the pose), at least '
        '1e-13 (forward kinematics solves the IK 100 times finer, near machine precision)', D,
        floating=(1e-13, 1e-7))),
    'ik.max_iterations': (50, _descriptor(
        'PKM inverse kinematics iteration limit (outer iterations per limb); at most 200, so '
        'that a pose out of reach is refused within the documented answer time', I,
        integer=(1, 200))),
    'ik.scheme': ('nested', _descriptor(
        'PKM inverse kinematics scheme', S, additional='"nested" or "compound"')),
    'ik.singularity_threshold': (1e6, _descriptor(
        'largest admissible condition number of a limb IK Jacobian and of J_IK (larger: '
        'SINGULAR)', D, floating=(1.0, 1e16))),
    'ik.loop_singularity_threshold': (1e4, _descriptor(
        'largest admissible condition number of a loop constraint Jacobian G_y at an IK '
        'solution (larger: SINGULAR)', D, floating=(1.0, 1e16))),
    'feedforward.outputs': (['commands', 'joint_state'], _descriptor(
        'feedforward outputs to publish', SA, read_only=True,
        additional='any of ' + ', '.join(OUTPUT_KINDS))),
    'feedforward.joints': (Parameter.Type.STRING_ARRAY, _descriptor(
        'joint order of the commands output (the joints list of the forward_command_controller '
        'that consumes it): every actuated joint once; unset: the actuated joints in '
        'description order', SA, read_only=True)),
    'feedforward.qos_depth': (100, _descriptor(
        'queue depth of the reference subscription and feedforward publishers', I,
        read_only=True, integer=(1, 10000))),
    'completion.enabled': (True, _descriptor(
        'publish every tree joint from measured actuator positions', B, read_only=True)),
    'autostart': (True, _descriptor(
        'configure and activate at start-up (false: wait for lifecycle transitions)', B,
        read_only=True)),
    'payload.mass': (0.0, _descriptor(
        'run-time payload at the end effector (module chains) / platform (PKM) [kg]; 0 with '
        'zero inertia: none. Setting a payload.* parameter rebuilds the model', D,
        floating=(0.0, 1e6))),
    'payload.com': ([0.0, 0.0, 0.0], _descriptor(
        'payload centre of mass in the end-effector / platform link frame [m], 3 values', DA)),
    'payload.inertia': ([0.0] * 6, _descriptor(
        'payload inertia about its centre of mass, link axes: ixx ixy ixz iyy iyz izz '
        '[kg m^2] (positive semi-definite, triangle inequality)', DA)),
    'warning_period': (1.0, _descriptor(
        'minimum time between two warnings about bad topic input [s]', D, read_only=True,
        floating=(0.0, 3600.0))),
}


def _reliable(depth):
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)


class DynamicsNode(LifecycleNode):
    """Serves the dynamics of the robot given by ``robot_description`` (see module doc)."""

    def __init__(self, **kwargs):
        super().__init__('pkm_dynamics', **kwargs)
        self._state = 'unconfigured'
        self._description_text = ''     # the last valid description received on the topic
        for name, (default, descriptor) in PARAMETERS.items():
            self.declare_parameter(name, default, descriptor)
        self._check_static_parameters()
        try:
            self._command_joints = self._p('feedforward.joints')
        except ParameterUninitializedException:     # unset: the actuated joints' order
            self._command_joints = None
        self._ik = self._ik_parameters({})
        self._model = None
        self._model_error = ''
        self._description_note = ''
        self._pending = {}
        self._autostart = self._p('autostart')     # cleared by the first successful configure
        self._arrived = None        # the model of a description that autostart configures with
        self.finalized = Future()                   # done at shutdown (main() then returns)
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        text = self.get_parameter('robot_description').value
        self._model_error = 'the node is unconfigured: configure it to build the model'
        if not text.strip():
            self._description_sub = self.create_subscription(
                String, 'robot_description', self._on_description,
                QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                           reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL))
            self.get_logger().info(
                f'waiting for the robot description on {self._description_sub.topic_name}')

        # Three callback groups, run side by side by main's multi-threaded executor: the
        # dynamics services; ~/get_model_info (answered while a long dynamics call runs); the
        # default group of the parameter, lifecycle and robot_description callbacks (building a
        # new model never holds up the model serving).
        self._service_group = MutuallyExclusiveCallbackGroup()
        info_group = MutuallyExclusiveCallbackGroup()
        self._dynamics_services = [
            self.create_service(srv, f'~/{name}', handler, qos_profile=_reliable(
                SERVICE_QUEUE_DEPTH), callback_group=info_group if name == 'get_model_info'
                else self._service_group)
            for srv, name, handler in (
                (GetModelInfo, 'get_model_info', self._on_get_model_info),
                (ForwardDynamics, 'forward_dynamics', self._serve(self._forward_dynamics)),
                (InverseDynamics, 'inverse_dynamics', self._serve(self._inverse_dynamics)),
                (HigherOrderInverseDynamics, 'higher_order_inverse_dynamics',
                 self._serve(self._higher_order_inverse_dynamics)),
                (InverseKinematics, 'inverse_kinematics', self._serve(self._inverse_kinematics)),
                (ForwardKinematics, 'forward_kinematics', self._serve(self._forward_kinematics)),
            )]
        # /diagnostics at 1 Hz in every lifecycle state (it reports the state), from the
        # ~/get_model_info group: a model build or a long dynamics call does not hold it up
        self._diagnostics = Diagnostics()
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._diagnostics_timer = self.create_timer(1.0, self._publish_diagnostics,
                                                    callback_group=info_group)
        # The streaming topics (feedforward, joint-state completion) live on a lean companion
        # node spun by an executor of its own (see main): its wait set holds only them, not the
        # ~30 services and event handlers of this node, which keeps the per-reference overhead
        # low enough for a 1 kHz reference stream, and a long service call does not stall it.
        # Topic names are resolved here (namespace, ~, remappings), so they are this node's.
        # Its publishers and subscriptions exist from configure to cleanup (lifecycle
        # publishers: they publish only while the node is active).
        self.topic_node = rclpy.create_node(
            f'{self.get_name()}_topics', namespace=self.get_namespace(), context=self.context,
            use_global_arguments=False, start_parameter_services=False, enable_rosout=False)
        self._pub = {}
        self._streams = []

    # -- lifecycle ----------------------------------------------------------------------------
    def on_configure(self, state):
        """Build the model from the parameter or the last description from the topic."""
        text = self._p('robot_description')
        if text.strip():
            if not self._load(text, 'robot_description parameter'):
                return TransitionCallbackReturn.FAILURE
        elif self._arrived is not None:
            self._use(self._arrived, 'robot_description topic')
        elif self._description_text:
            if not self._load(self._description_text, 'robot_description topic'):
                return TransitionCallbackReturn.FAILURE
        elif self._autostart:       # topic mode: configured when the description arrives
            self._model_error = ('no robot description yet: waiting for the robot_description '
                                 f'topic ({self._description_sub.topic_name}); autostart '
                                 'configures and activates the node when one arrives')
            self.get_logger().info(self._model_error)
            return TransitionCallbackReturn.FAILURE
        else:
            self._model_error = (
                'configure failed: no robot description (the robot_description parameter is '
                f'empty and nothing has arrived on {self._description_sub.topic_name}): set the '
                'parameter or publish the description on the topic, then configure')
            self.get_logger().error(self._model_error)
            return TransitionCallbackReturn.FAILURE
        self._setup_feedforward()
        self._setup_completion()
        self._autostart = False
        self._state = 'inactive'
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state):
        result = super().on_activate(state)
        if result == TransitionCallbackReturn.SUCCESS:
            self._state = 'active'
        return result

    def on_deactivate(self, state):
        self._state = 'inactive'
        return super().on_deactivate(state)

    def on_cleanup(self, state):
        self._teardown_streaming()
        self._model = None
        self._model_error = 'the node is unconfigured: configure it to build the model'
        self._description_note = ''
        self._state = 'unconfigured'
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state):
        self._teardown_streaming()
        self._state = 'finalized'
        self.finalized.set_result(True)     # main() then ends the process
        return TransitionCallbackReturn.SUCCESS

    def _require_active(self):
        if self._state == 'finalized':
            raise RequestError(ErrorCodes.NOT_ACTIVE,
                               'the node is shut down (lifecycle state finalized): it serves '
                               'no more; restart it')
        if self._state == 'unconfigured' and 'no robot description' in self._model_error:
            raise RequestError(ErrorCodes.NOT_ACTIVE, f'the node is unconfigured: '
                               f'{self._model_error}')
        if self._state != 'active':
            raise RequestError(ErrorCodes.NOT_ACTIVE,
                               f'the node is {self._state}: configure and activate it '
                               f'(ros2 lifecycle set {self.get_fully_qualified_name()} '
                               f'{"configure" if self._state == "unconfigured" else "activate"})')

    # -- parameters -------------------------------------------------------------------------
    def _p(self, name):
        return self.get_parameter(name).value

    def _check_static_parameters(self):
        gravity = self._p('gravity')
        if len(gravity) != 3 or not np.all(np.isfinite(gravity)):
            raise ValueError(f'parameter gravity must hold 3 finite values, got {list(gravity)}')
        outputs = list(self._p('feedforward.outputs'))
        unknown = [o for o in outputs if o not in OUTPUT_KINDS]
        if unknown:
            raise ValueError(f'parameter feedforward.outputs: unknown kind(s) {unknown}; '
                             f'known: {", ".join(OUTPUT_KINDS)}')
        if self._p('ik.scheme') not in ('nested', 'compound'):
            raise ValueError(f'parameter ik.scheme = "{self._p("ik.scheme")}": expected '
                             f'"nested" or "compound"')
        try:
            self._payload({})
        except DescriptionError as exc:
            raise ValueError(f'parameters payload.*: {exc}') from None

    def _payload(self, changes):
        """The payload of the ``payload.*`` parameters, ``changes`` applied; DescriptionError
        naming the culprit if it is not a rigid body."""
        def value(name):
            return changes[name] if name in changes else self._p(name)
        return Payload.from_urdf_inertia(value('payload.mass'), list(value('payload.com')),
                                         list(value('payload.inertia')))

    def _ik_parameters(self, changes):
        def value(name):
            return changes[name] if name in changes else self._p(name)
        return {'scheme': value('ik.scheme'), 'tolerance': float(value('ik.tolerance')),
                'max_iterations': int(value('ik.max_iterations')),
                'singularity_threshold': float(value('ik.singularity_threshold')),
                'loop_singularity_threshold': float(value('ik.loop_singularity_threshold'))}

    def _validate_parameters(self, parameters):
        changes = {p.name: p.value for p in parameters}
        if changes.get('ik.scheme', 'nested') not in ('nested', 'compound'):
            return SetParametersResult(successful=False,
                                       reason='ik.scheme must be "nested" or "compound"')
        if 'robot_description' in changes:
            text = changes['robot_description']
            if not text.strip():
                return SetParametersResult(successful=False,
                                           reason='robot_description cannot be set empty')
            try:
                self._pending[text] = Model(text, self._p('gravity'),
                                            self._ik_parameters(changes),
                                            self._payload(changes), self._command_joints)
            except Exception as exc:  # the previous model keeps serving
                self.get_logger().error(f'new robot_description rejected: {exc}')
                return SetParametersResult(successful=False,
                                           reason=f'robot_description rejected: {exc}')
        elif any(name in changes for name in PAYLOAD_PARAMETERS):
            return self._validate_payload(changes)
        return SetParametersResult(successful=True)

    def _validate_payload(self, changes):
        """Check a new payload and build the model carrying it (kept until applied)."""
        try:
            payload = self._payload(changes)
            if self._model is not None:
                self._pending[PAYLOAD_PARAMETERS] = Model(
                    self._model.text, self._p('gravity'), self._ik_parameters(changes), payload,
                    self._command_joints)
        except Exception as exc:  # the previous model keeps serving
            self.get_logger().error(f'new payload rejected: {exc}')
            return SetParametersResult(successful=False, reason=f'payload rejected: {exc}')
        return SetParametersResult(successful=True)

    def _apply_parameters(self, parameters):
        changes = {p.name: p.value for p in parameters}
        self._ik = self._ik_parameters(changes)
        if 'robot_description' in changes:
            model = self._pending.pop(changes['robot_description'], None)
            self._pending.clear()
            if model is not None and self._state in ('inactive', 'active'):
                self._use(model, 'robot_description parameter')
        elif any(name in changes for name in PAYLOAD_PARAMETERS):
            model = self._pending.pop(PAYLOAD_PARAMETERS, None)
            self._pending.clear()
            if model is not None and self._state in ('inactive', 'active'):
                self._use(model, 'payload parameters')
        elif self._model is not None:
            self._model.set_ik(self._ik)

    # -- robot description --------------------------------------------------------------------
    def _build(self, text, source):
        """The model of ``text``, or None when it is rejected (logged and reported)."""
        try:
            return Model(text, self._p('gravity'), self._ik, self._payload({}),
                         self._command_joints)
        except Exception as exc:  # DescriptionError, or anything a broken text provokes
            message = f'robot description from the {source} rejected: {exc}'
            self.get_logger().error(message + (
                f'; still serving "{self._model.name}"' if self._model else ''))
            if self._model is None:
                self._model_error = message
            else:
                self._description_note = f'; the last description was rejected: {exc}'
            return None

    def _load(self, text, source):
        model = self._build(text, source)
        if model is not None:
            self._use(model, source)
        return model is not None

    def _use(self, model, source):
        self._model = model
        self._diagnostics.new_model()
        self._model_error = ''
        self._description_note = ''
        self.get_logger().info(
            f'loaded robot "{model.name}" ({model.kind}) from the {source}: actuated joints '
            f'{", ".join(model.actuated)}; {len(model.tree_joints)} tree joints; '
            f'{model.total_mass:.6g} kg')

    def _on_description(self, msg):
        """A description on the topic is checked by building its model, in every state; only a
        valid one is kept (for the next configure), so a rejected one never replaces the last
        valid one. A configured node serves the new model at once."""
        model = self._build(msg.data, 'robot_description topic')
        if model is None:
            return
        self._description_text = msg.data
        if self._state in ('inactive', 'active'):
            self._use(model, 'robot_description topic')
        elif self._state == 'unconfigured' and self._autostart:
            self._arrived = model       # configure serves it instead of building it again
            try:
                if self.trigger_configure() == TransitionCallbackReturn.SUCCESS:
                    self.trigger_activate()
            finally:
                self._arrived = None
        else:
            self._model_error = 'the node is unconfigured: configure it to build the model'
            self.get_logger().info(f'robot description of "{model.name}" received and checked; '
                                   'it is loaded at configure')

    # -- services -----------------------------------------------------------------------------
    def _on_get_model_info(self, request, response):
        model = self._model
        if model is None:
            response.success = False
            response.error_code.val = (ErrorCodes.INVALID_DESCRIPTION if 'rejected' in
                                       self._model_error else ErrorCodes.NO_MODEL)
            response.message = self._model_error
            return response
        response.success = True
        response.error_code.val = ErrorCodes.SUCCESS
        response.message = 'model loaded' + self._description_note + (
            '' if self._state == 'active' else f'; the node is {self._state}, not serving')
        response.robot_name = model.name
        response.kind = model.kind
        response.tree_joints = list(model.tree_joints)
        response.actuated_joints = list(model.actuated)
        response.series_elastic_joints = list(model.series_elastic)
        response.end_effector = model.end_effector or ''
        response.task_space = list(model.task_space)
        response.num_bodies = model.num_bodies
        response.total_mass = float(model.total_mass)
        response.gravity = model.gravity
        payload = model.payload
        response.payload_link = model.end_effector or ''
        response.payload_mass = payload.mass
        response.payload_com = floats(payload.com)
        response.payload_inertia = floats(payload.inertia[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]])
        return response

    def _serve(self, handler):
        """Service callback around ``handler(model, request, response)``: any failure becomes
        success = false, an error code and a message on a fresh response."""
        def callback(request, response):
            model = self._model
            try:
                self._require_active()
                if model is None:
                    raise RequestError(ErrorCodes.NO_MODEL, self._model_error)
                handler(model, request, response)
            except Exception as exc:
                code, message = core_error(exc)
                if code == ErrorCodes.FAILURE:
                    self.get_logger().error(f'{handler.__name__[1:]}: unexpected {message}')
                self._diagnostics.error(handler.__name__[1:], message)
                failed_point = getattr(exc, 'point', None)
                response = type(response)()
                response.success = False
                response.error_code.val = code
                response.message = message
                if hasattr(response, 'failed_point'):
                    response.failed_point = -1 if failed_point is None else failed_point
                return response
            response.success = True
            response.error_code.val = ErrorCodes.SUCCESS
            if not response.message:
                response.message = 'ok'
            return response
        return callback

    @staticmethod
    def _wrench(model, wrenches, what='wrench'):
        if not wrenches:
            return None
        return spatial_vector(wrenches[0], what)

    def _forward_dynamics(self, model, request, response):
        js = request.joint_state
        index = name_index(js.name, model.actuated, 'joint_state.name')
        count = len(js.name)
        f = ordered(js.effort, index, count, 'joint_state.effort', bound='effort')
        wrench = self._wrench(model, request.wrench)
        response.joint_names = list(model.actuated)
        if model.parallel:
            refuse_fields(set_fields(js, ('position', 'velocity'), 'joint_state.'),
                          f'robot "{model.name}" is a parallel manipulator: its state is pose '
                          f'and twist; joint_state carries only name and effort')
            pose = stamped_pose_matrix(request.pose, model.root_link)
            twist = task_vector(request.twist, model.task_space, 'twist', bound='rate 1')
            a = model.robot.forward_dynamics(pose, twist, f, wrench=wrench)
            response.platform_acceleration = task_message(floats(a, 'platform_acceleration'),
                                                          model.task_space, Accel)
        else:
            refuse_fields(set_fields(request, ('pose', 'twist')),
                          f'robot "{model.name}" is a module chain: its state is '
                          f'joint_state (position, velocity), not pose and twist')
            x = ordered(js.position, index, count, 'joint_state.position')
            xd = ordered(js.velocity, index, count, 'joint_state.velocity', optional=True,
                         bound='rate 1')
            response.acceleration = floats(model.robot.forward_dynamics(x, xd, f, f_ext=wrench),
                                           'acceleration')

    def _inverse_dynamics(self, model, request, response):
        if model.parallel:
            points = request.task_trajectory.points
            if request.trajectory.points:
                raise RequestError(ErrorCodes.INVALID_REQUEST,
                                   f'robot "{model.name}" is a parallel manipulator: give the '
                                   f'motion as task_trajectory (platform pose and twist), not '
                                   f'as trajectory')
        else:
            points = request.trajectory.points
            if request.task_trajectory.points:
                raise RequestError(ErrorCodes.INVALID_REQUEST,
                                   f'robot "{model.name}" is a module chain: give the motion '
                                   f'as trajectory (actuator space), not as task_trajectory')
        if not points:
            raise RequestError(ErrorCodes.INVALID_REQUEST, 'the trajectory has no points')
        check_points(len(points))
        wrenches = list(request.wrenches)
        if len(wrenches) not in (0, 1, len(points)):
            raise RequestError(ErrorCodes.INVALID_SIZE,
                               f'wrenches has {len(wrenches)} entries: give 0, 1 or one per '
                               f'point ({len(points)})')
        out = response.feedforward
        out.header = (request.task_trajectory if model.parallel else request.trajectory).header
        out.joint_names = list(model.actuated)
        if model.parallel:
            self._task_inverse_dynamics(model, request, points, wrenches, out)
        else:
            self._actuator_inverse_dynamics(model, request, points, wrenches, out)
        response.failed_point = -1
        response.message = f'{len(points)} point(s)'

    @staticmethod
    def _at_point(k, fn, *args):
        """fn(*args); an exception gets ``point = k`` and the point in its message."""
        try:
            return fn(*args)
        except Exception as exc:
            code, message = core_error(exc)
            error = RequestError(code, f'point {k}: {message}')
            error.point = k
            raise error from exc

    def _actuator_inverse_dynamics(self, model, request, points, wrenches, out):
        names = request.trajectory.joint_names
        index = name_index(names, model.actuated, 'trajectory.joint_names')
        n = len(names)
        robot = model.robot
        for k, p in enumerate(points):
            def one(p=p, k=k):
                x = ordered(p.positions, index, n, f'points[{k}].positions')
                xd = ordered(p.velocities, index, n, f'points[{k}].velocities', optional=True,
                             bound='rate 1')
                xdd = ordered(p.accelerations, index, n, f'points[{k}].accelerations',
                              optional=True, bound='rate 2')
                w = (spatial_vector(wrenches[min(k, len(wrenches) - 1)], f'wrenches[{k}]')
                     if wrenches else None)
                return x, xd, xdd, robot.inverse_dynamics(x, xd, xdd, f_ext=w)
            x, xd, xdd, f = self._at_point(k, one)
            out.points.append(JointTrajectoryPoint(
                positions=floats(x), velocities=floats(xd), accelerations=floats(xdd),
                effort=self._at_point(k, floats, f, 'effort'), time_from_start=p.time_from_start))

    def _task_inverse_dynamics(self, model, request, points, wrenches, out):
        check_frame(request.task_trajectory.header.frame_id, model.root_link,
                    'task_trajectory.header.frame_id')
        robot = model.robot
        previous = None
        for k, p in enumerate(points):
            def one(p=p, k=k, previous=previous):
                pose, twist, accel = self._task_point(model, p, f'points[{k}]')
                w = (spatial_vector(wrenches[min(k, len(wrenches) - 1)], f'wrenches[{k}]')
                     if wrenches else None)
                sol = robot.inverse_kinematics(pose, twist, accel, initial=previous)
                return sol, robot.inverse_dynamics(sol, twist, accel, wrench=w)
            sol, u = self._at_point(k, one)
            previous = sol
            out.points.append(JointTrajectoryPoint(
                positions=floats(sol.actuators), velocities=floats(sol.actuators_d),
                accelerations=floats(sol.actuators_dd),
                effort=self._at_point(k, floats, u, 'effort'),
                time_from_start=p.time_from_start))

    @staticmethod
    def _task_point(model, p, what):
        """(pose, V_t, dV_t) of a MultiDOFJointTrajectoryPoint (missing rates: zero)."""
        if len(p.transforms) != 1:
            raise RequestError(ErrorCodes.INVALID_SIZE,
                               f'{what}.transforms has {len(p.transforms)} entries: give one '
                               f'(the platform pose)')
        for field in ('velocities', 'accelerations'):
            if len(getattr(p, field)) > 1:
                raise RequestError(ErrorCodes.INVALID_SIZE,
                                   f'{what}.{field} has {len(getattr(p, field))} entries: give '
                                   f'0 or 1')
        pose = pose_matrix(p.transforms[0], f'{what}.transforms[0]')
        zero = np.zeros(len(model.task_space))
        twist = (task_vector(p.velocities[0], model.task_space, f'{what}.velocities[0]',
                             bound='rate 1') if p.velocities else zero)
        accel = (task_vector(p.accelerations[0], model.task_space, f'{what}.accelerations[0]',
                             bound='rate 2') if p.accelerations else zero)
        return pose, twist, accel

    def _higher_order_inverse_dynamics(self, model, request, response):
        if model.parallel:
            refuse_fields(set_fields(request, ('motion',)),
                          f'robot "{model.name}" is a parallel manipulator: give the motion as '
                          f'pose, twist, acceleration, jerk, snap (task space)')
            ts = model.task_space
            x = stamped_pose_matrix(request.pose, model.root_link)
            ders = [task_vector(getattr(request, f), ts, f, bound=f'rate {k}') for k, f in
                    enumerate(('twist', 'acceleration', 'jerk', 'snap'), start=1)]
        else:
            refuse_fields(set_fields(request, ('pose', 'twist', 'acceleration', 'jerk', 'snap')),
                          f'robot "{model.name}" is a module chain: give the motion as motion '
                          f'(actuator space)')
            m = request.motion
            index = name_index(m.name, model.actuated, 'motion.name')
            n = len(m.name)
            x = ordered(m.position, index, n, 'motion.position')
            ders = [ordered(getattr(m, f), index, n, f'motion.{f}', optional=True,
                            bound=f'rate {k}')
                    for k, f in enumerate(('velocity', 'acceleration', 'jerk', 'snap'), start=1)]
        result = higher_order_inverse_dynamics(model.robot, x, *ders)
        names = list(model.actuated)
        response.effort.name = names
        response.effort.effort = floats(result.u, 'effort.effort')
        response.effort.effort_rate = floats(result.du, 'effort.effort_rate')
        response.effort.effort_acceleration = floats(result.ddu, 'effort.effort_acceleration')
        motion = np.asarray(result.actuator_motion)
        am = response.actuator_motion
        am.name = names
        am.position, am.velocity, am.acceleration, am.jerk, am.snap = (
            floats(motion[k]) for k in range(5))
        response.series_elastic = result.motor_position is not None
        if response.series_elastic:
            mf = response.motor
            mf.name = names
            mf.position = floats(result.motor_position)
            mf.velocity = floats(result.motor_velocity)
            mf.acceleration = floats(result.motor_acceleration)
            mf.torque = floats(result.motor_torque, 'motor.torque')
        response.method = result.method

    def _inverse_kinematics(self, model, request, response):
        pose = stamped_pose_matrix(request.pose, model.root_link)
        # PKM: the platform twist's task components; module chain: the whole end-effector twist
        ts = model.task_space if model.parallel else None
        twist = flagged_vector(request.has_twist, request.twist, ts, 'twist', 'rate 1')
        accel = flagged_vector(request.has_acceleration, request.acceleration, ts,
                               'acceleration', 'rate 2')
        if accel is not None and twist is None:
            raise RequestError(ErrorCodes.INVALID_REQUEST,
                               'an acceleration needs a twist (has_acceleration without '
                               'has_twist)')
        initial = None
        seed = request.seed
        if seed.name:
            name_index(seed.name, list(seed.name), 'seed.name')      # names given twice
            unknown = [n for n in seed.name if n not in model.tree_joints]
            if unknown:
                raise RequestError(ErrorCodes.UNKNOWN_JOINT,
                                   f'seed.name: unknown joint(s) {unknown}; tree joints: '
                                   f'{list(model.tree_joints)}')
            values = ordered(seed.position, list(range(len(seed.name))), len(seed.name),
                             'seed.position')
            initial = np.zeros(len(model.tree_joints))
            for name, v in zip(seed.name, values):
                initial[model.tree_joints.index(name)] = v
            if not model.parallel:  # a module chain starts from its actuator values
                missing = [n for n in model.actuated if n not in seed.name]
                if missing:
                    raise RequestError(ErrorCodes.INVALID_REQUEST,
                                       f'seed: a module chain is seeded by its actuated joints; '
                                       f'missing {missing}')
                initial = initial[[model.tree_joints.index(n) for n in model.actuated]]
        sol = model.robot.inverse_kinematics(pose, twist, accel, initial=initial)
        self._diagnostics.condition(np.max(sol.condition))
        response.actuator_state.name = list(model.actuated)
        response.actuator_state.position = floats(sol.actuators)
        response.joint_state.name = list(model.tree_joints)
        response.joint_state.position = floats(sol.q)
        if sol.qd is not None:
            response.actuator_state.velocity = floats(sol.actuators_d)
            response.joint_state.velocity = floats(sol.qd)
        if sol.qdd is not None:
            response.actuator_acceleration = floats(sol.actuators_dd)
            response.joint_acceleration = floats(sol.qdd)
        if model.parallel:
            response.limb_names = [limb.name for limb in model.robot.limbs]
            response.iterations = [int(i) for i in sol.iterations]
            response.condition = floats(sol.condition)
        else:                       # the whole chain is one serial limb
            response.limb_names = [model.name]
            response.iterations = [int(sol.iterations)]
            response.condition = [float(sol.condition)]
            if len(sol.solutions) > 1:
                response.message = (
                    f'{len(sol.solutions)} solutions within the strokes; returned the one nearest '
                    f'{"the seed" if initial is not None else "mid-stroke"}; the others '
                    f'({list(model.actuated)}): {[floats(s) for s in sol.solutions[1:]]}')
        response.residual = float(sol.residual)

    def _forward_kinematics(self, model, request, response):
        js = request.actuator_state
        index = name_index(js.name, model.actuated, 'actuator_state.name')
        count = len(js.name)
        x = ordered(js.position, index, count, 'actuator_state.position')
        xd = (ordered(js.velocity, index, count, 'actuator_state.velocity') if len(js.velocity)
              else None)
        state = forward_state(model.robot, x, xd)
        outputs = [state.pose, state.q] + [a for a in (state.twist, state.qd, state.mass_matrix)
                                           if a is not None]
        if not all(np.isfinite(a).all() for a in outputs):
            raise RequestError(ErrorCodes.SINGULAR, 'forward kinematics gave a non-finite '
                               f'result for actuator positions {floats(x)}')
        header = response.pose.header
        header.stamp = js.header.stamp
        if header.stamp.sec == 0 and header.stamp.nanosec == 0:
            header.stamp = self.get_clock().now().to_msg()
        header.frame_id = model.root_link
        response.pose.pose = matrix_pose(state.pose)
        response.has_twist = state.twist is not None
        if response.has_twist:
            components = model.task_space if model.parallel else TWIST_COMPONENTS
            response.twist = task_message(state.twist, components, Twist)
        response.joint_state.header = header
        response.joint_state.name = list(model.tree_joints)
        response.joint_state.position = floats(state.q)
        if state.qd is not None:
            response.joint_state.velocity = floats(state.qd)
        if model.parallel:
            response.task_space = list(model.task_space)
            response.mass_matrix = floats(state.mass_matrix)

    def _publish_diagnostics(self):
        self._diagnostics_pub.publish(self._diagnostics.array(
            self.get_clock().now().to_msg(), f'{self.get_name()}: dynamics', self._model,
            self._state, self._model_error, self._ik['singularity_threshold']))

    # -- feedforward --------------------------------------------------------------------------
    def _setup_feedforward(self):
        """The reference subscriptions and feedforward publishers (at configure)."""
        depth = self._p('feedforward.qos_depth')
        qos = _reliable(depth)
        self._outputs = set(self._p('feedforward.outputs'))
        for kind, msg_type in (('commands', Float64MultiArray), ('joint_state', JointState),
                               ('trajectory', JointTrajectory), ('motor', JointState)):
            if kind in self._outputs:
                self._pub[kind] = self._lifecycle_publisher(msg_type, kind, qos)
        self._reference_sub = self._stream(JointTrajectory, 'reference', qos, 'reference',
                                           self._feedforward, counted=True)
        self._task_reference_sub = self._stream(MultiDOFJointTrajectory, 'task_reference',
                                                qos, 'task reference', self._task_feedforward,
                                                counted=True)

    def _topic(self, role):
        """The topic of ``role`` (:data:`TOPICS`), resolved as a topic of this node: its
        namespace and name, and the remapping rules of the command line and launch file
        (the companion node takes no global arguments: its names are resolved here)."""
        return self.resolve_topic_name(TOPICS[role])

    def _lifecycle_publisher(self, msg_type, role, qos):
        """A publisher of the companion node managed by this node's lifecycle (it publishes
        while the node is active), as ``create_lifecycle_publisher`` makes on the node itself."""
        publisher = self.topic_node.create_publisher(msg_type, self._topic(role), qos,
                                                     publisher_class=LifecyclePublisher)
        self.add_managed_entity(publisher)
        return publisher

    def _teardown_streaming(self):
        """Destroy the streaming publishers and subscriptions (at cleanup and shutdown)."""
        for publisher in self._pub.values():
            self._managed_entities.discard(publisher)
            self.topic_node.destroy_publisher(publisher)
        for subscription in self._streams:
            self.topic_node.destroy_subscription(subscription)
        self._pub = {}
        self._streams = []

    def _warn(self, what, exc):
        code, message = core_error(exc)
        self.get_logger().warning(f'{what} ignored: {message}',
                                  throttle_duration_sec=self._p('warning_period'))
        return message

    def _stream(self, msg_type, role, qos, what, handle, counted=False):
        """Subscribe a streaming topic (on the companion node): each message delivered, and
        those already waiting behind it (:func:`queued`), goes to ``handle(model, msg)`` while
        the node is active; a message ``handle`` rejects (an exception) gets a throttled
        warning naming the problem and no output, and the next one is handled as usual.
        ``counted``: answers, refusals and costs go to the diagnostics (the references)."""
        diagnostics = self._diagnostics

        def callback(msg):
            for m in queued(subscription, msg):
                model = self._model
                if self._state != 'active':
                    continue                    # not serving: taken and dropped
                start = time.perf_counter()
                try:
                    if model is None:
                        raise RequestError(ErrorCodes.NO_MODEL, self._model_error)
                    handle(model, m)
                except Exception as exc:
                    message = self._warn(what, exc)
                    if counted:
                        diagnostics.refusal(what, message)
                else:
                    if counted:
                        diagnostics.reference(start)

        subscription = self.topic_node.create_subscription(
            msg_type, self._topic(role), callback, qos)
        self._streams.append(subscription)
        return subscription

    def _reference_points(self, model, msg, task_space):
        """The points of a reference to answer (all of them with the trajectory output, else
        the first), once the reference is checked to fit the robot's kind and to have points."""
        if model.parallel != task_space:
            kind, form, sub = (('a module chain', 'JointTrajectory', self._reference_sub)
                               if task_space else
                               ('a parallel manipulator', 'MultiDOFJointTrajectory',
                                self._task_reference_sub))
            raise RequestError(ErrorCodes.INVALID_REQUEST,
                               f'robot "{model.name}" is {kind}: send the reference as {form} '
                               f'on {sub.topic_name}')
        if not msg.points:
            raise RequestError(ErrorCodes.INVALID_REQUEST, 'the reference has no points')
        check_points(len(msg.points))
        return msg.points if 'trajectory' in self._outputs else msg.points[:1]

    def _feedforward(self, model, msg):
        """Feedforward of one actuator-space reference (JointTrajectory)."""
        points = self._reference_points(model, msg, task_space=False)
        index = name_index(msg.joint_names, model.actuated, 'joint_names')
        n = len(msg.joint_names)
        states = []
        for k, p in enumerate(points):
            x = ordered(p.positions, index, n, f'points[{k}].positions')
            xd = ordered(p.velocities, index, n, f'points[{k}].velocities', optional=True,
                         bound='rate 1')
            xdd = ordered(p.accelerations, index, n, f'points[{k}].accelerations',
                          optional=True, bound='rate 2')
            states.append((x, xd, xdd, model.robot.inverse_dynamics(x, xd, xdd)))
        motor = self._motor(model, *states[0][:3]) if 'motor' in self._pub else None
        self._publish(model, msg, states, motor)

    def _task_feedforward(self, model, msg):
        """Feedforward of one task-space reference (MultiDOFJointTrajectory, PKMs)."""
        points = self._reference_points(model, msg, task_space=True)
        check_frame(msg.header.frame_id, model.root_link, 'header.frame_id')
        robot = model.robot
        previous = model.ff_solution
        states = []
        for k, p in enumerate(points):
            pose, twist, accel = self._task_point(model, p, f'points[{k}]')
            sol = robot.inverse_kinematics(pose, twist, accel, initial=previous)
            self._diagnostics.condition(np.max(sol.condition))
            u = robot.inverse_dynamics(sol, twist, accel)
            previous = sol
            states.append((sol.actuators, sol.actuators_d, sol.actuators_dd, u))
            if k == 0:
                first = (pose, twist, accel, sol)
        motor = None
        if 'motor' in self._pub and model.series_elastic:
            pose, twist, accel, sol = first
            zero = np.zeros_like(twist)
            motor = higher_order_inverse_dynamics(robot, pose, twist, accel, zero, zero,
                                                  q_guess=sol.q)
        model.ff_solution = previous
        self._publish(model, msg, states, motor)

    @staticmethod
    def _motor(model, x, xd, xdd):
        """Series-elastic motor feedforward of a reference point (jerk and snap are not in
        trajectory_msgs: taken as zero)."""
        if not model.series_elastic:
            return None
        zero = np.zeros_like(x)
        return higher_order_inverse_dynamics(model.robot, x, xd, xdd, zero, zero)

    def _publish(self, model, msg, states, motor):
        for k, state in enumerate(states):      # all or nothing: no output with NaN or Inf
            floats(state[3], f'the effort of points[{k}]')
        if motor is not None:
            for field in ('motor_position', 'motor_velocity', 'motor_torque'):
                floats(getattr(motor, field), field)
        names = list(model.actuated)
        x, xd, _, f = states[0]
        stamp = msg.header.stamp
        if stamp.sec == 0 and stamp.nanosec == 0:
            stamp = self.get_clock().now().to_msg()
        pub = self._pub
        if 'commands' in pub:
            pub['commands'].publish(Float64MultiArray(data=floats(f[model.command_order])))
        if 'joint_state' in pub:
            js = JointState(name=names, position=floats(x), velocity=floats(xd),
                            effort=floats(f))
            js.header.stamp = stamp
            js.header.frame_id = msg.header.frame_id
            pub['joint_state'].publish(js)
        if 'trajectory' in pub:
            out = JointTrajectory(joint_names=names)
            out.header = msg.header
            for (x, xd, xdd, f), p in zip(states, msg.points):
                out.points.append(JointTrajectoryPoint(
                    positions=floats(x), velocities=floats(xd), accelerations=floats(xdd),
                    effort=floats(f), time_from_start=p.time_from_start))
            pub['trajectory'].publish(out)
        if 'motor' in pub and motor is not None:
            js = JointState(name=names, position=floats(motor.motor_position),
                            velocity=floats(motor.motor_velocity),
                            effort=floats(motor.motor_torque))
            js.header.stamp = stamp
            pub['motor'].publish(js)

    # -- joint-state completion ---------------------------------------------------------------
    def _setup_completion(self):
        if not self._p('completion.enabled'):
            return
        qos = _reliable(10)
        self._completion_pub = self._pub['completion'] = self._lifecycle_publisher(
            JointState, 'completion_output', qos)
        self._completion_sub = self._stream(JointState, 'completion_input', qos,
                                            'actuator state', self._complete)

    def _complete(self, model, msg):
        """Every tree joint of one measured actuator state (JointState)."""
        index = name_index(msg.name, model.actuated, 'name', allow_extra=True)
        n = len(msg.name)
        x = ordered(msg.position, index, n, 'position')
        velocity = None
        if model.parallel:          # beyond a stroke: no platform pose to complete
            tree = model.description.tree
            check_limits(tree, [tree.joint_index(j) for j in model.actuated], x, 'position')
            _, sol = model.robot.forward_kinematics(
                x, initial=model.completion_solution, return_solution=True)
            q = sol.q
            model.completion_solution = sol
        else:
            xd = (ordered(msg.velocity, index, n, 'velocity', bound='rate 1') if len(msg.velocity)
                  else None)
            q, qd, _ = model.robot.tree_state(x, xd)
            velocity = qd if xd is not None else None
        out = JointState(name=list(model.tree_joints), position=floats(q))
        if velocity is not None:
            out.velocity = floats(velocity)
        out.header = msg.header
        self._completion_pub.publish(out)


def queued(subscription, first):
    """``first`` (the message the executor delivered), then the further messages already
    waiting in ``subscription``'s queue, oldest first: at most one queue depth in all, so that
    a stream faster than the node cannot hold the executor in one callback forever.

    A stream that arrives faster than one executor cycle per message (a 1 kHz reference) is
    then handled in one callback, each message still getting its own output: the executor's
    wait-and-dispatch cost (a large share of the per-message time in rclpy) is paid once per
    burst instead of once per message, so the node catches up after a stall instead of
    dropping the oldest references. Takes with the subscription's own handle, as the executor
    does."""
    yield first
    handle = subscription.handle
    for _ in range(subscription.qos_profile.depth - 1):
        try:
            with handle:
                taken = handle.take_message(subscription.msg_type, subscription.raw)
        except InvalidHandle:           # destroyed meanwhile (shutting down), as the executor
            return
        if taken is None:
            return
        yield taken[0]


#: [s] how often the main thread looks for a signal while the executors spin
SIGNAL_CHECK_PERIOD = 0.2


def _spin_until_signal(executors, signalled, finished=lambda: False):
    """Spin each of ``executors`` (a dict: thread name -> executor) in a thread of its own
    until ``signalled`` (the list of signals received, see :func:`main`) is not empty, until
    ``finished()`` (e.g. the lifecycle shutdown transition happened) or until one of them
    stops by itself (its exception is raised here once every thread is
    joined); then stop the others and join every thread, so that no thread is inside rcl any
    more when the caller destroys the nodes and shuts the context down.

    rclpy's own signal handler is not used: it shuts the context down from a thread of its own
    the moment the signal arrives, while these threads are still waiting, taking or publishing
    in rcl on that context (tracebacks, and now and then a segfault at exit). The main thread
    looks for a signal every ``SIGNAL_CHECK_PERIOD``: one the kernel delivers to another
    thread does not interrupt the main thread's wait. A guard condition on each executor's
    nodes (in a callback group of its own, so never blocked by a callback under way) wakes the
    executor to see ``stopping``."""
    stopping = threading.Event()
    failures = []
    wakers = [node.create_guard_condition(lambda: None, MutuallyExclusiveCallbackGroup())
              for executor in executors.values() for node in executor.get_nodes()]

    def spin(executor):
        try:
            while not stopping.is_set():
                executor.spin_once()
        except Exception as exc:
            failures.append(exc)
        finally:
            stopping.set()

    threads = [threading.Thread(target=spin, args=(executor,), name=name)
               for name, executor in executors.items()]
    try:
        for thread in threads:
            thread.start()
        while not signalled and not finished() and not stopping.is_set():
            stopping.wait(SIGNAL_CHECK_PERIOD)
    finally:
        stopping.set()
        for waker in wakers:
            waker.trigger()
        for thread in threads:
            if thread.ident is not None:   # started
                thread.join()
        for executor in executors.values():
            executor.shutdown()         # the multi-threaded one waits for its workers
    if failures:
        raise failures[0]


def main(args=None):
    # SIGINT (Ctrl-C) and SIGTERM (ros2 launch, systemd) are only noted, never raised as an
    # exception that could leave a lock held anywhere: the node stops once it spins (see
    # _spin_until_signal), so a signal during start-up stops it right after.
    signalled = []
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda number, frame: signalled.append(number))
    with rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO):
        try:
            node = DynamicsNode()
        except ValueError as exc:          # an invalid parameter value: refuse to start
            rclpy.logging.get_logger('pkm_dynamics').fatal(str(exc))
            return 1
        if node.get_parameter('autostart').value:
            if node.trigger_configure() == TransitionCallbackReturn.SUCCESS:
                node.trigger_activate()
        topics = SingleThreadedExecutor()
        topics.add_node(node.topic_node)
        # dynamics services | get_model_info | parameters, lifecycle, descriptions
        executor = MultiThreadedExecutor(num_threads=3)
        executor.add_node(node)
        _spin_until_signal({'pkm_dynamics_topics': topics,
                            'pkm_dynamics_services': executor}, signalled,
                           finished=node.finalized.done)    # lifecycle shutdown ends it too
        node.topic_node.destroy_node()     # every thread joined: no rcl call under way
        node.destroy_node()
    return 0


if __name__ == '__main__':
    main()
