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
``~/inverse_kinematics``, ``~/forward_kinematics``, ``~/joint_reactions``, ``~/estimate_payload`` (a
window of measured motion and efforts in, or the last seconds of the measured actuator states
the node keeps, the payload estimate out, applied on request). A
run-time payload at the end effector / platform (parameters ``payload.*``) rebuilds the model as
a new description does. Topics: the
feedforward publisher (a reference in, the inverse dynamics of each reference out as it
arrives), joint-state completion (measured actuator positions in, every tree joint out) and
``/diagnostics`` at 1 Hz (``diagnostics``); the gravity topics ``~/base_imu`` and
``~/gravity`` (``gravity_input``) update the gravity at run time. Poses in requests are taken in the root link
frame only; fields of the other kind's space are refused.
Module chains work in actuator space, parallel manipulators (PKM) in task space, as the core
defines. Parameters, topics and message conventions are documented in the pages (doc/).

A managed (lifecycle) node: *configure* builds the model from the description, *activate*
serves it (services answer, feedforward and completed joint states are published);
*deactivate* stops serving, *cleanup* drops the model, *shutdown* ends the process. The
streaming publishers (lifecycle publishers) and subscriptions exist from configure to cleanup,
under fixed names (``TOPICS``) that users remap the ROS way. Configure fails without a
description. With ``autostart`` (default) the node configures and activates itself at start-up
(topic mode: when the description arrives); ``autostart: false`` leaves the transitions to a
lifecycle manager (``ros2 lifecycle set /pkm_dynamics configure``). ``~/get_model_info``
answers in every state.

The node holds no dynamics: it converts messages to arrays (``conversions``), calls the core and
converts the results back. Bad input never stops the node: services answer ``success = false``
with an error code and a message naming the problem, topics log a throttled warning and publish
nothing. By concern: this module (the node class: lifecycle, robot description, ``main``),
``model`` (one loaded robot), ``node_parameters`` (declarations, validation, run-time changes),
``services`` (the service handlers), ``payload_service`` (``~/estimate_payload``), ``streaming``
(feedforward and joint-state completion topics; ``feedforward_outputs``: their reused messages;
``cdr_messages``: references and outputs as bytes), ``lean_executor`` (the executors of the node
and of those topics), ``state_messages`` (the state's message fields in each state space),
``spinning`` (executor threads and signals).
"""
import gc
import logging
import signal

from diagnostic_msgs.msg import DiagnosticArray
from pkm_dynamics_interfaces.msg import ErrorCodes
from pkm_dynamics_interfaces.srv import (EstimatePayload, ForwardDynamics, ForwardKinematics, GetModelInfo,
                                         HigherOrderInverseDynamics, InverseDynamics,
                                         InverseKinematics, JointReactions)
import rclpy
import rclpy.logging
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.exceptions import ParameterException, ParameterUninitializedException
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future
from std_msgs.msg import String

from pkm_dynamics.node.messages.conversions import RequestError
from pkm_dynamics.node.diagnostics import Diagnostics
from pkm_dynamics.node.gravity_input import GravityInput
from pkm_dynamics.node.model import Model
from pkm_dynamics.node.node_parameters import PARAMETERS, ParameterHandling
from pkm_dynamics.node.payload_service import PayloadEstimation
from pkm_dynamics.node.services import SERVICE_QUEUE_DEPTH, Services
from pkm_dynamics.node.runtime.spinning import spin_until_signal
from pkm_dynamics.node.runtime.lean_executor import KINDS, LeanExecutor
from pkm_dynamics.node.streaming.streaming import Streaming, reliable


class DynamicsNode(ParameterHandling, Services, PayloadEstimation, Streaming, GravityInput, LifecycleNode):
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
        self._options = self._solver_options({})
        self._model = None
        self._diagnostics = Diagnostics()
        self._setup_gravity()       # the gravity topics (gravity_input): in every state
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

        # Three callback groups, run side by side by main's executors (a thread each): the
        # dynamics services; ~/get_model_info (answered while a long dynamics call runs); the
        # default group of the parameter, lifecycle and robot_description callbacks (building a
        # new model never holds up the model serving).
        self.service_group = MutuallyExclusiveCallbackGroup()
        self.info_group = info_group = MutuallyExclusiveCallbackGroup()
        self._dynamics_services = [
            self.create_service(srv, f'~/{name}', handler, qos_profile=reliable(
                SERVICE_QUEUE_DEPTH), callback_group=info_group if name == 'get_model_info'
                else self.service_group)
            for srv, name, handler in (
                (GetModelInfo, 'get_model_info', self._on_get_model_info),
                (ForwardDynamics, 'forward_dynamics', self._serve(self._forward_dynamics)),
                (InverseDynamics, 'inverse_dynamics', self._serve(self._inverse_dynamics)),
                (HigherOrderInverseDynamics, 'higher_order_inverse_dynamics',
                 self._serve(self._higher_order_inverse_dynamics)),
                (InverseKinematics, 'inverse_kinematics', self._serve(self._inverse_kinematics)),
                (ForwardKinematics, 'forward_kinematics', self._serve(self._forward_kinematics)),
                (JointReactions, 'joint_reactions', self._serve(self._joint_reactions)),
                (EstimatePayload, 'estimate_payload', self._serve(self._estimate_payload)),
            )]
        # /diagnostics at 1 Hz in every lifecycle state (it reports the state), from the
        # ~/get_model_info group: a model build or a long dynamics call does not hold it up
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._diagnostics_timer = self.create_timer(1.0, self._publish_diagnostics,
                                                    callback_group=info_group)
        # The streaming topics (feedforward, joint-state completion) live on a lean companion
        # node spun by an executor of its own (see main; lean_executor): its wait set holds
        # only them, not the ~30 services and event handlers of this node, which keeps the
        # per-reference overhead low enough for a 1 kHz reference stream, and a long service
        # call does not stall it.
        # Topic names are resolved here (namespace, ~, remappings), so they are this node's.
        # Its publishers and subscriptions exist from configure to cleanup (lifecycle
        # publishers: they publish only while the node is active).
        self.topic_node = rclpy.create_node(
            f'{self.get_name()}_topics', namespace=self.get_namespace(), context=self.context,
            use_global_arguments=False, start_parameter_services=False, enable_rosout=False)
        self._pub = {}
        self._streams = []
        self._state_buffer = None     # the measured states for ~/estimate_payload (payload_service)
        self._stream_ready = None       # the model build the streaming thread is prepared for
        self._refusal_warning = None    # when a stream's refusal was last warned of (monotonic s)

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

    # -- robot description --------------------------------------------------------------------
    def _build(self, text, source):
        """The model of ``text``, or None when it is rejected (logged and reported)."""
        try:
            return Model(text, self._gravity, self._options, self._payload({}),
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
        """Serve ``model``: the notes of earlier descriptions cleared, the model switched, the
        heap collected and frozen last (a collection takes tens of milliseconds, and the
        services answer from other threads meanwhile)."""
        self._model_error = ''
        self._description_note = ''
        self._model = model
        executor = self.topic_node.executor     # prepares its thread for the model (main)
        if executor is not None:
            executor.wake()
        self._diagnostics.new_model()
        self.get_logger().info(
            f'loaded robot "{model.name}" ({model.kind}) from the {source}: actuated joints '
            f'{", ".join(model.actuated)}; {len(model.tree_joints)} tree joints; '
            f'{model.total_mass:.6g} kg')
        freeze_heap()

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

    def _publish_diagnostics(self):
        self._diagnostics_pub.publish(self._diagnostics.array(
            self.get_clock().now().to_msg(), f'{self.get_name()}: dynamics', self._model,
            self._state, self._model_error, self._options.singularity_threshold))


def freeze_heap():
    """Free the garbage cycles once, then exempt every object alive from later collections
    (``gc.freeze``): the ~160 000 objects of the libraries and the model are then no longer
    traversed by the collector's full collections, which otherwise stop every thread for
    ~60 ms (sixty references of a 1 kHz stream) now and then; frozen, ~0.1 ms. Called with
    each model put in use; the previous freeze is undone first, so that a replaced model's
    cycles are still freed."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


class CoreLogToRos(logging.Handler):
    """The lines of the ROS-free core's ``pkm_dynamics.core`` logger (kernels compiled at a
    model build, :func:`~pkm_dynamics.core.robot_warmup.load_kernels`) on the node's ROS
    ``logger``, at their level."""

    def __init__(self, logger):
        super().__init__(logging.INFO)
        self.ros_logger = logger

    def emit(self, record):
        if record.levelno >= logging.ERROR:
            self.ros_logger.error(self.format(record))
        elif record.levelno >= logging.WARNING:
            self.ros_logger.warning(self.format(record))
        else:
            self.ros_logger.info(self.format(record))


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
        except (ValueError, ParameterException) as exc:   # an invalid parameter value (ours,
            # or rclpy's: out of a descriptor's range, of the wrong type): refuse to start
            rclpy.logging.get_logger('pkm_dynamics').fatal(str(exc))
            return 1
        core_log = logging.getLogger('pkm_dynamics.core')
        core_log.setLevel(logging.INFO)
        core_log.addHandler(CoreLogToRos(node.get_logger()))
        if node.get_parameter('autostart').value:
            if node.trigger_configure() == TransitionCallbackReturn.SUCCESS:
                node.trigger_activate()
        # a thread and an executor each: the streaming subscriptions | the streaming topics'
        # event handlers | the dynamics services | get_model_info and diagnostics | parameters,
        # lifecycle, descriptions (the executor of the rest of each node wakes the others)
        topics = LeanExecutor(node.context, kinds=['subscriptions'],
                          prepare=node.prepare_stream)
        rest = LeanExecutor(node.context, exclude=[node.service_group, node.info_group])
        executors = {
            'pkm_dynamics_topics': topics,
            'pkm_dynamics_topic_events': LeanExecutor(
                node.context, kinds=[k for k in KINDS if k != 'subscriptions'], woken_by=topics),
            'pkm_dynamics_services': LeanExecutor(node.context, groups=[node.service_group],
                                                  woken_by=rest),
            'pkm_dynamics_info': LeanExecutor(node.context, groups=[node.info_group],
                                              woken_by=rest),
            'pkm_dynamics_node': rest}
        for name in ('pkm_dynamics_topics', 'pkm_dynamics_topic_events'):
            executors[name].add_node(node.topic_node)
        for name in ('pkm_dynamics_services', 'pkm_dynamics_info', 'pkm_dynamics_node'):
            executors[name].add_node(node)
        spin_until_signal(executors, signalled,
                          finished=node.finalized.done)    # lifecycle shutdown ends it too
        node.topic_node.destroy_node()     # every thread joined: no rcl call under way
        node.destroy_node()
    return 0


if __name__ == '__main__':
    main()
