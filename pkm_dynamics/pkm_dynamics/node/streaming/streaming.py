"""The node's streaming topics: the feedforward (a reference in, the inverse dynamics of each
reference out on every configured output, as it arrives) and joint-state completion (measured
actuator positions in, every tree joint out; the measured states also fill the payload
estimation's buffer, :mod:`~pkm_dynamics.node.joint_state_buffer`). They live on the companion node
``<name>_topics`` (spun by an executor of its own, :mod:`~pkm_dynamics.node.runtime.lean_executor`),
exist from configure to cleanup and publish while the node is active; a bad message gets a
throttled warning and no output. Per reference the least Python that rclpy allows: the
references are taken as bytes and read without rclpy's message conversion
(:mod:`~pkm_dynamics.node.messages.cdr_messages`), the outputs are written as bytes from templates and the
joint order of the references resolved once per model
(:mod:`~pkm_dynamics.node.streaming.feedforward_outputs`), the points go to the core as one array.

:class:`Streaming` is a part of :class:`~pkm_dynamics.node.dynamics_node.DynamicsNode` (a mixin: it
uses the node's model, lifecycle state, parameters, diagnostics and companion node)."""
import time

import numpy as np
from pkm_dynamics_interfaces.msg import ErrorCodes
from rclpy.exceptions import InvalidHandle
from rclpy.lifecycle import LifecyclePublisher
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, MultiDOFJointTrajectory

from pkm_dynamics.node.messages.cdr_messages import read_reference
from pkm_dynamics.node.messages.conversions import (RequestError, actuator_states, check_points, core_error,
                                      floats, name_index, ordered)
from pkm_dynamics.core.bounds import check_limits
from pkm_dynamics.core.forward_state import forward_state
from pkm_dynamics.core.hoid.higher_order import higher_order_inverse_dynamics
from pkm_dynamics.core.hoid.reference_derivatives import MAX_GAP, hermite_rates, StreamRates
from pkm_dynamics.core.hydraulics.hydraulic_feedforward import force_rate
from pkm_dynamics.core.hydraulics.hydraulic_trajectory import pressure_step
from pkm_dynamics.core.hydraulics.valve_cylinder import hydraulic_state
from pkm_dynamics.node.messages.hydraulic_messages import hydraulic_note
from pkm_dynamics.node.messages.passive_states import measured_passive, passive_states, with_passive
from pkm_dynamics.node.streaming.feedforward_outputs import check_finite
from pkm_dynamics.node.streaming.rehearsal import rehearse

#: the streaming topics by role, under fixed names resolved as the main node's (``~`` is
#: ``<namespace>/<name>``); remapped the ROS way (``--ros-args -r``, launch ``remappings=``)
TOPICS = {'reference': '~/reference', 'task_reference': '~/task_reference',
          'commands': '~/feedforward/commands', 'joint_state': '~/feedforward/joint_states',
          'trajectory': '~/feedforward/trajectory', 'motor': '~/feedforward/motor_commands',
          'pressure': '~/feedforward/pressure', 'valve': '~/feedforward/valve_commands',
          'completion_input': 'actuator_states', 'completion_output': 'joint_states'}


def reliable(depth):
    """Reliable, volatile, keep-last ``depth``: the QoS of services and streaming topics."""
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)


#: parameter ``feedforward.reliability``: the reliability of the reference subscriptions
RELIABILITY = {'reliable': ReliabilityPolicy.RELIABLE,
               'best_effort': ReliabilityPolicy.BEST_EFFORT}


class Streaming:
    """The feedforward and joint-state completion topics (part of the node class)."""

    def _setup_feedforward(self):
        """The reference subscriptions and feedforward publishers (at configure). QoS (see
        doc/topics.rst, *Feedforward QoS*): keep-last ``feedforward.qos_depth``, volatile;
        the publishers reliable (what every subscriber matches, ros2_control's controllers
        included), the subscriptions ``feedforward.reliability``; references older than
        ``feedforward.max_age`` are dropped (:meth:`_check_age`)."""
        depth = self._p('feedforward.qos_depth')
        qos = reliable(depth)
        reference_qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                                   reliability=RELIABILITY[self._p('feedforward.reliability')],
                                   durability=DurabilityPolicy.VOLATILE)
        self._max_age_ns = int(round(self._p('feedforward.max_age') * 1e9))
        self._outputs = set(self._p('feedforward.outputs'))
        for kind, msg_type in (('commands', Float64MultiArray), ('joint_state', JointState),
                               ('trajectory', JointTrajectory), ('motor', JointState),
                               ('pressure', Float64MultiArray), ('valve', Float64MultiArray)):
            if kind in self._outputs:
                self._pub[kind] = self._lifecycle_publisher(msg_type, kind, qos)
        # one reference topic per state space; a robot answers the one of its own space
        self._reference_subs = {
            'reference': self._stream(JointTrajectory, 'reference', reference_qos, 'reference',
                                      self._feedforward, reference=True),
            'task_reference': self._stream(MultiDOFJointTrajectory, 'task_reference',
                                           reference_qos, 'task reference',
                                           self._task_feedforward, reference=True)}

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
        self._state_buffer = None

    def _warn(self, what, exc):
        """A warning that ``what`` was ignored for ``exc``, at most one per ``warning_period``
        (throttled here: rclpy's throttle inspects the caller first, ~0.5 ms, which made a
        refused reference cost more than an answered one, so that a node ``feedforward.max_age``
        behind at 1 kHz stayed behind, dropping about half the references); returns the
        reason."""
        code, message = core_error(exc)
        now = time.monotonic()
        if self._refusal_warning is None or now - self._refusal_warning >= self._p('warning_period'):
            self._refusal_warning = now
            self.get_logger().warning(f'{what} ignored: {message}')
        return message

    def _stream(self, msg_type, role, qos, what, handle, reference=False):
        """Subscribe a streaming topic (on the companion node): each message delivered, and
        those already waiting behind it (:func:`queued`), goes to ``handle(model, msg)`` while
        the node is active; a message ``handle`` rejects (an exception) gets a throttled
        warning naming the problem and no output, and the next one is handled as usual.
        ``reference``: a reference stream, taken as bytes and read by
        :func:`~pkm_dynamics.node.messages.cdr_messages.read_reference`; its answers, refusals and costs go
        to the diagnostics."""
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
                    handle(model, read_reference(m, msg_type) if reference else m)
                except Exception as exc:
                    message = self._warn(what, exc)
                    if reference:
                        diagnostics.refusal(what, message)
                else:
                    if reference:
                        diagnostics.reference(start)

        subscription = self.topic_node.create_subscription(
            msg_type, self._topic(role), callback, qos, raw=reference)
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

    def prepare_stream(self):
        """Run by the streaming executor in its thread before it waits (``LeanExecutor``
        ``prepare``): the first time it sees a model, the core calls the stream makes, once at
        the robot's reference state (:func:`~pkm_dynamics.node.streaming.rehearsal.rehearse`), so
        that the kernels' per-thread scratch
        of this thread exists before the first reference arrives (a thread's first call
        allocates it: ~1-1.5 ms more than the next on a parallel robot). Nothing is published
        and the model's warm starts are left as they are."""
        model = self._model
        if model is None or model.build is self._stream_ready:
            return                  # a gravity copy of a prepared model is prepared (model.py)
        self._stream_ready = model.build
        start = time.perf_counter()
        try:
            rehearse(model.robot, completion='completion' in self._pub,
                     hydraulics=self._hydraulic_outputs(model))
            self.get_logger().info(f'streaming thread ready for "{model.name}" '
                                   f'({(time.perf_counter() - start) * 1e3:.1f} ms)')
        except Exception as exc:    # a robot whose reference state is refused streams cold
            self.get_logger().warning(f'the streaming thread was not prepared for '
                                      f'"{model.name}": {exc}')

    def _check_age(self, msg):
        """INVALID_REQUEST (the reference is dropped) if ``msg`` is stamped and older than
        ``feedforward.max_age`` on the node's clock: after a stall the node answers the
        references that are still current, not the backlog (unstamped ones: no check)."""
        stamp = msg.header.stamp
        if self._max_age_ns and (stamp.sec or stamp.nanosec):
            clock = self.get_clock().handle        # its time in ns, as Clock.now() reads it
            with clock:
                now = clock.get_now().nanoseconds
            age = now - (stamp.sec * 10**9 + stamp.nanosec)
            if age > self._max_age_ns:
                raise RequestError(ErrorCodes.INVALID_REQUEST,
                                   f'the reference is {age * 1e-9:.3f} s old (header.stamp), '
                                   f'older than feedforward.max_age = '
                                   f'{self._max_age_ns * 1e-9:g} s: dropped')

    def _feedforward(self, model, msg):
        """Feedforward of one actuator-space reference (JointTrajectory): its points in one
        array (:func:`~pkm_dynamics.node.messages.conversions.actuator_states`), one core call for all."""
        self._check_age(msg)
        outputs = model.ff_outputs
        points = self._reference_points(model, msg, 'actuator')
        index = outputs.order(msg.joint_names, 'joint_names')
        X, XD, XDD = actuator_states(points, index, len(msg.joint_names))
        XF, XDF = measured_passive(model, X, XD, lambda: self._topic('completion_input'))
        if len(points) == 1:
            F = model.robot.inverse_dynamics(XF[0], XDF[0], XDD[0])[None]
        else:
            F = model.robot.inverse_dynamics(XF, XDF, XDD)
        motor = hydraulics = None
        motor_on = 'motor' in self._pub and model.series_elastic
        hydraulic_on = self._hydraulic_outputs(model)
        if motor_on or hydraulic_on:
            second = None
            if len(msg.points) > 1:
                second = actuator_states(msg.points[:2], index, len(msg.joint_names))[:, 1]
            jerk, snap = self._motion_rates(model, msg, np.stack([X[0], XD[0], XDD[0]]), second)
            if motor_on:
                motor = higher_order_inverse_dynamics(model.robot, X[0], XD[0], XDD[0], jerk, snap)
            if hydraulic_on:
                hydraulics = self._hydraulics(model, msg, (XF[0], XDF[0], XDD[0], jerk), X[0], XD[0])
        self._diagnostics.utilisation(model.robot.limits, F, XD)      # published even beyond
        self._publish(outputs, msg, (X, XD, XDD, F), motor, hydraulics)

    def _task_feedforward(self, model, msg):
        """Feedforward of one task-space reference (MultiDOFJointTrajectory, PKMs): per point
        the robot's :meth:`~pkm_dynamics.core.pkm_kinematics.PkmKinematics.reference_motion`
        (IK from the previous point's solution, then ID; one compiled call), into one array."""
        self._check_age(msg)
        outputs = model.ff_outputs
        points = self._reference_points(model, msg, 'task')
        read = model.space.point_reader(model, msg, what=None)
        robot = model.robot
        warm = model.ff_solution
        states = np.empty((4, len(points), len(model.actuated)))     # X, XD, XDD, F
        for k, p in enumerate(points):
            pose, twist, accel = read(p, k)
            motion = robot.reference_motion(pose, twist, accel, warm)
            self._diagnostics.condition(motion.condition)
            states[:, k] = motion[:4]
            warm = motion.theta
            if k == 0:
                first = (pose, twist, accel, motion)
        motor = hydraulics = None
        motor_on = 'motor' in self._pub and model.series_elastic
        hydraulic_on = self._hydraulic_outputs(model)
        if motor_on or hydraulic_on:
            pose, twist, accel, motion = first
            second = np.stack(read(msg.points[1], 1)[1:]) if len(msg.points) > 1 else None
            jerk, snap = self._motion_rates(model, msg, np.stack([twist, accel]), second)
            if motor_on:
                motor = higher_order_inverse_dynamics(robot, pose, twist, accel, jerk, snap,
                                                      q_guess=motion.tree_q())
            if hydraulic_on:
                hydraulics = self._hydraulics(model, msg, (pose, twist, accel, jerk), states[0, 0],
                                              states[1, 0])
        model.ff_solution = warm
        self._diagnostics.utilisation(robot.limits, states[3], states[1])
        self._publish(outputs, msg, states, motor, hydraulics)

    def _hydraulic_outputs(self, model):
        """Whether this reference needs the hydraulic side: a ``pressure`` or ``valve`` output
        and a robot with cylinders."""
        return ('pressure' in self._pub or 'valve' in self._pub) and model.robot.hydraulic_model.n > 0

    def _hydraulics(self, model, msg, motion, x, xd):
        """The cylinders' pressures and spool commands at the first point of ``msg``: the force
        and its rate (:func:`~pkm_dynamics.core.hydraulics.hydraulic_feedforward.force_rate` of
        ``motion`` = state, rate, acceleration and the stream's jerk estimate; ``exact`` False: a
        chain of loops by a central difference of its compiled dynamics, 1e-6 of the exact rate) through the valve
        model at the actuator positions and rates ``x``, ``xd``, with the chamber pressures
        carried from the previous reference
        (:func:`~pkm_dynamics.core.hydraulics.hydraulic_trajectory.pressure_step`, over the
        time between their ``header.stamp + time_from_start``; the steady level at the stream's
        start, for unstamped references, after a gap as for the jerk estimate, and where the
        carried pressures leave the range the valve holds: ``restart``). One compiled call of
        the valve model for all cylinders. What the valves cannot deliver gets a warning naming
        it, at most one per ``warning_period`` (the limits are listed only when one is due); the
        outputs are published all the same (the spool beyond its limit as computed: the
        controller saturates it)."""
        u, du = force_rate(model.robot, *motion, exact=False)     # a chain of loops: the fast rate
        m = model.robot.hydraulic_model
        stamp, start = msg.header.stamp, msg.points[0].time_from_start
        t = None
        if stamp.sec or stamp.nanosec:
            t = (stamp.sec + start.sec) * 10**9 + stamp.nanosec + start.nanosec
        # throttled here: rclpy's throttle inspects the caller first (~1 ms)
        now = time.monotonic()
        due = model.ff_hydraulic_warning is None or now - model.ff_hydraulic_warning >= self._p('warning_period')
        last = model.ff_pressure
        if t is not None and last is not None and 0 < t - last[0] <= MAX_GAP * 1e9:
            h = pressure_step(m, last[1], (t - last[0]) * 1e-9, x, xd, u, du, restart=True, limits=due)
        else:
            h = hydraulic_state(m, x, xd, u, du, check=False, limits=due)
        model.ff_pressure = None if t is None else (t, h)
        if h.violations:
            model.ff_hydraulic_warning = now
            self.get_logger().warning(f'feedforward{hydraulic_note(h.violations)}')
        return h

    def _motion_rates(self, model, msg, first, second):
        """The 3rd and 4th derivatives of the motion at the first point of ``msg`` (2, n), for
        the series-elastic motor feedforward (:mod:`~pkm_dynamics.core.reference_derivatives`):
        ``first``, ``second`` (m, n): position, velocity, acceleration (actuator space) or twist
        and its derivative (task space) of the first two points (``second`` None: one point).
        With a second point later in ``time_from_start``: the reference's own spline through
        both; else the stream's causal estimate (``model.ff_rates``, low-pass
        ``feedforward.rate_filter``) at the reference time ``header.stamp + time_from_start``.
        Every reference goes into the stream's estimate, so that it continues across both."""
        stream = model.ff_rates
        if stream is None:
            stream = model.ff_rates = StreamRates(self._p('feedforward.rate_filter'))
        stamp, start = msg.header.stamp, msg.points[0].time_from_start
        t = 0                                   # ns, exact (a float of 1e9 s is not)
        if stamp.sec or stamp.nanosec:
            t = (stamp.sec + start.sec) * 10**9 + stamp.nanosec + start.nanosec
        rates = stream.update(t, first)
        if second is not None:
            end = msg.points[1].time_from_start
            h = (end.sec - start.sec) * 10**9 + end.nanosec - start.nanosec
            if h > 0:
                rates = hermite_rates(h * 1e-9, first, second)
        return rates

    def _publish(self, outputs, msg, states, motor, hydraulics=None):
        """Publish the outputs of one reference: ``states`` = (X, XD, XDD, F), (B, n) each
        (B: the points answered; the single-point outputs take the first); ``hydraulics``: the
        core's hydraulic result at the first point (None: no pressure / valve output)."""
        X, XD, XDD, F = states
        check_finite(F, 'the effort')        # all or nothing: no output with NaN or Inf
        if hydraulics is not None:
            for field in ('pressure_a', 'pressure_b', 'spool'):
                check_finite(getattr(hydraulics, field), field)
        if motor is not None:
            for field in ('motor_position', 'motor_velocity', 'motor_torque'):
                check_finite(getattr(motor, field), field)
        stamp = msg.header.stamp
        if stamp.sec == 0 and stamp.nanosec == 0:
            stamp = self.get_clock().now().to_msg()
        pub = self._pub
        if 'commands' in pub:
            pub['commands'].publish(outputs.commands(F[0]))
        if 'joint_state' in pub:
            pub['joint_state'].publish(outputs.joint_state(stamp, msg.header.frame_id, X[0],
                                                           XD[0], F[0]))
        if 'trajectory' in pub:
            pub['trajectory'].publish(outputs.trajectory(msg.header, X, XD, XDD, F,
                                                         msg.points))
        if 'motor' in pub and motor is not None:
            pub['motor'].publish(outputs.motor(stamp, motor))
        if hydraulics is not None:
            if 'pressure' in pub:
                pub['pressure'].publish(outputs.pressure(hydraulics))
            if 'valve' in pub:
                pub['valve'].publish(outputs.valve(hydraulics))

    # -- joint-state completion ---------------------------------------------------------------
    def _setup_completion(self):
        """The measured actuator states' subscription (at configure) when completion or the
        payload estimation's buffer (``payload_estimation.buffer_seconds`` > 0) takes them."""
        completion = self._p('completion.enabled')
        if not completion and not self._p('payload_estimation.buffer_seconds'):
            return
        qos = reliable(10)
        if completion:
            self._completion_pub = self._pub['completion'] = self._lifecycle_publisher(
                JointState, 'completion_output', qos)
        self._completion_sub = self._stream(JointState, 'completion_input', qos,
                                            'actuator state', self._measured_state)

    def _measured_state(self, model, msg):
        """One measured actuator state (JointState): into the payload estimation's buffer,
        then completed to every tree joint."""
        self._record_state(model, msg)
        if 'completion' in self._pub:
            self._complete(model, msg)

    def _complete(self, model, msg):
        """Every tree joint of one measured joint state (JointState): the actuators', and the
        passive joints' of a robot with passive joints (kept in ``model.passive_state`` for the
        feedforward; a passive joint missing or not finite is refused naming it)."""
        index = name_index(msg.name, model.actuated, 'name', allow_extra=True)
        n = len(msg.name)
        x = ordered(msg.position, index, n, 'position')
        xd = (ordered(msg.velocity, index, n, 'velocity', bound='rate 1') if len(msg.velocity)
              else None)
        tree = model.description.tree       # beyond a stroke: no state to complete
        check_limits(tree, [tree.joint_index(j) for j in model.actuated], x, 'position')
        if model.passive:
            P, PD = passive_states(model, msg.name, msg.position, msg.velocity, extra=True)
            check_limits(tree, [tree.joint_index(j) for j in model.passive], P[0], 'position')
            model.passive_state = (P, PD)
            x, xd = with_passive(x, np.zeros_like(x) if xd is None else xd, P, PD)
            xd = None if not len(msg.velocity) else xd
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

