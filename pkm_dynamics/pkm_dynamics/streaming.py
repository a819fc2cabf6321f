"""The node's streaming topics: the feedforward (a reference in, the inverse dynamics of each
reference out on every configured output, as it arrives) and joint-state completion (measured
actuator positions in, every tree joint out). They live on the companion node
``<name>_topics`` (spun by an executor of its own), exist from configure to cleanup and
publish while the node is active; a bad message gets a throttled warning and no output.

:class:`Streaming` is a part of :class:`~pkm_dynamics.dynamics_node.DynamicsNode` (a mixin: it
uses the node's model, lifecycle state, parameters, diagnostics and companion node)."""
import time

import numpy as np
from pkm_dynamics_interfaces.msg import ErrorCodes
from rclpy.exceptions import InvalidHandle
from rclpy.lifecycle import LifecyclePublisher
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint, MultiDOFJointTrajectory

from pkm_dynamics.conversions import (RequestError, check_points, core_error, floats,
                                      name_index, ordered)
from pkm_dynamics.core.bounds import check_limits
from pkm_dynamics.core.forward_state import forward_state

#: the streaming topics by role, under fixed names resolved as the main node's (``~`` is
#: ``<namespace>/<name>``); remapped the ROS way (``--ros-args -r``, launch ``remappings=``)
TOPICS = {'reference': '~/reference', 'task_reference': '~/task_reference',
          'commands': '~/feedforward/commands', 'joint_state': '~/feedforward/joint_states',
          'trajectory': '~/feedforward/trajectory', 'motor': '~/feedforward/motor_commands',
          'completion_input': 'actuator_states', 'completion_output': 'joint_states'}


def reliable(depth):
    """Reliable, volatile, keep-last ``depth``: the QoS of services and streaming topics."""
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)


class Streaming:
    """The feedforward and joint-state completion topics (part of the node class)."""

    def _setup_feedforward(self):
        """The reference subscriptions and feedforward publishers (at configure)."""
        depth = self._p('feedforward.qos_depth')
        qos = reliable(depth)
        self._outputs = set(self._p('feedforward.outputs'))
        for kind, msg_type in (('commands', Float64MultiArray), ('joint_state', JointState),
                               ('trajectory', JointTrajectory), ('motor', JointState)):
            if kind in self._outputs:
                self._pub[kind] = self._lifecycle_publisher(msg_type, kind, qos)
        # one reference topic per state space; a robot answers the one of its own space
        self._reference_subs = {
            role: self._stream(msg_type, role, qos, what, self._feedforward_of(space),
                               counted=True)
            for role, msg_type, what, space in (
                ('reference', JointTrajectory, 'reference', 'actuator'),
                ('task_reference', MultiDOFJointTrajectory, 'task reference', 'task'))}

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

    def _reference_points(self, model, msg, space):
        """The points of a reference to answer (all of them with the trajectory output, else
        the first), once the reference is checked to be in the robot's state space (``space``:
        that of the topic it came on) and to have points."""
        if model.robot.state_space != space:
            own = model.space
            raise RequestError(ErrorCodes.INVALID_REQUEST,
                               f'robot "{model.name}" is {own.robot_is}: send the reference as '
                               f'{own.reference_form} on '
                               f'{self._reference_subs[own.reference_role].topic_name}')
        if not msg.points:
            raise RequestError(ErrorCodes.INVALID_REQUEST, 'the reference has no points')
        check_points(len(msg.points))
        return msg.points if 'trajectory' in self._outputs else msg.points[:1]

    def _feedforward_of(self, space):
        """The handler of the references of the state space ``space``."""
        def feedforward(model, msg):
            self._feedforward(model, msg, space)
        return feedforward

    def _feedforward(self, model, msg, space):
        """Feedforward of one reference (JointTrajectory in actuator space,
        MultiDOFJointTrajectory in task space): the state of each point (a PKM's inverse
        kinematics starts from the previous reference's), its inverse dynamics, and the
        series-elastic motor feedforward of the first point (jerk and snap are not in
        trajectory_msgs: taken as zero)."""
        points = self._reference_points(model, msg, space)
        read = model.space.point_reader(model, msg, what=None)
        robot = model.robot
        previous = model.ff_solution
        states = []
        for k, p in enumerate(points):
            x, xd, xdd = read(p, k)
            state = robot.joint_motion(x, xd, xdd, initial=previous)
            if state.condition is not None:
                self._diagnostics.condition(np.max(state.condition))
            u = robot.inverse_dynamics(state, xd, xdd)
            previous = state
            states.append((state.actuators, state.actuators_d, state.actuators_dd, u))
            if k == 0:
                first = (x, xd, xdd, state)
        motor = None
        if 'motor' in self._pub and model.series_elastic:
            x, xd, xdd, state = first
            zero = np.zeros_like(xd)
            motor = robot.higher_order_inverse_dynamics(x, xd, xdd, zero, zero, q_guess=state.q)
        model.ff_solution = previous
        self._publish(model, msg, states, motor)

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
        qos = reliable(10)
        self._completion_pub = self._pub['completion'] = self._lifecycle_publisher(
            JointState, 'completion_output', qos)
        self._completion_sub = self._stream(JointState, 'completion_input', qos,
                                            'actuator state', self._complete)

    def _complete(self, model, msg):
        """Every tree joint of one measured actuator state (JointState)."""
        index = name_index(msg.name, model.actuated, 'name', allow_extra=True)
        n = len(msg.name)
        x = ordered(msg.position, index, n, 'position')
        xd = (ordered(msg.velocity, index, n, 'velocity', bound='rate 1') if len(msg.velocity)
              else None)
        tree = model.description.tree       # beyond a stroke: no state to complete
        check_limits(tree, [tree.joint_index(j) for j in model.actuated], x, 'position')
        state = forward_state(model.robot, x, xd, initial=model.completion_solution,
                              joints_only=True)
        model.completion_solution = state.solution
        out = JointState(name=list(model.tree_joints), position=floats(state.q))
        if state.qd is not None:
            out.velocity = floats(state.qd)
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
