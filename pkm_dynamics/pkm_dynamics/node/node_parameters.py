"""The node's parameters: declarations with descriptors (:data:`PARAMETERS`, documented in the
pages, doc/parameters.rst), the checks of the read-only ones at start-up, and the validation and
application of run-time changes (a new ``robot_description`` or payload builds a new model
beside the serving one; solver parameters rebuild it too).

:class:`ParameterHandling` is a part of :class:`~pkm_dynamics.node.dynamics_node.DynamicsNode`
(a mixin: it uses the node's parameters, logger, model and lifecycle state)."""
import numpy as np
from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                ParameterType, SetParametersResult)
from rclpy.parameter import Parameter

from pkm_dynamics.core.errors import DescriptionError
from pkm_dynamics.core.interface import SolverOptions
from pkm_dynamics.core.description.payload import Payload
from pkm_dynamics.node.model import STANDARD_GRAVITY, Model

#: the feedforward output kinds (parameter ``feedforward.outputs``)
OUTPUT_KINDS = ('commands', 'joint_state', 'trajectory', 'motor', 'pressure', 'valve')
#: the parameters of the run-time payload (one model rebuild however many change at once)
PAYLOAD_PARAMETERS = ('payload.mass', 'payload.com', 'payload.inertia')
#: the solver parameters: the robot's SolverOptions, fixed for a model (a change builds a new one)
SOLVER_PARAMETERS = {'ik.scheme': 'ik_scheme', 'ik.tolerance': 'tolerance',
                     'ik.max_iterations': 'max_iterations',
                     'ik.singularity_threshold': 'singularity_threshold',
                     'ik.loop_singularity_threshold': 'loop_singularity_threshold'}


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

#: name: (default, descriptor); documented in doc/parameters.rst
PARAMETERS = {
    'robot_description': ('', _descriptor(
        'robot description (URDF spanning tree + pkm_dynamics extension) as XML text, not a '
        'file path; empty: read the robot_description topic. Setting it rebuilds the model '
        '(rejected if invalid).', S)),
    'gravity': (STANDARD_GRAVITY, _descriptor(
        'gravity in the root link frame [m/s^2], 3 values', DA, read_only=True)),
    'ik.tolerance': (1e-10, _descriptor(
        'inverse kinematics accuracy goal (pose error, PKM: and loop residual); at most 1e-7 '
        '(every solution is also checked to put the platform within 1e-6 of the pose), at least '
        '1e-13 (forward kinematics solves the IK 100 times finer, near machine precision)', D,
        floating=(1e-13, 1e-7))),
    'ik.max_iterations': (50, _descriptor(
        'inverse kinematics iteration limit (PKM: outer iterations per limb); at most 200, so '
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
        'keep-last queue depth of the reference subscriptions and feedforward publishers: '
        'at most this many references wait (the newest kept)', I,
        read_only=True, integer=(1, 10000))),
    'feedforward.max_age': (0.1, _descriptor(
        'a stamped reference older than this on the node clock is dropped (warning, no '
        'output) [s]; 0: no age check', D, read_only=True, floating=(0.0, 3600.0))),
    'feedforward.rate_filter': (0.0, _descriptor(
        'time constant of the first-order low-pass on the jerk and snap that the series-elastic '
        'motor output estimates from a stream of single-point references [s]; 0: none', D,
        read_only=True, floating=(0.0, 1.0))),
    'feedforward.reliability': ('reliable', _descriptor(
        'reliability of the reference subscriptions (the feedforward publishers are always '
        'reliable)', S, read_only=True, additional='"reliable" or "best_effort"')),
    'completion.enabled': (True, _descriptor(
        'publish every tree joint from measured actuator positions', B, read_only=True)),
    'payload_estimation.buffer_seconds': (10.0, _descriptor(
        'span of the measured actuator states (the completion_input topic, actuator_states) '
        'kept for ~/estimate_payload with last_seconds [s] (at most 1000 samples a second); '
        '0: none kept', D, read_only=True, floating=(0.0, 600.0))),
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


class ParameterHandling:
    """Reading, checking and applying the node's parameters (part of the node class)."""

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
        if self._p('feedforward.reliability') not in ('reliable', 'best_effort'):
            raise ValueError(f'parameter feedforward.reliability = '
                             f'"{self._p("feedforward.reliability")}": expected "reliable" or '
                             f'"best_effort"')
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

    def _solver_options(self, changes):
        """The :class:`SolverOptions` of the ``ik.*`` parameters, ``changes`` applied."""
        def value(name):
            return changes[name] if name in changes else self._p(name)
        return SolverOptions(**{option: value(name) for name, option in SOLVER_PARAMETERS.items()})

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
            self.get_logger().info(
                f'building the model of a new robot_description ({len(text)} characters)' + (
                    f'; "{self._model.name}" serves meanwhile' if self._model else ''))
            try:
                self._pending[text] = Model(text, self._gravity,
                                            self._solver_options(changes),
                                            self._payload(changes), self._command_joints)
            except Exception as exc:  # the previous model keeps serving
                self.get_logger().error(f'new robot_description rejected: {exc}')
                return SetParametersResult(successful=False,
                                           reason=f'robot_description rejected: {exc}')
        elif any(name in changes for name in (*PAYLOAD_PARAMETERS, *SOLVER_PARAMETERS)):
            return self._validate_rebuild(changes)
        return SetParametersResult(successful=True)

    def _validate_rebuild(self, changes):
        """Check a new payload or solver options and build the model carrying them (kept until
        applied): a loaded robot is never changed."""
        what = 'payload' if any(name in changes for name in PAYLOAD_PARAMETERS) else \
            'solver parameters'
        try:
            payload = self._payload(changes)
            options = self._solver_options(changes)
            if self._model is not None:
                self._pending['rebuild'] = Model(
                    self._model.text, self._gravity, options, payload, self._command_joints)
        except Exception as exc:  # the previous model keeps serving
            self.get_logger().error(f'new {what} rejected: {exc}')
            return SetParametersResult(successful=False, reason=f'{what} rejected: {exc}')
        return SetParametersResult(successful=True)

    def _apply_parameters(self, parameters):
        changes = {p.name: p.value for p in parameters}
        self._options = self._solver_options(changes)
        if 'robot_description' in changes:
            model = self._pending.pop(changes['robot_description'], None)
            source = 'robot_description parameter'
        else:
            model = self._pending.pop('rebuild', None)
            source = 'payload parameters' if any(
                name in changes for name in PAYLOAD_PARAMETERS) else 'solver parameters'
        self._pending.clear()
        if model is not None and self._state in ('inactive', 'active'):
            self._use(model, source)
