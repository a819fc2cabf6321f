"""A parallel robot's higher-order inverse dynamics in one kernel call
(``ParallelRobot.higher_order_inverse_dynamics``, :mod:`pkm_dynamics.core.hoid.hoid_robot_kernels`):
paper 002's closure and recursion with the checks of the robot's inverse kinematics inside the
kernel; a sample it refuses goes through the reference route
(:func:`pkm_dynamics.core.hoid.higher_order.reference_route`: paper 001's inverse kinematics
with every check, then the recursion), which words the refusal.

Independent checks:
* the robot method against the reference route and the Taylor route, one sample and a batch,
  along the example paths, from warm starts and from the reference configuration;
* an admissible sample runs the kernel alone (the reference inverse kinematics is not run);
* every refusal of the reference route (a leg beyond its stroke, a pose beyond the joint
  limits, input and output singularities, a rotation that is not one, a pose off the task
  manifold, non-finite input, wrong shapes) raises the same exception with the same message;
* the working mode: a start near another working mode stays there, a start beyond a direct
  step gives the reference route's continuation.
"""
import os

import numpy as np
import pytest

from pkm_dynamics.core.errors import SingularityError, StateError
from pkm_dynamics.core import status
from pkm_dynamics.core.hoid.higher_order import reference_route
from pkm_dynamics.core.hoid.hoid_model import hoid_full_call
from pkm_dynamics.core.hoid.hoid_motions import gough_stewart_roll, pick_and_place
from pkm_dynamics.core.interface import SolverOptions
from pkm_dynamics.core.pkm.parallel_robot import ParallelRobot
from working_modes import other_working_mode

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "robots")
CASES = {"gsp": ("gough_stewart_6ups", gough_stewart_roll, (0.13, 0.3, 0.61, 0.87)),
         "rrr": ("planar_3rrr", pick_and_place, (0.11, 0.23, 0.33, 0.62))}
#: agreement of two closures from different starts, each to a pose error of 1e-12 (the limb
#: Newton's tolerance; as the full call against the numpy route in test_core_hoid_compiled)
CLOSURE = 1e-10
KEYS = ("u", "du", "ddu", "tree_motion", "motor_position", "motor_velocity", "motor_acceleration", "motor_torque")


def rel(a, b):
    return np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(np.linalg.norm(b), 1e-300)


def _robot(name, **options):
    return ParallelRobot(os.path.join(ROBOTS, name + ".urdf"), options=SolverOptions(**options) if options else None)


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    name, motion, times = CASES[request.param]
    return _robot(name), motion, times


def _agree(new, ref, tol):
    for key in KEYS:
        if ref[key] is not None:
            assert rel(new[key], ref[key]) < tol, key


def _kernel_status(robot, C, Vt, q):
    """The robot kernel's status of one sample (C (4, 4), Vt (4, D)) from ``q``."""
    status, _, _, _ = hoid_full_call(robot.hoid_model.kernel, np.asarray(C)[None], np.asarray(Vt)[None], q,
                                     robot.tree.gravity, threshold=robot.singularity_threshold or -1.0)
    return int(status[0])


def test_robot_method_equals_reference_and_taylor_routes(case):
    robot, motion, times = case
    q = None                                        # the first sample from the reference configuration
    for t in times[0] + 0.01 * np.arange(6):        # then each from the previous one, 10 ms apart
        C, Vt = motion(t)
        assert _kernel_status(robot, C, Vt, np.zeros(robot.tree.nq) if q is None else q) == status.OK
        new = robot.higher_order_inverse_dynamics(C, *Vt, q_guess=q)
        _agree(new, reference_route(robot, C, tuple(Vt), q_guess=q), CLOSURE)
        taylor = reference_route(robot, C, tuple(Vt), method="taylor", q_guess=q)
        for key in ("u", "du", "ddu"):
            assert rel(new[key], taylor[key]) < 1e-10
        q = new.tree_motion[0]
    poses, V = zip(*(motion(t) for t in np.linspace(times[0], times[-1], 9)))
    poses, V = np.array(poses), tuple(np.moveaxis(np.array(V), 1, 0))
    batch = robot.higher_order_inverse_dynamics(poses, *V)
    _agree(batch, reference_route(robot, poses, V), CLOSURE)
    as_lists = robot.higher_order_inverse_dynamics(poses[3].tolist(), *[v[3].tolist() for v in V],
                                                   q_guess=batch.tree_motion[2, 0].tolist())
    _agree(as_lists, reference_route(robot, poses[3], tuple(v[3] for v in V), q_guess=batch.tree_motion[2, 0]),
           CLOSURE)


def test_an_admissible_sample_runs_the_kernel_alone(case, monkeypatch):
    """The robot method ran the PKM inverse kinematics (``admissible_task_state``) before the
    kernel, which closed the loops again: now one kernel call with the checks inside."""
    robot, motion, times = case

    def refuse(*args, **kw):
        raise AssertionError("the reference inverse kinematics ran")

    monkeypatch.setattr(robot, "admissible_task_state", refuse)
    C, Vt = motion(times[1])
    q = robot.higher_order_inverse_dynamics(C, *Vt).tree_motion[0]          # one float sample
    robot.higher_order_inverse_dynamics(C, *Vt, q_guess=q)
    robot.higher_order_inverse_dynamics(C[None], *Vt[:, None], q_guess=q)  # a batch
    robot.higher_order_inverse_dynamics(C.tolist(), *Vt.tolist())          # lists


def _same_refusal(robot, x, ders, kind, q_guess=None):
    with pytest.raises(kind) as new:
        robot.higher_order_inverse_dynamics(x, *ders, q_guess=q_guess)
    with pytest.raises(kind) as ref:
        reference_route(robot, x, tuple(ders), q_guess=q_guess)
    assert type(new.value) is type(ref.value)
    assert str(new.value) == str(ref.value)
    return str(new.value)


def test_every_refusal_of_the_reference_route_is_raised_alike():
    robot = _robot("gough_stewart_6ups")
    C, Vt = gough_stewart_roll(0.3)
    q = robot.higher_order_inverse_dynamics(C, *Vt).tree_motion[0]
    # limits: a leg beyond its stroke (+-0.08 m), one sample and the second row of a batch
    up = C.copy()
    up[2, 3] += 0.1
    assert _kernel_status(robot, up, Vt, q) == status.STROKE
    msg = _same_refusal(robot, up, Vt, StateError, q)
    assert "joint 'leg" in msg and "outside its limits" in msg
    _same_refusal(robot, np.array([C, up]), np.repeat(Vt[:, None], 2, axis=1), StateError, q)
    flat = np.eye(4)                                # the platform in the base plane: legs flat
    assert "outside its limits" in _same_refusal(robot, flat, np.zeros((4, 6)), StateError)
    # non-finite input, named
    for k in range(4):
        bad = Vt.copy()
        bad[k, 1] = np.nan
        assert _same_refusal(robot, C, bad, StateError, q).split()[0] == ("xd", "xdd", "xddd", "xdddd")[k]
    nan = C.copy()
    nan[1, 3] = np.inf
    _same_refusal(robot, nan, Vt, StateError, q)
    # a rotation that is not one; wrong shapes
    skew = C.copy()
    skew[:3, :3] *= 1.01
    assert _kernel_status(robot, skew, Vt, q) == status.BAD_POSE
    assert "orthonormal" in _same_refusal(robot, skew, Vt, StateError, q)
    _same_refusal(robot, C[:3, :3], Vt, StateError, q)
    _same_refusal(robot, C, Vt[:, :5], StateError, q)
    _same_refusal(robot, C, Vt, StateError, q[:-1])


def test_singular_poses_are_refused_naming_the_limbs():
    """Thresholds below the limbs' kappa(F) (input singularity) and between them and
    kappa(J_IK) (output singularity), as ``test_core_pkm_fidelity``."""
    robot = _robot("gough_stewart_6ups", singularity_threshold=1e6)
    pose = robot.task_pose([0.02, -0.03, 0.05, 0.01, -0.02, 0.03])
    s = robot.inverse_kinematics(pose)
    kJ = np.linalg.cond(s.J_IK)
    z = np.zeros((4, 6))
    robot.higher_order_inverse_dynamics(pose, *z)
    output = _robot("gough_stewart_6ups", singularity_threshold=0.9 * kJ)
    assert _kernel_status(output, pose, z, s.q) == status.ILL_CONDITIONED
    msg = _same_refusal(output, pose, z, SingularityError, s.q)
    assert "kappa(J_IK)" in msg and "output singularity" in msg
    inputs = _robot("gough_stewart_6ups", singularity_threshold=0.5 * s.condition.min())
    assert "kappa(F)" in _same_refusal(inputs, pose, z, SingularityError, s.q)


def test_pose_off_the_task_manifold_is_refused():
    robot = _robot("planar_3rrr")
    C, Vt = pick_and_place(0.2)
    off = C.copy()
    off[2, 3] += 0.05
    assert "off the task manifold" in _same_refusal(robot, off, Vt, StateError)


def test_the_working_mode_of_the_start():
    """planar_3rrr: a start near another working mode stays there (elbows flipped: other
    actuator angles), as the reference route; a start beyond a direct step (every joint of the
    reference configuration to a platform turned by 0.9 rad) is the reference route's
    continuation along the task path."""
    robot = _robot("planar_3rrr")
    pose = robot.task_pose([0.02, -0.01, 0.1])
    other, _ = other_working_mode(robot, pose)
    seed = other.q + np.random.default_rng(1).uniform(-0.05, 0.05, robot.tree.nq)
    z = np.zeros((4, 3))
    assert _kernel_status(robot, pose, z, seed) == status.OK
    new = robot.higher_order_inverse_dynamics(pose, *z, q_guess=seed)
    _agree(new, reference_route(robot, pose, tuple(z), q_guess=seed), CLOSURE)
    assert np.abs(new.tree_motion[0] - other.q).max() < 1e-9
    turned = robot.task_pose([0.0, 0.0, 0.9])
    start = np.zeros(robot.tree.nq)
    assert _kernel_status(robot, turned, z, start) == status.FAR_STEP
    new = robot.higher_order_inverse_dynamics(turned, *z)
    _agree(new, reference_route(robot, turned, tuple(z)), CLOSURE)
