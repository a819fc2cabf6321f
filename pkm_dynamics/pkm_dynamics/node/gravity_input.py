"""Gravity at run time: a crane on a slope, a manipulator on a vehicle. Two topics set the
gravity the node computes with, whichever publishes last:

* ``~/base_imu`` (``sensor_msgs/Imu``): the orientation of the robot's base (root link) in a
  gravity-aligned world frame, z up (REP 103 / REP 145, what an IMU driver or a state
  estimator publishes); gravity in the root link frame is ``R^T (0, 0, -|g|)`` with ``|g|`` the
  magnitude of the ``gravity`` parameter (:func:`pkm_dynamics.core.gravity.base_gravity`). Only
  the orientation is read (not the noisy ``linear_acceleration``); ``header.frame_id`` must be
  the root link or empty (an IMU mounted otherwise: publish ``~/gravity`` instead).
* ``~/gravity`` (``geometry_msgs/Vector3Stamped``): the gravity vector itself [m/s^2] in the
  root link frame (``header.frame_id`` the root link or empty), e.g. from a controller.

Each update swaps the served model for ``model.with_gravity(g)`` (a light copy: the core robot's
:meth:`with_gravity` rebuilds nothing and compiles nothing; the streaming warm starts carry
over), so every answer after it -- services and feedforward -- uses the latest gravity, and a
model built later (a new description, payload or solver parameter) is built with it. The
``gravity`` parameter is the start value. A message with NaN, a zero or non-unit quaternion, an
IMU without orientation or another frame is refused: a throttled warning naming the field and
the value, the diagnostics' last error, and the previous gravity stays.

:class:`GravityInput` is a part of :class:`~pkm_dynamics.node.dynamics_node.DynamicsNode` (a
mixin: it uses the node's model, logger, parameters and diagnostics)."""
import numpy as np
from geometry_msgs.msg import Vector3Stamped
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu

from pkm_dynamics.core.errors import StateError
from pkm_dynamics.core.gravity import base_gravity, check_gravity

#: the gravity topics by role (fixed names resolved as the node's; remapped the ROS way)
GRAVITY_TOPICS = {'imu': '~/base_imu', 'gravity': '~/gravity'}


class GravityInput:
    """The gravity topics (part of the node class; module doc)."""

    def _setup_gravity(self):
        """Subscribe both gravity topics (best effort, keep last 1: only the latest counts),
        in the default callback group, where models are built: an update never races a build."""
        qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.BEST_EFFORT,
                         durability=DurabilityPolicy.VOLATILE)
        self._gravity = [float(v) for v in check_gravity(self._p('gravity'), 'parameter gravity')]
        self._gravity_subs = [
            self.create_subscription(Imu, GRAVITY_TOPICS['imu'], self._on_base_imu, qos),
            self.create_subscription(Vector3Stamped, GRAVITY_TOPICS['gravity'],
                                     self._on_gravity_vector, qos)]

    def _gravity_frame(self, header, what):
        model = self._model
        frame = header.frame_id
        if frame and model is not None and frame != model.root_link:
            raise StateError(f'{what} header.frame_id is "{frame}", not the root link '
                             f'"{model.root_link}" (or empty)')

    def _on_base_imu(self, msg):
        def gravity():
            self._gravity_frame(msg.header, 'base_imu')
            if msg.orientation_covariance[0] == -1.0:
                raise StateError('base_imu has no orientation (orientation_covariance[0] = -1)')
            o = msg.orientation
            return base_gravity([o.x, o.y, o.z, o.w], float(np.linalg.norm(self._p('gravity'))),
                                'base_imu orientation')
        self._update_gravity('base_imu', gravity)

    def _on_gravity_vector(self, msg):
        def gravity():
            self._gravity_frame(msg.header, 'gravity')
            v = msg.vector
            return check_gravity([v.x, v.y, v.z], 'gravity vector')
        self._update_gravity('gravity', gravity)

    def _update_gravity(self, what, gravity):
        """Serve the gravity ``gravity()`` computes from a ``what`` message; a refusal is
        warned (throttled) and noted in the diagnostics, and the previous gravity stays."""
        try:
            g = gravity()
            model = self._model
            if model is not None:
                model = model.with_gravity(g)
        except Exception as exc:
            message = f'{exc}; the gravity stays {self._gravity}'
            self.get_logger().warning(f'{what} ignored: {message}',
                                      throttle_duration_sec=self._p('warning_period'))
            self._diagnostics.error(what, message)
            return
        self._gravity = [float(v) for v in g]
        if model is not None:
            self._model = model
