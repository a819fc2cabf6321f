"""The node's model of one robot: the core robot object and what ``GetModelInfo`` reports."""
import copy
import xml.etree.ElementTree as ET

from pkm_dynamics.node.messages.conversions import floats, name_index
from pkm_dynamics.core.description.robot_description import parse_description
from pkm_dynamics.core.description.payload import Payload, description_with_payload
from pkm_dynamics.core.robot import robot_from_description
from pkm_dynamics.node.streaming.feedforward_outputs import FeedforwardOutputs
from pkm_dynamics.node.messages.state_messages import SPACES

STANDARD_GRAVITY = [0.0, 0.0, -9.80665]


class Model:
    """One loaded robot: the core object and what GetModelInfo reports (immutable once built;
    callbacks take a reference, so a rebuild never changes a model under a running call). The
    same for every robot kind: what differs comes from the robot (:mod:`pkm_dynamics.core.interface`:
    ``kind``, ``state_space``, ``task_space``, ``end_effector``, ...) and ``space``, the reader
    of its state in messages (:data:`pkm_dynamics.node.messages.state_messages.SPACES`).

    The warm starts of the streaming topics (``ff_solution``: the last feedforward state, a
    PKM's flat limb joint vector ``ReferenceMotion.theta``; ``completion_solution``: the last
    joint-state completion) belong to the model (only the streaming thread touches them), so
    a swap never hands one robot's solution to another: a new model starts cold. So does
    ``passive_state``, the passive joints' positions and velocities of the last measured joint
    state (the completion's input; the feedforward of a robot with passive joints uses them), and
    ``ff_rates``, the feedforward stream's estimate of jerk and snap for the series-elastic
    motor output (:class:`~pkm_dynamics.core.reference_derivatives.StreamRates`), ``ff_pressure``,
    the chamber pressures the stream carries from reference to reference, and
    ``ff_outputs``, the feedforward's reused output messages
    (:class:`~pkm_dynamics.node.streaming.feedforward_outputs.FeedforwardOutputs`, made with the model).

    ``options`` (:class:`~pkm_dynamics.core.interface.SolverOptions`): the solver parameters,
    fixed for the model (other values make a new model). ``payload``
    (:class:`~pkm_dynamics.core.payload.Payload`, default none) is added to the end-effector /
    platform body; ``text`` is kept to rebuild the model with another payload or options.
    ``command_joints`` (parameter ``feedforward.joints``; default: the actuated joints) is the
    joint order of the ``commands`` output: every actuated joint once, else ValueError naming
    the unknown, repeated or missing joints (the robot is not served with that order).

    :meth:`with_gravity` makes the same model under another gravity (a light copy); ``build``
    is the same object for a model and its gravity copies (the streaming thread prepares once
    per build, :meth:`~pkm_dynamics.node.streaming.streaming.Streaming.prepare_stream`)."""

    def __init__(self, text, gravity, options=None, payload=None, command_joints=None):
        desc = parse_description(text, gravity, files=False)    # XML text only, never a path
        self.text = text
        self.payload = Payload() if payload is None else payload
        desc = description_with_payload(desc, self.payload)
        self.robot = robot_from_description(desc, options)
        self.options = self.robot.options
        self.kind = self.robot.kind
        self.space = SPACES[self.robot.state_space]
        self.end_effector = self.robot.end_effector
        self.task_space = tuple(self.robot.task_space)
        self.description = desc
        self.name = desc.name
        self.root_link = self.robot.root_link
        self.actuated = tuple(self.robot.actuated_joints)
        self.passive = tuple(self.robot.passive_joints)
        self.tree_joints = tuple(self.robot.tree_joints)
        self.series_elastic = tuple(a.joint for a in desc.actuators if a.series_elastic)
        joints = self.actuated if command_joints is None else list(command_joints)
        name_index(joints, self.actuated, 'parameter feedforward.joints')
        #: ``commands`` data = efforts (actuated order)[command_order]
        self.command_order = [self.actuated.index(joint) for joint in joints]
        self.num_bodies = len(ET.fromstring(desc.xml).findall('link')) if desc.xml else 0
        self.total_mass = desc.tree.total_mass
        self.gravity = floats(desc.tree.gravity)
        self.ff_solution = None
        self.ff_rates = None
        self.ff_pressure = None         # (time [ns], HydraulicState) of the last reference
        self.ff_hydraulic_warning = None    # time.monotonic() of the last warning of a valve limit
        self.ff_outputs = FeedforwardOutputs(self)
        self.completion_solution = None
        self.passive_state = None       # (P, PD) (1, n_pass) of the last measured joint state
        self.build = object()

    def with_gravity(self, gravity):
        """This model under ``gravity`` (3,) [m/s^2, root link frame]: a shallow copy whose
        robot is ``robot.with_gravity(gravity)`` (the core's light copy: no model rebuilt, no
        kernel compiled); the warm starts, stream rates and output messages carry over (the
        same robot, only gravity differs), so a gravity update does not start the stream cold.
        Bad gravity raises the core's StateError naming it."""
        other = copy.copy(self)
        other.robot = self.robot.with_gravity(gravity)
        other.description = other.robot.description
        other.gravity = floats(other.robot.gravity)
        return other
