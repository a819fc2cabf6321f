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

from pkm_dynamics.conversions import (RequestError, check_frame, check_points, core_error, floats,
                                      name_index, ordered)
from pkm_dynamics.core.bounds import check_limits
from pkm_dynamics.core.higher_order import higher_order_inverse_dynamics

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
