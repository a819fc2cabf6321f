"""Property-based tests of the request path (hypothesis): the node's service handlers, run
in-process on real request messages for the five example robots, fed generated input —
special floats (NaN, ±Inf, 1e308, -1e155, subnormals), huge rates, wrong sizes, unknown or
repeated joint names, non-unit quaternions, far poses, states beyond strokes.

Every service is fuzzed, ``forward_kinematics`` included. Every answer must be a named
outcome: never ``FAILURE`` (an unexpected exception), never ``success`` with a NaN or Inf
anywhere in the response, never ``success`` with a reported joint beyond its limits (actuator
strokes and every tree joint the response lists, on module chains and PKMs alike); and after
each bad request the next good one is answered with the core's own numbers. The core is driven
directly as well: it raises a PkmDynamicsError or returns finite numbers.

CI runs the ``ci`` profile (few examples, derandomized: reproducible); ``bench/fuzz_requests.py``
runs the same generators much longer and reports the outcomes and answer times."""
import array
import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st
import numpy as np
from numpy.testing import assert_array_equal
import pytest

settings.register_profile('ci', max_examples=40, deadline=None, derandomize=True,
                          suppress_health_check=list(HealthCheck), database=None)
settings.load_profile('ci')

ROBOTS_DIR = Path(__file__).resolve().parents[1] / 'robots'
ROBOTS = ('heavy_duty_4dof', 'linear_4bar_1dof', 'planar_3rrr', 'gough_stewart_6ups', 'irsbot2')
SERVICES = ('forward_dynamics', 'inverse_dynamics', 'higher_order_inverse_dynamics',
            'inverse_kinematics', 'forward_kinematics')
#: special values: NaN, infinities, the largest floats, overflow-prone magnitudes, subnormals
SPECIAL = (math.nan, math.inf, -math.inf, 1e308, -1e308, -1e155, 1e155, 1e6, -1e6, 1e3,
           5e-324, -0.0)


# -- the node in-process ------------------------------------------------------------------------
def in_process_node(context, robot):
    """The node of the example ``robot`` in-process (see ``InProcessNode``)."""
    from pkm_dynamics.testing import InProcessNode
    return InProcessNode(context, (ROBOTS_DIR / f'{robot}.urdf').read_text(),
                         namespace=f'/fuzz_{robot}')


@pytest.fixture(scope='module')
def nodes(rclpy_context):
    context = rclpy_context
    made = {}
    yield lambda robot: made[robot] if robot in made else made.setdefault(
        robot, in_process_node(context, robot))
    for node in made.values():
        node.destroy()


# -- generators -----------------------------------------------------------------------------
def weighted(*choices):
    """One of the strategies of ``choices`` ((weight, strategy), ...), drawn with those weights
    (shrinking towards the first)."""
    flat = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.integers(0, len(flat) - 1).flatmap(lambda k: flat[k])


def values(nominal, spread=0.05):
    """Lists like ``nominal`` (mostly of its length): each entry near it, or a special value, or
    any float at all."""
    n = len(nominal)
    small = st.floats(-spread, spread)
    entry = st.one_of(small, small, st.sampled_from(SPECIAL),
                      st.floats(allow_nan=True, allow_infinity=True))

    def near(offsets):
        return [float(v) + o if abs(o) <= spread else o for v, o in zip(nominal, offsets)]
    clean = st.lists(small, min_size=n, max_size=n).map(near)
    right = st.lists(entry, min_size=n, max_size=n).map(near)
    return weighted((2, clean), (1, right), (1, st.lists(entry, max_size=n + 2)))


def names(actuated):
    """The actuated joint names in any order, or with one missing, repeated or unknown."""
    actuated = list(actuated)
    return weighted((6, st.permutations(actuated)), (1, st.just(actuated[:-1])),
                    (1, st.just(actuated + actuated[:1])),
                    (1, st.just(actuated[:-1] + ['no_such_joint'])))


def rates(width, order):
    """A rate of the given order: small, zero, or special."""
    scale = 0.1 ** (1 / order)
    return values([0.0] * width, spread=scale)


def nominal_state(model):
    """Mid-stroke actuator values of a module chain (zero where a joint is unlimited)."""
    tree = model.description.tree
    idx = [tree.joint_index(n) for n in model.actuated]
    lo, hi = tree.lower[idx], tree.upper[idx]
    ok = np.isfinite(lo) & np.isfinite(hi)
    return np.where(ok, 0.5 * (np.where(ok, lo, 0) + np.where(ok, hi, 0)), 0.0).tolist()


def nominal_actuators(model):
    """Actuator values of an admissible state: mid-stroke (module chains), the reference pose's
    IK solution (PKMs)."""
    if model.kind != 'parallel':
        return nominal_state(model)
    return model.robot.inverse_kinematics(model.robot.reference_pose).actuators.tolist()


@st.composite
def poses(draw, model):
    """A geometry_msgs/Pose: near the reference pose (PKM) or the nominal end-effector pose,
    with special, far or non-unit components now and then."""
    from geometry_msgs.msg import Pose

    from pkm_dynamics.node.messages.conversions import matrix_quaternion
    robot = model.robot
    C = robot.reference_pose if model.kind == 'parallel' else robot.forward_kinematics(
        np.array(nominal_state(model)))
    position = draw(values(C[:3, 3].tolist(), spread=0.05).filter(lambda v: len(v) == 3)
                    | st.lists(st.floats(-1e12, 1e12), min_size=3, max_size=3))
    q = matrix_quaternion(C[:3, :3]).tolist()
    quaternion = draw(st.one_of(st.just(q), st.just(q),
                                values(q, spread=0.01).filter(lambda v: len(v) == 4)))
    msg = Pose()
    msg.position.x, msg.position.y, msg.position.z = position
    msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = quaternion
    return msg


def spatial(kind, six):
    """A Twist / Accel / Wrench message of the six values (angular or moment first)."""
    msg = kind()
    a, b = (msg.torque, msg.force) if hasattr(msg, 'torque') else (msg.angular, msg.linear)
    a.x, a.y, a.z, b.x, b.y, b.z = six
    return msg


def task_rate(model, kind, order):
    """A Twist / Accel with the task-space components of a rate (rarely one outside)."""
    from pkm_dynamics.node.messages.conversions import TWIST_COMPONENTS
    inside = [c in model.task_space for c in TWIST_COMPONENTS] if model.kind == 'parallel' else [True] * 6

    def six(v):
        return (list(v) + [0.0] * 6)[:6]

    def fill(v):
        return [x if keep else 0.0 for x, keep in zip(six(v), inside)]
    return st.one_of(rates(6, order).map(fill), rates(6, order).map(six)).map(
        lambda v: spatial(kind, v))


@st.composite
def requests(draw, model, service):
    """A request message of ``service`` for the robot of ``model``."""
    from geometry_msgs.msg import Accel, Transform, Twist, Wrench
    from pkm_dynamics_interfaces import srv
    from trajectory_msgs.msg import (JointTrajectoryPoint,
                                     MultiDOFJointTrajectoryPoint)
    n = len(model.actuated)
    x0 = nominal_state(model) if model.kind != 'parallel' else None
    effort = values([0.0] * n, spread=1e3)
    wrench = values([0.0] * 6, spread=10.0).filter(lambda v: len(v) == 6).map(
        lambda v: spatial(Wrench, v))
    if service == 'forward_dynamics':
        r = srv.ForwardDynamics.Request()
        r.joint_state.name = draw(names(model.actuated))
        r.joint_state.effort = draw(effort)
        if model.kind == 'parallel':
            r.pose.pose = draw(poses(model))
            r.twist = draw(task_rate(model, Twist, 1))
        else:
            r.joint_state.position = draw(values(x0))
            r.joint_state.velocity = draw(rates(n, 1))
        r.wrench = draw(st.lists(wrench, max_size=1))
    elif service == 'inverse_dynamics':
        r = srv.InverseDynamics.Request()
        count = draw(st.integers(1, 3))
        if model.kind == 'parallel':
            def point(_):
                p = MultiDOFJointTrajectoryPoint()
                pose = draw(poses(model))
                t = Transform()
                t.translation.x, t.translation.y, t.translation.z = (
                    pose.position.x, pose.position.y, pose.position.z)
                t.rotation = pose.orientation
                p.transforms = [t]
                p.velocities = draw(st.lists(task_rate(model, Twist, 1), max_size=1))
                p.accelerations = draw(st.lists(task_rate(model, Twist, 2), max_size=1))
                return p
            r.task_trajectory.points = [point(k) for k in range(count)]
        else:
            r.trajectory.joint_names = draw(names(model.actuated))
            r.trajectory.points = [JointTrajectoryPoint(
                positions=draw(values(x0)), velocities=draw(rates(n, 1)),
                accelerations=draw(rates(n, 2))) for _ in range(count)]
        r.wrenches = draw(st.lists(wrench, max_size=2))
    elif service == 'higher_order_inverse_dynamics':
        r = srv.HigherOrderInverseDynamics.Request()
        if model.kind == 'parallel':
            r.pose.pose = draw(poses(model))
            r.twist = draw(task_rate(model, Twist, 1))
            r.acceleration, r.jerk, r.snap = (draw(task_rate(model, Accel, k)) for k in (2, 3, 4))
        else:
            m = r.motion
            m.name = draw(names(model.actuated))
            m.position = draw(values(x0))
            m.velocity, m.acceleration, m.jerk, m.snap = (draw(rates(n, k)) for k in range(1, 5))
    elif service == 'forward_kinematics':
        r = srv.ForwardKinematics.Request()
        js = r.actuator_state
        js.name = draw(names(model.actuated))
        js.position = draw(values(nominal_actuators(model)))
        js.velocity = draw(st.one_of(st.just([]), rates(n, 1)))
    else:
        r = srv.InverseKinematics.Request()
        r.pose.pose = draw(poses(model))
        r.has_twist, r.has_acceleration = draw(st.booleans()), draw(st.booleans())
        r.twist = draw(task_rate(model, Twist, 1))
        r.acceleration = draw(task_rate(model, Accel, 2))
        # a seed: none, or the joints it takes, some of them, repeated or unknown, any values
        r.seed.name = draw(st.one_of(st.just([]), names(model.robot.seed_joints)))
        r.seed.position = draw(values(model.robot.seed_reference.tolist()))
    return r


# -- what every answer must satisfy ---------------------------------------------------------
def message_floats(msg):
    """Every float in a message (fields, nested messages, arrays and sequences)."""
    if isinstance(msg, float):
        yield msg
    elif isinstance(msg, (list, tuple, array.array, np.ndarray)):
        for v in msg:
            yield from message_floats(v)
    elif hasattr(msg, 'get_fields_and_field_types'):
        for field in msg.get_fields_and_field_types():
            yield from message_floats(getattr(msg, field))


def reported_positions(model, response):
    """(joint names, positions) pairs a successful response reports: the actuator positions
    (feedforward points, HOID actuator motion, IK actuator state) and the tree joints (IK and FK
    joint state)."""
    actuated = list(model.actuated)
    if hasattr(response, 'feedforward'):
        names = list(response.feedforward.joint_names) or actuated
        for p in response.feedforward.points:
            yield names, p.positions
    if hasattr(response, 'actuator_motion'):
        yield list(response.actuator_motion.name), response.actuator_motion.position
    for field in ('actuator_state', 'joint_state'):
        js = getattr(response, field, None)
        if js is not None and hasattr(js, 'position'):
            yield list(js.name), js.position


def check_answer(model, service, response):
    """The properties of every answer; returns the error code."""
    from pkm_dynamics_interfaces.msg import ErrorCodes
    code = response.error_code.val
    assert code != ErrorCodes.FAILURE, response.message
    if not response.success:
        assert code < 0 and response.message, (code, response.message)
        return code
    assert code == ErrorCodes.SUCCESS
    bad = [v for v in message_floats(response) if not math.isfinite(v)]
    assert not bad, f'{service}: success with non-finite values {bad[:5]}'
    # every reported joint within its limits (actuator strokes and every tree joint)
    tree = model.description.tree
    for names, positions in reported_positions(model, response):
        idx = [tree.joint_index(n) for n in names]
        x = np.asarray(positions)
        lo, hi = tree.lower[idx] - 1e-9, tree.upper[idx] + 1e-9
        out = [(n, v) for n, v, a, b in zip(names, x, lo, hi) if not a <= v <= b]
        assert not out, f'{service}: success with joints beyond their limits {out[:5]}'
    return code


def good_request_is_right(node):
    """A good inverse-dynamics request answers the core's numbers (no state leaks from a bad
    request into the next)."""
    from pkm_dynamics_interfaces import srv
    from trajectory_msgs.msg import JointTrajectoryPoint, MultiDOFJointTrajectoryPoint
    from geometry_msgs.msg import Transform, Twist
    model, robot = node.model, node.model.robot
    r = srv.InverseDynamics.Request()
    if model.kind == 'parallel':
        from pkm_dynamics.node.messages.conversions import matrix_quaternion
        C = robot.reference_pose
        t = Transform()
        t.translation.x, t.translation.y, t.translation.z = C[:3, 3].tolist()
        (t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w) = matrix_quaternion(
            C[:3, :3]).tolist()
        r.task_trajectory.points = [MultiDOFJointTrajectoryPoint(transforms=[t],
                                                                 velocities=[Twist()])]
        expected = robot.inverse_dynamics(C, np.zeros(robot.dof), np.zeros(robot.dof))
    else:
        x = np.array(nominal_state(model))
        xd = np.full(len(x), 0.05)
        r.trajectory.joint_names = list(model.actuated)
        r.trajectory.points = [JointTrajectoryPoint(positions=x.tolist(), velocities=xd.tolist())]
        expected = robot.inverse_dynamics(x, xd, np.zeros(len(x)))
    response = node.call('inverse_dynamics', r)
    assert response.success, response.message
    assert_array_equal(response.feedforward.points[0].effort, expected)


# -- the properties ---------------------------------------------------------------------------
@pytest.mark.parametrize('service', SERVICES)
@pytest.mark.parametrize('robot', ROBOTS)
def test_every_answer_is_a_named_outcome(nodes, robot, service):
    node = nodes(robot)

    @given(request=requests(node.model, service))
    def run(request):
        check_answer(node.model, service, node.call(service, request))
        good_request_is_right(node)
    run()


@pytest.mark.parametrize('robot', ('heavy_duty_4dof', 'planar_3rrr'))
def test_core_raises_a_named_error_or_returns_finite_numbers(nodes, robot):
    """The core alone: inverse and forward dynamics of generated input raise a
    PkmDynamicsError or return finite numbers."""
    from pkm_dynamics.core.errors import PkmDynamicsError
    model = nodes(robot).model
    robot_ = model.robot
    n = len(model.actuated)
    if model.kind == 'parallel':
        state = st.tuples(poses(model), rates(robot_.dof, 1), values([0.0] * n, 1e3))
    else:
        state = st.tuples(values(nominal_state(model)), rates(n, 1), rates(n, 2))

    @given(state=state)
    def run(state):
        from pkm_dynamics.node.messages.conversions import RequestError, pose_matrix
        a, b, c = state
        try:
            if model.kind == 'parallel':
                pose = pose_matrix(a)
                out = [robot_.inverse_dynamics(pose, b, np.zeros(len(b))),
                       robot_.forward_dynamics(pose, b, c)]
            else:
                out = [robot_.inverse_dynamics(a, b, c), robot_.forward_dynamics(a, b, c)]
        except (PkmDynamicsError, RequestError):
            return
        assert all(np.isfinite(o).all() for o in out), out
    run()
