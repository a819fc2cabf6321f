"""The regressor of every robot kind (issue 30, item 1): ``Y pi + u_0`` equals the public inverse
dynamics (paper 000's analytic recursion for module chains, paper 001 eq. 45 for parallel robots)
at random states, with and without an end-effector / platform wrench; the spanning tree's
regressor and the parameter vector against Pinocchio (``pin.computeJointTorqueRegressor``,
``pin.Inertia.toDynamicParameters``), a route that shares no code with the package."""
import os

import numpy as np
import pinocchio as pin     # a test dependency: never skipped
import pytest

from pinocchio_loops import PinocchioLoops
from pkm_dynamics.core.errors import StateError
from pkm_dynamics.core.identification import (body_parameters, friction_parameter_names, friction_parameters,
                                              inertia_of_parameters, parameter_names, regressor,
                                              robot_parameters, tree_regressor)
from pkm_dynamics.core.robot import load_robot
from pkm_dynamics.core.spatial.se3 import spatial_inertia
from pkm_dynamics.testing import chain_states, frictionless

ROBOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "robots")
CHAINS = ("heavy_duty_4dof", "linear_4bar_1dof")
#: parallel robots and the half-width of their random task displacements about the reference
PARALLEL = {"gough_stewart_6ups": 0.05, "irsbot2": 0.1, "planar_3rrr": 0.1}


def _text(name):
    with open(os.path.join(ROBOTS, f"{name}.urdf"), encoding="utf-8") as f:
        return f.read()


def _robot(name):
    return load_robot(os.path.join(ROBOTS, f"{name}.urdf"))


def _rel(a, b):
    return np.abs(np.asarray(a) - b).max() / np.abs(b).max()


def task_states(robot, rng, count, size):
    """Random reachable task states: poses about the reference, twists, accelerations, wrenches."""
    poses = np.stack([robot.task_pose(rng.uniform(-size, size, robot.dof)) for _ in range(count)])
    return (poses, 0.3 * rng.normal(size=(count, robot.dof)), rng.normal(size=(count, robot.dof)),
            10.0 * rng.normal(size=(count, 6)))


def test_body_parameters_follow_pinocchio():
    """The ten parameters of a body and back: Pinocchio's ``toDynamicParameters`` order and values."""
    rng = np.random.default_rng(3)
    for _ in range(5):
        m, c = rng.uniform(0.5, 5.0), rng.normal(size=3)
        A = rng.normal(size=(3, 3))
        I_c = A @ A.T + np.eye(3)
        pi = body_parameters(spatial_inertia(m, c, I_c))
        np.testing.assert_allclose(pi, pin.Inertia(m, c, I_c).toDynamicParameters(), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(inertia_of_parameters(pi), spatial_inertia(m, c, I_c), rtol=0, atol=1e-13)


@pytest.mark.parametrize("name", ["heavy_duty_4dof", "gough_stewart_6ups"])
def test_tree_regressor_equals_pinocchio(name):
    """``Y_tree`` against ``pin.computeJointTorqueRegressor`` (rows and column blocks mapped by
    joint name) at random tree states, gravity of the robot."""
    robot = _robot(name)
    tree = robot.description.tree
    with open(os.path.join(ROBOTS, f"{name}.urdf"), encoding="utf-8") as f:
        pl = PinocchioLoops(f.read(), tree.joint_names, tree.gravity)
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.normal(size=(3, 4, tree.nq))
    Y = tree_regressor(tree, q, qd, qdd)
    cols = np.concatenate([10 * (pl.model.getJointId(j) - 1) + np.arange(10) for j in tree.joint_names])
    for k in range(len(q)):
        Yp = pin.computeJointTorqueRegressor(pl.model, pl.data, pl.q_pin(pl.to_pin(q[k])), pl.to_pin(qd[k]),
                                             pl.to_pin(qdd[k]))
        expected = Yp[pl.perm][:, cols]
        assert _rel(Y[k], expected) <= 1e-12
    assert len(parameter_names(robot)) == len(robot_parameters(robot)) == 10 * tree.nq


@pytest.mark.parametrize("name", CHAINS)
def test_chain_regressor_reproduces_inverse_dynamics(name):
    robot = _robot(name)
    rng = np.random.default_rng(7)
    x, xd, xdd, w = chain_states(robot, rng, batch=20, fractions=(0.05, 0.85))   # lift singular at 0.553 m
    pi = robot_parameters(robot)
    free = regressor(robot, x, xd, xdd)
    assert _rel(free.Y @ pi + free.u0, robot.inverse_dynamics(x, xd, xdd)) <= 1e-10
    # u0 without a wrench is the joints' friction (the examples carry the HIAB cylinders' curves):
    # G^T tau_f, against the friction-free robot's inverse dynamics, which is Y pi alone
    bare = load_robot(frictionless(_text(name)))
    assert _rel(free.Y @ pi, bare.inverse_dynamics(x, xd, xdd)) <= 1e-10
    assert (robot.description.friction is not None) == bool(free.u0.any())
    loaded = regressor(robot, x, xd, xdd, w)
    assert _rel(loaded.Y @ pi + loaded.u0, robot.inverse_dynamics(x, xd, xdd, w)) <= 1e-10
    one = regressor(robot, x[0], xd[0], xdd[0])
    assert one.Y.shape == (1, robot.n, pi.size)
    np.testing.assert_allclose(one.Y[0], free.Y[0], rtol=0, atol=1e-12 * np.abs(free.Y).max())


@pytest.mark.parametrize("name", sorted(PARALLEL))
def test_parallel_regressor_reproduces_inverse_dynamics(name):
    robot = _robot(name)
    rng = np.random.default_rng(9)
    P, V, A, W = task_states(robot, rng, 6, PARALLEL[name])
    pi = robot_parameters(robot)
    R = regressor(robot, P, V, A, W)
    assert _rel(R.Y @ pi + R.u0, robot.inverse_dynamics(P, V, A, W)) <= 1e-10
    assert _rel(regressor(robot, P, V, A).Y @ pi, robot.inverse_dynamics(P, V, A)) <= 1e-10


def test_regressor_refuses_a_state_that_is_not_finite():
    robot = _robot("linear_4bar_1dof")
    with pytest.raises(StateError, match="xd is not finite at sample 1"):
        regressor(robot, [[0.1], [0.2]], [[0.0], [np.nan]], [[0.0], [0.0]])


@pytest.mark.parametrize("name", ["heavy_duty_4dof", "irsbot2"])
def test_compiled_tree_regressor_equals_the_numpy_route(name):
    from pkm_dynamics.core.identification.tree_regressor import reference_tree_regressor
    tree = _robot(name).description.tree
    q, qd, qdd = np.random.default_rng(2).normal(size=(3, 6, tree.nq))
    Y = tree_regressor(tree, q, qd, qdd)
    assert _rel(Y, reference_tree_regressor(tree, q, qd, qdd)) <= 1e-13
    g = np.array([0.5, -1.0, -9.0])
    reference = reference_tree_regressor(tree, q[:1], qd[:1], qdd[:1], g)[0]
    assert _rel(tree_regressor(tree, q[0], qd[0], qdd[0], g), reference) <= 1e-13


@pytest.mark.parametrize("name", sorted(PARALLEL))
def test_compiled_task_embedding_equals_the_numpy_route(name):
    """``G`` of the compiled limb kernels (eq. 28 per sample and limb) against the numpy
    ``limb_jacobians`` route at the same inverse kinematics; the embedding leaves the limbs'
    scratch to the next rates: the inverse dynamics of an IK solution taken before it is unchanged."""
    from pkm_dynamics.core.identification.regressor import reference_task_embedding, task_embedding
    robot = _robot(name)
    P, V, A, _ = task_states(robot, np.random.default_rng(4), 5, PARALLEL[name])
    sol = robot.inverse_kinematics(P, V, A)
    G = task_embedding(robot, sol.limb_theta, len(P))
    reference = reference_task_embedding(robot, sol.limb_theta, len(P))
    assert np.abs(G - reference).max() <= 1e-12 * max(1.0, np.abs(reference).max())
    one = robot.inverse_kinematics(P[0])         # its rates and limb forces: from the scratch
    u = robot.inverse_dynamics(one, V[0], A[0])
    task_embedding(robot, sol.limb_theta, len(P))
    assert _rel(robot.inverse_dynamics(one, V[0], A[0]), u) <= 1e-13


def test_chain_of_loops_regressor_reproduces_its_inverse_dynamics():
    """The crane as one hybrid limb (constraint embedding, paper 001: ``LimbChainRobot``, actuator
    space): ``Y pi + u_0`` equals its own inverse dynamics."""
    from pkm_dynamics.core.pkm.limb_chain import LimbChainRobot
    limb_chain = LimbChainRobot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))
    x, xd, xdd, w = chain_states(_robot("heavy_duty_4dof"), np.random.default_rng(3), batch=5,
                                 fractions=(0.05, 0.85))
    R = regressor(limb_chain, x, xd, xdd, w)
    u = np.stack([limb_chain.inverse_dynamics(*state) for state in zip(x, xd, xdd, w)])
    assert _rel(R.Y @ robot_parameters(limb_chain) + R.u0, u) <= 1e-10


def test_friction_coefficients_are_parameters_of_the_regressor():
    """``friction_parameters=True``: the friction coefficients (F_C, b, F_S) of the joints that
    have friction (the crane's cylinders and loop pivots) are columns of ``Y`` after the
    inertial ones and ``u0`` holds none of it: ``Y [pi, phi]`` is the public inverse dynamics,
    and the friction columns alone are what the friction adds (the robot's inverse dynamics less
    that of the same description without friction)."""
    robot = _robot("heavy_duty_4dof")
    rng = np.random.default_rng(11)
    x, xd, xdd, _ = chain_states(robot, rng, batch=20, fractions=(0.05, 0.85))
    pi, phi = robot_parameters(robot), friction_parameters(robot)
    assert phi.size == len(friction_parameter_names(robot)) > 0 and phi.any()
    R = regressor(robot, x, xd, xdd, friction_parameters=True)
    assert R.Y.shape[-1] == pi.size + phi.size and not R.u0.any()
    u = robot.inverse_dynamics(x, xd, xdd)
    assert _rel(R.Y @ np.concatenate([pi, phi]), u) <= 1e-10
    bare = load_robot(frictionless(_text("heavy_duty_4dof")))
    assert _rel(R.Y[..., pi.size:] @ phi, u - bare.inverse_dynamics(x, xd, xdd)) <= 1e-9
