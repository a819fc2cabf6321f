"""One robot interface for every robot kind (core/interface.py): module chains, other chains of
loops (the excavator) and parallel manipulators have the same method signatures, attributes and
result types; their solver options are fixed at construction; each method called on an example
of each kind returns the documented type and shape, single and batched."""
import dataclasses
import inspect
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core import IKSolution, Robot, SolverOptions, StateError, load_robot
from pkm_dynamics.core.hoid.higher_order import HigherOrderResult
from pkm_dynamics.core.description.payload import Payload, robot_with_payload

ROBOTS = Path(__file__).resolve().parents[2] / "robots"
METHODS = ("forward_dynamics", "inverse_dynamics", "joint_motion", "tree_state",
           "forward_kinematics", "inverse_kinematics", "higher_order_inverse_dynamics",
           "forward_dynamics_derivatives", "inverse_dynamics_derivatives", "joint_reactions", "simulate")


@pytest.fixture(scope="module", params=["heavy_duty_4dof", "excavator", "planar_3rrr"])
def robot(request):
    return load_robot(str(ROBOTS / f"{request.param}.urdf"))


def state(robot):
    """A state ``(x, xd, xdd)`` inside the robot's limits, in its own state space."""
    if robot.state_space == "actuator":
        x = np.asarray(robot.seed_reference) + 0.05
        return x, np.full(len(x), 0.1), np.full(len(x), 0.2)
    d = len(robot.task_space)
    return robot.task_pose(np.full(d, 0.01)), np.full(d, 0.05), np.full(d, 0.1)


def test_both_kinds_have_the_interface_signatures(robot):
    """Every method of the interface takes the interface's parameters (names, order, defaults);
    a kind's extra parameters come after them, keyword-only, with defaults."""
    assert isinstance(robot, Robot)
    for name in METHODS:
        expected = list(inspect.signature(getattr(Robot, name)).parameters.values())[1:]
        got = list(inspect.signature(getattr(robot, name)).parameters.values())
        head = [(p.name, p.kind, p.default) for p in got[:len(expected)]]
        assert head == [(p.name, p.kind, p.default) for p in expected], (robot.kind, name, head)
        for extra in got[len(expected):]:
            assert extra.kind in (extra.KEYWORD_ONLY, extra.VAR_KEYWORD), (robot.kind, name, extra)
            assert extra.kind == extra.VAR_KEYWORD or extra.default is not extra.empty


def test_attributes_say_the_kind_and_its_space(robot):
    assert (robot.kind, robot.state_space) in {("module_chain", "actuator"), ("loop_chain", "actuator"),
                                               ("parallel", "task")}
    assert robot.name == robot.description.name and robot.root_link == robot.description.tree.root_link
    assert isinstance(robot.options, SolverOptions)
    assert set(robot.actuated_joints) <= set(robot.tree_joints)
    assert set(robot.twist_components) <= {"wx", "wy", "wz", "vx", "vy", "vz"}
    if robot.state_space == "task":
        assert robot.twist_components == robot.task_space and robot.seed_joints == robot.tree_joints
        assert robot.end_effector == robot.description.platform.link
        assert len(robot.limb_names) == len(robot.limbs) == 3
    else:
        assert robot.task_space == () and len(robot.twist_components) == 6
        assert robot.seed_joints == robot.actuated_joints and robot.limb_names == (robot.name,)
    assert np.shape(robot.seed_reference) == (len(robot.seed_joints),)


def test_every_attribute_of_the_protocol_is_set(robot):
    """Each attribute the :class:`Robot` protocol declares is on every kind, with its type
    (what callers read without a ``getattr`` default)."""
    for name, kind in Robot.__annotations__.items():
        assert hasattr(robot, name), (robot.kind, name)
        if kind in ("bool", bool):
            assert isinstance(getattr(robot, name), bool), (robot.kind, name)
    assert robot.compiled_derivatives is (robot.kind == "module_chain")


def test_options_are_fixed_at_construction(robot):
    with pytest.raises(dataclasses.FrozenInstanceError):
        robot.options.tolerance = 1e-3
    with pytest.raises(AttributeError):
        robot.options = SolverOptions(tolerance=1e-3)
    if robot.kind == "parallel":                 # the solver settings are read-only views
        with pytest.raises(AttributeError):
            robot.tol = 1e-3
        assert robot.tol == robot.options.tolerance


@pytest.mark.parametrize("bad", [{"ik_scheme": "newton"}, {"tolerance": 0.0}, {"tolerance": np.nan},
                                 {"max_iterations": 0}, {"singularity_threshold": 0.5}])
def test_invalid_options_are_refused_by_name(bad):
    with pytest.raises(StateError, match=next(iter(bad))):
        SolverOptions(**bad)


def test_each_method_returns_the_documented_type_and_shape(robot):
    n, nq = len(robot.actuated_joints), len(robot.tree_joints)
    x, xd, xdd = state(robot)
    wrench = np.array([0.0, 0.0, 0.5, 1.0, 0.0, 0.0])
    u = robot.inverse_dynamics(x, xd, xdd, wrench=wrench)
    assert u.shape == (n,)
    # forward dynamics undoes it (the state's acceleration is xdd)
    np.testing.assert_allclose(robot.forward_dynamics(x, xd, u, wrench=wrench), xdd, rtol=1e-8, atol=1e-9)
    motion = robot.joint_motion(x, xd, xdd)
    assert isinstance(motion, IKSolution)
    assert motion.actuators.shape == motion.actuators_d.shape == motion.actuators_dd.shape == (n,)
    assert motion.q.shape == motion.qd.shape == motion.qdd.shape == (nq,)
    np.testing.assert_allclose(robot.inverse_dynamics(motion, xd, xdd, wrench=wrench), u, rtol=1e-12)
    q, qd, qdd = robot.tree_state(x, xd, xdd)
    np.testing.assert_allclose(np.stack([q, qd, qdd]), np.stack([motion.q, motion.qd, motion.qdd]),
                               rtol=1e-9, atol=1e-12)
    pose = robot.forward_kinematics(motion.actuators)
    assert pose.shape == (4, 4)
    sol = robot.inverse_kinematics(pose, initial=motion)
    assert isinstance(sol, IKSolution)
    assert sol.actuators.shape == (n,) and sol.q.shape == (nq,) and sol.actuators_d is None
    assert sol.iterations.shape == sol.condition.shape == (len(robot.limb_names),)
    np.testing.assert_allclose(sol.actuators, motion.actuators, atol=1e-8)
    hoid = robot.higher_order_inverse_dynamics(x, xd, xdd, 0 * xd, 0 * xd)
    assert isinstance(hoid, HigherOrderResult) and hoid.u.shape == hoid.du.shape == (n,)
    np.testing.assert_allclose(hoid.u, robot.inverse_dynamics(x, xd, xdd), rtol=1e-8)


def test_a_leading_axis_batches_every_state_method(robot):
    n, nq = len(robot.actuated_joints), len(robot.tree_joints)
    x, xd, xdd = state(robot)
    X, XD, XDD = (np.stack([a, a]) for a in (x, xd, xdd))
    U = robot.inverse_dynamics(X, XD, XDD)
    assert U.shape == (2, n)
    assert robot.forward_dynamics(X, XD, U).shape == XDD.shape
    assert all(a.shape == (2, nq) for a in robot.tree_state(X, XD, XDD))
    actuators = robot.joint_motion(x).actuators
    assert robot.forward_kinematics(np.stack([actuators, actuators])).shape == (2, 4, 4)


def test_a_payload_robot_keeps_every_solver_option():
    """robot_with_payload builds the loaded robot with the same options (it dropped the loop
    singularity threshold before)."""
    options = SolverOptions(ik_scheme="compound", tolerance=1e-11, max_iterations=40,
                            singularity_threshold=2e5, loop_singularity_threshold=5.0)
    for name in ("planar_3rrr", "linear_4bar_1dof"):
        robot = load_robot(str(ROBOTS / f"{name}.urdf"), options=options)
        loaded = robot_with_payload(robot, Payload(1.0))
        assert loaded.options == options and loaded.kind == robot.kind
        assert loaded.description.tree.total_mass == pytest.approx(robot.description.tree.total_mass + 1.0)


def test_module_chain_inverse_kinematics_takes_its_options():
    """The chain's inverse kinematics runs with the robot's tolerance and iteration limit."""
    from pkm_dynamics.core import ConvergenceError
    path = str(ROBOTS / "heavy_duty_4dof.urdf")
    robot = load_robot(path)
    pose = robot.forward_kinematics([0.3, 0.2, 0.25, 0.4])
    sol = robot.inverse_kinematics(pose, search=False)
    assert sol.iterations[0] > 1 and sol.residual <= robot.options.tolerance
    with pytest.raises(ConvergenceError):
        load_robot(path, options=SolverOptions(max_iterations=1)).inverse_kinematics(pose, search=False)
    loose = load_robot(path, options=SolverOptions(tolerance=1e-3)).inverse_kinematics(pose, search=False)
    assert 1e-10 < loose.residual <= 1e-3
