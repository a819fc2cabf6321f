"""Compiled higher-order inverse dynamics (paper 002 kernels, ``core/hoid/hoid_*``).

Independent checks only:
* the recursion kernel against the numpy recursion (:mod:`pkm_dynamics.core.hoid_recursion`)
  at the same closed configuration, and against the Taylor route (to 1e-10, as the numpy
  recursion is checked in ``test_core_hoid.py``);
* the full call (limb closure + recursion + SEA, one kernel call per batch) against the numpy
  route row by row from the same warm starts, and its limb closure against the whole-tree
  Newton closure of the general route;
* refusals (a leg beyond its stroke, a Newton that does not converge, a singular limb) raise
  the same named errors with the same messages as the numpy route;
* one scratch per thread: concurrent calls give the single-thread numbers.
"""
import os
import threading

import numpy as np
import pytest
import scipy.optimize

from pkm_dynamics.core.hoid import jet_dynamics as JD
from pkm_dynamics.core.status import NO_CONVERGENCE, OK, SINGULAR
from pkm_dynamics.core.hoid.hoid_model import hoid_full_call, hoid_recursion
from pkm_dynamics.core.description.robot_description import parse_description
from pkm_dynamics.core.errors import ConvergenceError, SingularityError, StateError
from pkm_dynamics.core.hoid.higher_order import _one, higher_order_inverse_dynamics, hoid_model
from pkm_dynamics.core.hoid.hoid_motions import gough_stewart_roll, pick_and_place
from pkm_dynamics.core.hoid.hoid_recursion import (fourth_order_kinematics, second_order_inverse_dynamics,
                                                   tree_motion_from_limbs)
from pkm_dynamics.core.hoid.sea import sea_feedforward
from pkm_dynamics.core.hoid.simple_limb import _platform_jacobian, limb_poses, simple_limb_inverse_kinematics
from pkm_dynamics.core.spatial.se3 import pose_inv

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "robots")
CASES = {"gsp": ("gough_stewart_6ups", gough_stewart_roll, (0.13, 0.3, 0.61, 0.87)),
         "rrr": ("planar_3rrr", pick_and_place, (0.11, 0.23, 0.33, 0.62))}


def rel(a, b):
    return np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(np.linalg.norm(b), 1e-300)


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    name, motion, times = CASES[request.param]
    return parse_description(os.path.join(ROBOTS, name + ".urdf")), motion, times


def test_recursion_kernel_equals_numpy_recursion_and_taylor_route(case):
    desc, motion, times = case
    m = hoid_model(desc)
    for t in times:
        C, Vt = motion(t)
        q = simple_limb_inverse_kinematics(m.limbs, C)
        kin = fourth_order_kinematics(m.limbs, q, Vt)
        U_np = second_order_inverse_dynamics(m.limbs, kin)
        status, Q, U = hoid_recursion(m.kernel, q, Vt, desc.tree.gravity)
        assert status[0] == OK
        taylor = higher_order_inverse_dynamics(desc, C, *Vt, method="taylor", q_guess=q)
        for k, key in enumerate(("u", "du", "ddu")):
            assert rel(U[k], U_np[k]) < 1e-11, (key, t)
            assert rel(U[k], taylor[key]) < 1e-10, (key, t)
        for order in range(5):
            assert rel(Q[order], tree_motion_from_limbs(m.limbs, kin)[order]) < 1e-11, (order, t)
            assert rel(Q[order], taylor.tree_motion[order]) < 1e-10, (order, t)


def test_full_call_equals_numpy_route_single_and_batched(case):
    """One kernel call for the batch (rows warm-started from the previous row) against the
    numpy route (limb Newton, recursion, SEA) from the same starts, and single calls."""
    desc, motion, times = case
    m = hoid_model(desc)
    poses, V = zip(*(motion(t) for t in times))
    V = np.array(V)
    q0 = simple_limb_inverse_kinematics(m.limbs, poses[0])
    r = higher_order_inverse_dynamics(desc, np.array(poses), *np.moveaxis(V, 1, 0), q_guess=q0)
    assert r.method == "recursive"
    guess = q0
    for k in range(len(times)):
        U, qder = _one(m, poses[k], V[k], "recursive", guess, None)
        guess = qder[0]
        for j, key in enumerate(("u", "du", "ddu")):
            assert rel(r[key][k], U[j]) < 1e-10, (key, k)
        assert rel(r.tree_motion[k], qder) < 1e-10
        act = m.jets.actuated
        ff = sea_feedforward(qder[0, act], qder[1, act], qder[2, act], U[0], U[1], U[2], m.K, m.Mm)
        for key, value in ff.items():
            assert rel(r[key][k], value) < 1e-10, (key, k)
        one = higher_order_inverse_dynamics(desc, poses[k], *V[k], q_guess=r.tree_motion[k - 1, 0] if k else q0)
        assert rel(one.ddu, r.ddu[k]) < 1e-10 and one.u.shape == (m.kernel.na,)


def test_kernel_limb_closure_equals_general_loop_closure(case):
    desc, motion, times = case
    m = hoid_model(desc)
    prev = simple_limb_inverse_kinematics(m.limbs, motion(times[0])[0])
    for t in times:
        C, Vt = motion(t)
        q = higher_order_inverse_dynamics(desc, C, *Vt, q_guess=prev).tree_motion[0]
        assert rel(q, JD.close_loops(m.jets, C)) < 1e-10, t
        prev = q


def _same_refusal(call_compiled, call_numpy, kind):
    with pytest.raises(kind) as compiled:
        call_compiled()
    with pytest.raises(kind) as numpy_route:
        call_numpy()
    assert type(compiled.value) is type(numpy_route.value)
    assert str(compiled.value) == str(numpy_route.value)
    return str(compiled.value)


def test_refusals_are_the_numpy_routes():
    desc = parse_description(os.path.join(ROBOTS, "gough_stewart_6ups.urdf"))
    m = hoid_model(desc)
    C, Vt = gough_stewart_roll(0.3)
    q = simple_limb_inverse_kinematics(m.limbs, C)
    # a pose the legs reach only beyond their strokes (+-0.08 m): 0.1 m higher
    up = C.copy()
    up[2, 3] += 0.1
    msg = _same_refusal(lambda: higher_order_inverse_dynamics(desc, up, *Vt, q_guess=q),
                        lambda: _one(m, up, Vt, "recursive", q, None), StateError)
    assert "stroke" in msg and "joint 'leg" in msg
    # the second row of a batch: the numpy route starts from the first row's solution
    batch = np.array([C, up])
    with pytest.raises(StateError, match="stroke"):
        higher_order_inverse_dynamics(desc, batch, *np.repeat(Vt[:, None], 2, axis=1), q_guess=q)
    # a pose 5 m away: the limb Newton still converges, to legs far beyond their strokes
    far = C.copy()
    far[0, 3] += 5.0
    _same_refusal(lambda: higher_order_inverse_dynamics(desc, far, *Vt, q_guess=q),
                  lambda: _one(m, far, Vt, "recursive", q, None), StateError)


def test_limb_newton_that_does_not_converge_names_the_limb():
    """One Newton step from the reference configuration to a rolled pose: the kernel reports
    NO_CONVERGENCE at limb 0 (the first it closes), the numpy closure raises ConvergenceError."""
    desc = parse_description(os.path.join(ROBOTS, "gough_stewart_6ups.urdf"))
    m = hoid_model(desc)
    C, Vt = gough_stewart_roll(0.3)
    q0 = np.zeros(desc.tree.nq)
    status, _, _, _ = hoid_full_call(m.kernel, C[None], Vt[None], q0, desc.tree.gravity, max_iter=1)
    assert status[0] == NO_CONVERGENCE and status[1] == 0 and status[2] == 0
    with pytest.raises(ConvergenceError, match="did not converge in 1 iterations"):
        simple_limb_inverse_kinematics(m.limbs, C, q_guess=q0, max_iter=1)
    status, _, U, _ = hoid_full_call(m.kernel, C[None], Vt[None], q0, desc.tree.gravity)
    assert status[0] == OK and np.isfinite(U).all()


def test_singular_limb_is_refused_naming_it():
    """The 3RRR with limb 1's base joint turned until its three joint centres are collinear
    (the root of det J_t of that limb, from the numpy Jacobian of eq. 22): the recursion
    kernel reports SINGULAR at that limb, the numpy route names it."""
    desc = parse_description(os.path.join(ROBOTS, "planar_3rrr.urdf"))
    m = hoid_model(desc).limbs
    C, Vt = pick_and_place(0.2)
    q = simple_limb_inverse_kinematics(m, C)
    lb = m.limbs[1]

    def det(angle):
        qq = q.copy()
        qq[lb.bodies[0]] = angle
        Cs = limb_poses(m, np.where(m.real, qq[m.index], 0.0))[1]
        Fi = np.tile(pose_inv(Cs[0, len(m.limbs[0].bodies) - 1] @ m.platform_offset), (len(m.limbs), 1, 1))
        return np.linalg.det((m.Pt @ _platform_jacobian(m, Fi, Cs))[1])

    angles = np.linspace(-np.pi, np.pi, 73)
    k = next(i for i in range(72) if np.sign(det(angles[i])) != np.sign(det(angles[i + 1])))
    q[lb.bodies[0]] = scipy.optimize.brentq(det, angles[k], angles[k + 1], xtol=1e-15)
    with pytest.raises(SingularityError, match=f"limb '{lb.name}'"):
        fourth_order_kinematics(m, q, Vt)
    status, _, _ = hoid_recursion(hoid_model(desc).kernel, q, Vt, desc.tree.gravity)
    assert status[0] == SINGULAR and status[2] == 1


def test_threads_have_their_own_scratch():
    desc = parse_description(os.path.join(ROBOTS, "gough_stewart_6ups.urdf"))
    ts = np.linspace(0.05, 0.95, 24)
    poses, V = zip(*(gough_stewart_roll(t) for t in ts))
    poses, V = np.array(poses), np.moveaxis(np.array(V), 1, 0)
    q0 = simple_limb_inverse_kinematics(hoid_model(desc).limbs, poses[0])
    expected = higher_order_inverse_dynamics(desc, poses, *V, q_guess=q0).ddu
    results, errors = {}, []

    def work(k):
        try:
            for _ in range(20):
                results[k] = higher_order_inverse_dynamics(desc, poses, *V, q_guess=q0).ddu
        except Exception as exc:                  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    for k in range(3):
        np.testing.assert_array_equal(results[k], expected)
