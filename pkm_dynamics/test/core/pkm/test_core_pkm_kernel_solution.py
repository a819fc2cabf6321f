"""The IK solution of a reference the compiled kernel completed (``KernelIKSolution``: fields
made on first read) against the numpy reference route (``robot.compiled = False``: every field
made at once), field by field, with every field first read only after further calls of the
kernel have overwritten the thread's scratch it was made from."""
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core.pkm.parallel_robot import ParallelRobot
from pkm_dynamics.core.pkm.pkm_solution import KernelIKSolution, PkmIKSolution

ROBOTS = Path(__file__).resolve().parents[3] / "robots"
GS = str(ROBOTS / "gough_stewart_6ups.urdf")
ARRAYS = ("pose", "actuators", "q", "J_IK", "condition", "residual", "qd", "qdd", "actuators_d", "actuators_dd",
          "flat")
LISTS = ("limb_theta", "limb_thetad", "limb_thetadd")


def _rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.abs(a - b).max() / max(1.0, np.abs(b).max())


def _poses(robot, n):
    rng = np.random.default_rng(5)
    x = np.zeros(robot.dof)
    for _ in range(n):
        x = x + 0.004 * rng.normal(size=robot.dof)
        yield robot.task_pose(x), rng.normal(size=robot.dof), rng.normal(size=robot.dof)


@pytest.fixture(scope="module")
def robots():
    robot = ParallelRobot(GS)
    ref = ParallelRobot(robot.description)
    ref.compiled = False
    return robot, ref


@pytest.mark.parametrize("level", [0, 1, 2])
@pytest.mark.parametrize("scheme", ["nested", "compound"])
def test_fields_made_on_access_are_the_reference_routes(robots, scheme, level):
    robot, ref = robots
    sols, refs = [], []
    sol = sol_ref = None
    for pose, V, A in _poses(robot, 5):
        args = (pose, *(V, A)[:level])
        sol = robot.inverse_kinematics(*args, initial=sol, scheme=scheme)
        sol_ref = ref.inverse_kinematics(*args, initial=sol_ref, scheme=scheme)
        assert type(sol) is KernelIKSolution
        sols.append(sol)
        refs.append(sol_ref)
    for sol, sol_ref in zip(sols, refs):          # read after the later calls
        assert {f.name for f in fields(sol)} == {f.name for f in fields(PkmIKSolution)}
        for name in ARRAYS:
            a, b = getattr(sol, name), getattr(sol_ref, name)
            if b is None:
                assert a is None, name
            else:
                assert np.shape(a) == np.shape(b) and _rel(a, b) <= 1e-10, name
        assert sol.residual <= 1e-10 and sol_ref.residual <= 1e-10
        for name in LISTS:
            a, b = getattr(sol, name), getattr(sol_ref, name)
            assert (a is None) == (b is None), name
            for x, y in zip(a or [], b or []):
                assert _rel(x, y) <= 1e-10, name
        np.testing.assert_array_equal(sol.iterations, sol_ref.iterations)
        assert sol.iterations.dtype.kind == "i"
        assert [[list(s) for s in limb] for limb in sol.inner] == [[list(s) for s in limb] for limb in sol_ref.inner]
        for l in range(len(robot.limbs)):
            assert _rel(sol.jacobians[l].K, sol_ref.jacobians[l].K) <= 1e-10
            assert _rel(sol.limb_states[l][0], sol_ref.limb_states[l][0]) <= 1e-10
        assert (sol.efforts is None) == (level < 2) and (sol.limb_forces is None) == (level < 2)


def test_a_field_assigned_is_the_solutions_own(robots):
    robot, _ = robots
    pose, V, A = next(_poses(robot, 1))
    sol = robot.inverse_kinematics(pose, V, A)
    q = sol.q
    assert sol.q is q                              # made once
    sol.q = np.zeros_like(q)
    np.testing.assert_array_equal(sol.q, 0.0)
    assert robot.inverse_kinematics(pose, V, A, initial=sol).q.shape == q.shape


def test_reference_motion_of_the_serial_legs(robots):
    """``reference_motion`` of the Gough-Stewart platform (legs without loops whose rate map is
    ``K`` itself: the reference kernel's ``serial_limb_rates_rnea``, no least-squares refinement)
    along a warm-started stream, then from the reference configuration to a far pose (the kernel
    hands the continuation over to the reference route): the numbers of ``inverse_kinematics``
    then ``inverse_dynamics`` from the same start (the same kernel: bitwise), and of the numpy
    reference route (refined rates, its own ID, ``compiled = False``) to 1e-12 relative; every
    array a motion returned keeps its numbers after the later calls (fresh, not the thread's
    scratch)."""
    robot, ref = robots
    motions, kept = [], []
    warm = sol = None
    stream = list(_poses(robot, 6))
    far = robot.task_pose(np.array([0.0, 0.0, 0.8, 0.0, 0.0, 0.0]))   # a yaw of 0.8 rad: beyond a direct step
    for k, (pose, V, A) in enumerate(stream + [(far, *stream[-1][1:])]):
        if k == len(stream):
            warm = sol = None                    # the far pose from the reference configuration
        motion = robot.reference_motion(pose, V, A, warm)
        sol = robot.inverse_kinematics(pose, V, A, initial=sol)
        u = robot.inverse_dynamics(sol, V, A)
        m_ref = ref.reference_motion(pose, V, A, None if warm is None else warm.copy())
        for got, want, expected in zip(motion[:4], (sol.actuators, sol.actuators_d, sol.actuators_dd, u), m_ref[:4]):
            np.testing.assert_array_equal(got, want)
            assert _rel(got, expected) <= 1e-12
        assert motion.condition == np.max(sol.condition)
        assert abs(motion.condition - m_ref.condition) <= 1e-9 * m_ref.condition
        np.testing.assert_array_equal(motion.tree_q(), sol.q)
        motions.append(motion)
        kept.append([np.array(a, copy=True) for a in (*motion[:4], motion.theta)])
        warm = motion.theta
    for motion, copies in zip(motions, kept):     # read after the later calls
        for got, want in zip((*motion[:4], motion.theta), copies):
            np.testing.assert_array_equal(got, want)
