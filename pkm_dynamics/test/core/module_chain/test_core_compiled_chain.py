"""Compiled module-chain kernels (core/module_chain/chain_*kernels.py) against the numpy reference route of
core/module_chain/module_chain_dynamics.py (parallel_serial_forward_dynamics, chain_inverse_dynamics):
seeded random in-stroke states, batches, external wrenches, every error status, per-thread
scratch, and the cache location of a read-only install.

What the two routes share, so what these tests cannot see: the kernels compile the scalar
formulas of core/spatial/scalar_forms.py (``so3_coefficients``, ``exp_se3_rows``, ``Ad_inv_rows``,
``bracket_list``, ``wrench_bias_list``, ``ad_inv_pose_entries``) from their
one definition, and read their tables (``ChainModel.build``: module geometry, the inertias
``M``, screws ``X``, poses, ``nud_0``) from the numpy ``ModuleChain`` the reference route runs
on.  An error in those is checked elsewhere: the spatial formulas against Pinocchio and extended
precision (test_core_spatial_accuracy.py), and the whole compiled FD/ID of the example chains,
tables included, against the Pinocchio KKT route that shares no code with the package
(test_core_independent_kkt.py).  The recursions, closure and linear algebra of the kernels are
their own and are what this file compares."""
import dataclasses
import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

import pkm_dynamics
from pkm_dynamics.core import SingularityError, StateError
from pkm_dynamics.core.module_chain.chain_model import ChainModel, chain_forward_dynamics, chain_inverse_dynamics
from pkm_dynamics.core.module_chain.module_chain import ModuleChain
from pkm_dynamics.core.module_chain.module_chain_dynamics import _check_actuators, parallel_serial_forward_dynamics
from pkm_dynamics.core.module_chain.module_chain_dynamics import chain_inverse_dynamics as reference_id
from pkm_dynamics.core.robot import load_robot
from pkm_dynamics.testing import chain_states, module_chain_sources

HERE = os.path.dirname(os.path.abspath(__file__))
ROBOTS = os.path.join(HERE, "..", "..", "..", "robots")
SOURCES = module_chain_sources(ROBOTS)


@pytest.fixture(scope="module", params=sorted(SOURCES))
def robot(request):
    return load_robot(SOURCES[request.param])


def _states(robot, rng, batch):
    """``batch`` random states inside the strokes (5-95 %), velocities, accelerations, wrenches."""
    return chain_states(robot, rng, batch, (0.05, 0.95), rate_scale=1.0, wrench_scale=100.0)


def _close(a, ref):
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(a, ref, rtol=1e-12, atol=1e-12 * scale)


def test_kernels_match_the_reference_route(robot):
    """ID to 1e-12 relative.  FD by its backward error: the reference ID of the compiled
    accelerations gives the forces back to 1e-12 relative (the crane's FD amplifies rounding:
    forces of 1e4 N over small actuator inertias), and its forward error against the reference
    FD stays below 1e-10 relative."""
    rng = np.random.default_rng(12)
    X, XD, XDD, FE = _states(robot, rng, 20)
    f = robot.inverse_dynamics(X, XD, XDD, wrench=FE)                 # compiled, one batch
    xdd = robot.forward_dynamics(X, XD, f, wrench=FE)
    for k in range(len(X)):
        f_ref = reference_id(robot.chain, X[k], XD[k], XDD[k], FE[k])
        _close(f[k], f_ref)
        _close(reference_id(robot.chain, X[k], XD[k], xdd[k], FE[k]), f[k])
        xdd_ref = parallel_serial_forward_dynamics(robot.chain, X[k], XD[k], f[k], FE[k])
        assert np.abs(xdd[k] - xdd_ref).max() <= 1e-10 * max(1.0, np.abs(xdd_ref).max())


def test_single_state_and_shared_wrench_match_the_batch(robot):
    rng = np.random.default_rng(3)
    X, XD, XDD, FE = _states(robot, rng, 4)
    f = robot.inverse_dynamics(X, XD, XDD, wrench=FE[0])              # one wrench for every row
    for k in range(len(X)):
        single = robot.inverse_dynamics(X[k].tolist(), XD[k], XDD[k], FE[0])
        assert single.shape == (robot.n,)
        np.testing.assert_array_equal(single, f[k])
        np.testing.assert_array_equal(robot.forward_dynamics(X[k], XD[k], single),
                                      robot.forward_dynamics(X[k:k + 1], XD[k:k + 1], single[None])[0])
    assert robot.inverse_dynamics(X, XD, XDD).shape == X.shape


def test_model_arrays_are_read_only_and_scratch_is_per_thread():
    robot = load_robot(SOURCES["chain_3"])
    model = robot.compiled
    for a in (model.geo, model.mats, model.nud0):
        assert not a.flags.writeable
    rng = np.random.default_rng(5)
    X, XD, XDD, _ = _states(robot, rng, 200)
    expected = robot.inverse_dynamics(X, XD, XDD)
    results, datas = {}, {}

    def work(i):
        datas[i] = model.data()
        results[i] = [robot.inverse_dynamics(X[k], XD[k], XDD[k]) for k in range(len(X))]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(d) for d in datas.values()} | {id(model.data())}) == 4
    for i in range(3):
        np.testing.assert_array_equal(np.array(results[i]), expected)


# ------------------------------------------------------------------ error statuses


def _message(fn, *args):
    with pytest.raises(Exception) as e:
        fn(*args)
    return type(e.value), str(e.value)


def test_beyond_stroke_raises_the_reference_message():
    robot = load_robot(SOURCES["heavy_duty_4dof"])
    x = np.array([[0.1, 0.2, 0.3, 0.2], [0.1, 0.2, 0.3, 0.2]])
    x[1, 2] = robot.chain.info[2].upper + 1e-3
    zeros = np.zeros_like(x)
    ref = _message(_check_actuators, robot.chain, x[1])
    assert ref[0] is StateError and robot.chain.info[2].name in ref[1]
    assert _message(robot.forward_dynamics, x, zeros, zeros) == ref
    assert _message(robot.inverse_dynamics, x, zeros, zeros) == ref


@pytest.mark.parametrize("which", [0, 1, 2])
def test_non_finite_input_raises_state_error_naming_it(which):
    robot = load_robot(SOURCES["chain_3"])
    args = [np.full((2, 3), 0.1) for _ in range(3)]
    args[which][1, 2] = np.nan
    kind, msg = _message(robot.inverse_dynamics, *args)
    assert kind is StateError and msg.startswith(("x ", "xd ", "xdd ")[which]) and "NaN or Inf" in msg
    with pytest.raises(StateError, match="wrench holds NaN or Inf"):
        robot.forward_dynamics(np.full(3, 0.1), np.zeros(3), np.zeros(3), wrench=[0, 0, np.inf, 0, 0, 0])


def test_bad_shapes_raise_state_error():
    robot = load_robot(SOURCES["chain_3"])
    with pytest.raises(StateError, match=r"x has shape \(2,\)"):
        robot.inverse_dynamics(np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(StateError, match="different shapes"):
        robot.inverse_dynamics(np.zeros(3), np.zeros((2, 3)), np.zeros(3))
    with pytest.raises(StateError, match=r"wrench has shape \(2, 6\)"):
        robot.inverse_dynamics(np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3)), wrench=np.zeros((2, 6)))


def _unlimited(chain: ModuleChain) -> ModuleChain:
    info = tuple(dataclasses.replace(i, lower=-np.inf, upper=np.inf) for i in chain.info)
    return dataclasses.replace(chain, info=info)


@pytest.mark.parametrize("x2", [0.7, -0.3])        # pivot distance beyond L + L1, below |L - L1|
def test_loop_that_cannot_close_raises_the_reference_singularity(x2):
    chain = _unlimited(load_robot(SOURCES["chain_3"]).chain)
    model = ChainModel.build(chain, 9)                       # 3 loops of 3 tree joints
    x = np.array([0.1, 0.2, x2])
    z = np.zeros(3)
    for compiled, reference in ((chain_forward_dynamics, parallel_serial_forward_dynamics),
                                (chain_inverse_dynamics, reference_id)):
        ref = _message(reference, chain, x, z, z)
        assert ref[0] is SingularityError and chain.info[2].name in ref[1]
        assert _message(compiled, model, x, z, z) == ref


def test_state_too_large_for_the_dynamics_raises_state_error():
    """A velocity whose square overflows is refused by the input bounds (core.bounds) in the
    kernel's input pass, before any product overflows."""
    robot = load_robot(SOURCES["chain_3"])
    with pytest.raises(StateError, match=r"xd\[0\] = 1e\+200 is beyond the bound"):
        robot.inverse_dynamics(np.full(3, 0.1), np.full(3, 1e200), np.zeros(3))


# ------------------------------------------------------------------ cache location


def _copy_package(tmp_path):
    """A copy of the installed package whose kernel directory cannot hold a ``__pycache__``
    (a file of that name is in the way: unwritable even for root)."""
    src = os.path.dirname(pkm_dynamics.__file__)
    dst = tmp_path / "site" / "pkm_dynamics"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    (dst / "core" / "numba_support" / "__pycache__").write_text("not a directory")
    return tmp_path / "site"


PROBE = ("import numpy as np\n"
         "from pkm_dynamics.core.numba_support import cache\n"
         "from pkm_dynamics.core.spatial import se3_kernels\n"
         "assert se3_kernels.dot(np.ones(6), np.arange(6.0)) == 15.0\n"
         "print(repr(cache.CACHE_DIR), cache.CACHING)\n")


def _probe(site, **env):
    e = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "HOME")}
    e.update(env, PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", PROBE], env=e, cwd=site, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_read_only_install_caches_in_the_user_cache_dir(tmp_path):
    site = _copy_package(tmp_path)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a directory")
    xdg = tmp_path / "xdg"
    out = _probe(site, HOME=str(blocked), XDG_CACHE_HOME=str(xdg), NUMBA_CACHE_DIR=str(blocked / "numba"))
    where = xdg / "pkm_dynamics" / "numba"
    (tag,) = os.listdir(where)
    assert out == f"{str(where / tag)!r} True"
    assert any(p.suffix in (".nbi", ".nbc") for p in where.rglob("*"))


def test_an_edited_kernel_source_gets_a_fresh_cache(tmp_path):
    """numba checks a cached kernel against its own file only: an edit of a helper it inlined
    must not reuse the old machine code, so the cache directory changes with any source."""
    site = _copy_package(tmp_path)
    xdg = tmp_path / "xdg"
    env = dict(HOME=str(tmp_path), XDG_CACHE_HOME=str(xdg))
    first = _probe(site, **env)
    helpers = site / "pkm_dynamics" / "core" / "spatial" / "se3_kernels.py"
    helpers.write_text(helpers.read_text() + "\n# edited\n")
    second = _probe(site, **env)
    assert first != second and first.endswith(" True") and second.endswith(" True")
    assert len(os.listdir(xdg / "pkm_dynamics" / "numba")) == 2


def test_nothing_writable_compiles_without_cache(tmp_path):
    site = _copy_package(tmp_path)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a directory")
    out = _probe(site, HOME=str(blocked), XDG_CACHE_HOME=str(blocked / "cache"))
    assert out == "None False"


def test_any_input_layout_uses_the_one_compiled_signature():
    """Lists, strided views, read-only and broadcast arrays are copied to the layout the kernel
    is compiled for (another layout would compile it again, seconds in a control loop)."""
    from pkm_dynamics.core.module_chain import chain_kernels
    robot = load_robot(SOURCES["chain_3"])
    strided = np.full((4, 6), 0.1)[:, ::2]
    ro = np.full(3, 0.1)
    ro.setflags(write=False)
    expected = robot.inverse_dynamics(np.full(3, 0.1), np.full(3, 0.1), np.full(3, 0.1))
    np.testing.assert_array_equal(robot.inverse_dynamics(strided, strided, strided)[2], expected)
    np.testing.assert_array_equal(robot.inverse_dynamics(ro, ro, ro), expected)
    np.testing.assert_array_equal(robot.inverse_dynamics([0.1] * 3, ro, np.broadcast_to(ro, (3,))), expected)
    fe = np.broadcast_to(np.ones(6), (2, 6))
    robot.forward_dynamics(np.broadcast_to(ro, (2, 3)), strided[:2], strided[:2], wrench=fe)
    assert len(chain_kernels.chain_dynamics.signatures) == 1


def test_calls_after_the_first_use_the_entry_point_and_agree_with_the_reference(robot):
    """After one successful call the public call skips numba's type dispatch (the entry point
    of the one compiled signature); the short path of one state without a wrench, a read-only
    state and a list then agree with the numpy route."""
    from pkm_dynamics.core.module_chain import chain_kernels
    rng = np.random.default_rng(5)
    X, XD, XDD, _ = _states(robot, rng, 1)
    x, xd, xdd = X[0], XD[0], XDD[0]
    robot.inverse_dynamics(x, xd, xdd)
    robot.inverse_dynamics(X, XD, XDD)
    for kernel in (chain_kernels.chain_dynamics_one, chain_kernels.chain_dynamics):
        assert robot.compiled.data().entries.known(kernel) is kernel.overloads[kernel.signatures[0]].entry_point
    z = np.zeros(6)
    ro = x.copy()
    ro.setflags(write=False)
    for state in (x, ro, list(x)):
        f = robot.inverse_dynamics(state, xd, xdd)
        _close(f, reference_id(robot.chain, x, xd, xdd, z))
        _close(reference_id(robot.chain, x, xd, robot.forward_dynamics(state, xd, f), z), f)
    assert len(chain_kernels.chain_dynamics_one.signatures) == len(chain_kernels.chain_dynamics.signatures) == 1


def test_massless_serial_module_fails_alike_on_both_routes():
    """D = X^T M^A X = 0 (a massless last body, eq. 51): the division by zero is no Python
    exception inside the kernel; the NaN reaches alpha of the module below, and both routes
    raise the same SingularityError."""
    crane = load_robot(SOURCES["heavy_duty_4dof"])
    chain = crane.chain
    last = dataclasses.replace(chain.modules[-1], M_B4=np.zeros((6, 6)))
    chain = dataclasses.replace(chain, modules=chain.modules[:-1] + (last,))
    x, z = np.array([0.1, 0.2, 0.3, 0.2]), np.zeros(4)
    with np.errstate(all="ignore"):
        ref = _message(parallel_serial_forward_dynamics, chain, x, z, z)
    assert ref[0] is SingularityError
    assert _message(chain_forward_dynamics, ChainModel.build(chain, crane.tree.nq), x, z, z) == ref


# ------------------------------------------------------------------ kinematics


def test_tree_state_and_forward_kinematics_match_the_reference_route(robot):
    from pkm_dynamics.core.module_chain.module_chain_dynamics import chain_forward_kinematics, chain_tree_state
    rng = np.random.default_rng(7)
    X, XD, XDD, _ = _states(robot, rng, 10)
    Q, QD, QDD = robot.tree_state(X, XD, XDD)
    T = robot.forward_kinematics(X)
    nq = robot.tree.nq
    for k in range(len(X)):
        for got, ref in zip((Q[k], QD[k], QDD[k]), chain_tree_state(robot.chain, nq, X[k], XD[k], XDD[k])):
            _close(got, ref)
        _close(T[k], chain_forward_kinematics(robot.chain, X[k]))
        np.testing.assert_array_equal(robot.tree_state(X[k])[1], np.zeros(nq))
        np.testing.assert_array_equal(robot.forward_kinematics(X[k]), T[k])


def test_kinematics_errors_raise_the_reference_exceptions():
    robot = load_robot(SOURCES["heavy_duty_4dof"])
    x = np.array([0.1, 0.2, 0.3, 0.2])
    x[2] = robot.chain.info[2].upper + 1e-3
    ref = _message(_check_actuators, robot.chain, x)
    assert _message(robot.tree_state, x) == ref
    assert _message(robot.forward_kinematics, x) == ref
    with pytest.raises(StateError, match="^xd holds NaN or Inf"):
        robot.tree_state(np.full(4, 0.1), [0, np.nan, 0, 0])
    from pkm_dynamics.core.module_chain.module_chain_dynamics import chain_forward_kinematics, chain_tree_state
    chain = _unlimited(load_robot(SOURCES["chain_3"]).chain)
    model = ChainModel.build(chain, 9)
    xs = np.array([0.1, 0.7, 0.2])
    from pkm_dynamics.core.module_chain.chain_model import chain_forward_kinematics as cfk, chain_tree_state as cts
    ref = _message(chain_forward_kinematics, chain, xs)
    assert ref[0] is SingularityError and _message(cfk, model, xs) == ref
    ref = _message(chain_tree_state, chain, 9, xs, np.zeros(3), np.zeros(3))
    assert ref[0] is SingularityError and _message(cts, model, xs) == ref


def test_robot_pickles_with_fresh_scratch():
    """A robot goes to another process (multiprocessing) as before the compiled model: the
    model pickles as the chain it is built from; the per-thread scratch is not copied."""
    import pickle
    robot = load_robot(SOURCES["heavy_duty_4dof"])
    X, XD, XDD, FE = _states(robot, np.random.default_rng(9), 3)
    copy = pickle.loads(pickle.dumps(robot))
    assert copy.compiled is not robot.compiled
    np.testing.assert_array_equal(copy.inverse_dynamics(X, XD, XDD, wrench=FE),
                                  robot.inverse_dynamics(X, XD, XDD, wrench=FE))


def test_the_map_of_e_takes_the_structured_path_only_for_rotations_about_z():
    """The flag E_RZ (the kernels apply AE = Ad_inv(C_E) as a rotation about z and a translation) is
    set exactly where the pose of E is one: so the crane (E poses of its modules 1-3 about z) runs
    the structured path and chain_8 (mounts tilted by rpy 0.5 about x) the matrix path, and
    test_kernels_match_the_reference_route checks both against the numpy route; AE itself is the
    map the structured path applies (its 6x6 entries from cos, sin and the translation of C_E)."""
    from pkm_dynamics.core.module_chain import chain_layout as CL
    from pkm_dynamics.core.module_chain.chain_model import rotation_about_z
    from pkm_dynamics.core.spatial.se3_kernels import ad_inv_pose_rz
    c, s = np.cos(0.3), np.sin(0.3)
    assert rotation_about_z([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    assert not rotation_about_z([[1, 0, 0], [0, c, -s], [0, s, c]])
    assert not rotation_about_z([[c, -s, 1e-9], [s, c, 0], [0, 0, 1]])
    crane, chain8 = load_robot(SOURCES["heavy_duty_4dof"]).compiled, load_robot(SOURCES["chain_8"]).compiled
    np.testing.assert_array_equal(crane.geo[:, CL.E_RZ], [1.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(chain8.geo[:-1, CL.E_RZ], 0.0)
    out = np.empty((6, 6))
    for k in range(3):
        C = crane.mats[k, CL.C_E]
        ad_inv_pose_rz(C[0, 0], C[1, 0], C[0, 3], C[1, 3], C[2, 3], out)
        np.testing.assert_allclose(out, crane.mats[k, CL.MAP_E], rtol=0, atol=1e-15)


def test_planar_maps_of_a_parallel_module_equal_the_general_kernels_bit_for_bit():
    """The 4-bar's maps without their zero offsets (chain_closure: the translation congruence in
    the module's plane, the rotation about z of A3) give the numbers of the general kernels of
    se3_kernels bit for bit, and A^T M A of the numpy adjoint."""
    from pkm_dynamics.core.module_chain.chain_closure import (congruence_translation_xz, rotation_z_T_add,
                                                              rotation_z_vec)
    from pkm_dynamics.core.spatial.se3_kernels import (ad_inv_pose_rz, ad_inv_pose_rz_T_add, ad_inv_pose_rz_vec,
                                                       congruence_translation)
    rng = np.random.default_rng(3)
    B = rng.normal(size=(6, 6))
    M = B @ B.T
    got, want, A = np.empty((6, 6)), np.empty((6, 6)), np.empty((6, 6))
    for px, pz in ((0.7, -0.2), (1.3, 0.0)):
        congruence_translation_xz(M, px, pz, got)
        congruence_translation(M, px, 0.0, pz, want)
        np.testing.assert_array_equal(got, want)
        ad_inv_pose_rz(1.0, 0.0, px, 0.0, pz, A)
        np.testing.assert_allclose(got, A.T @ M @ A, rtol=0, atol=1e-13)
    c, s = np.cos(-0.8), np.sin(-0.8)
    v, y = rng.normal(size=6), rng.normal(size=6)
    got_v, want_v = np.empty(6), np.empty(6)
    rotation_z_vec(c, s, v, got_v)
    ad_inv_pose_rz_vec(c, s, 0.0, 0.0, 0.0, v, want_v)
    np.testing.assert_array_equal(got_v, want_v)
    got_y, want_y = v.copy(), v.copy()
    rotation_z_T_add(c, s, y, got_y)
    ad_inv_pose_rz_T_add(c, s, 0.0, 0.0, 0.0, y, want_y)
    np.testing.assert_array_equal(got_y, want_y)
    # carry_from_e's two branches, both run by the crane in test_kernels_match_the_reference_route:
    # E at the origin of module 2's B1 (rotation alone), offset in module 1
    from pkm_dynamics.core.module_chain import chain_layout as CL
    crane = load_robot(SOURCES["heavy_duty_4dof"]).compiled
    assert np.all(crane.mats[2, CL.C_E, :3, 3] == 0.0) and np.any(crane.mats[1, CL.C_E, :3, 3] != 0.0)



def test_one_state_driver_matches_the_batch_kernel(robot):
    """``state_dynamics`` (the one-state call and every evaluation of the compiled integrator)
    against the batch kernel ``chain_dynamics`` on the same state as a (1, n) batch: the same
    accelerations / forces bit for bit, and the same status (code, row, culprit) for a state beyond
    its stroke, a non-finite velocity and a non-finite wrench."""
    from pkm_dynamics.core.module_chain import chain_kernels as K
    from pkm_dynamics.core.status import OK
    head = robot.compiled.head()
    rng = np.random.default_rng(3)
    X, XD, XDD, FE = _states(robot, rng, 4)
    F = robot.inverse_dynamics(X, XD, XDD, wrench=FE)
    bad = []
    x = X[0].copy()
    x[-1] = robot.chain.info[-1].upper + 1.0                    # beyond its stroke
    bad.append((x, XD[0], F[0], FE[0]))
    xd = XD[1].copy()
    xd[0] = np.nan
    bad.append((X[1], xd, F[1], FE[1]))
    bad.append((X[2], XD[2], F[2], np.full(6, np.inf)))
    cases = [(X[k], XD[k], t[k], FE[k], inverse) for k in range(len(X)) for inverse, t in ((False, F), (True, XDD))]
    cases += [(a, b, c, e, False) for a, b, c, e in bad]
    codes = []
    for x, xd, t, fe, inverse in cases:
        x, xd, t, fe1 = (np.ascontiguousarray(a, float) for a in (x, xd, t, fe.reshape(1, 6)))
        one, batch = np.full(robot.n, 7.0), np.full((1, robot.n), 7.0)
        s1, s2 = np.zeros(3, np.int64), np.zeros(3, np.int64)
        c1 = K.state_dynamics(inverse, *head, x, xd, t, fe1, one, s1)
        c2 = K.chain_dynamics(inverse, *head, x[None], xd[None], t[None], fe1, batch, s2)
        assert c1 == c2 and s1.tolist() == s2.tolist()
        if c1 == OK:
            np.testing.assert_array_equal(one, batch[0])
            assert not inverse or np.abs(one).max() > 0.0
        codes.append(c1)
    assert codes.count(OK) == 2 * len(X) and OK not in codes[-3:]


@pytest.mark.parametrize("x2", [0.7, -0.3])        # pivot distance beyond L + L1, below |L - L1|
def test_one_state_driver_names_the_module_whose_loop_cannot_close(x2):
    """A state inside the (removed) strokes whose third loop cannot close: ``state_dynamics`` stops in
    Algorithm 1's first pass with the status of the batch kernel, row 0 and module 2 (the module
    the reference route names)."""
    from pkm_dynamics.core.module_chain import chain_kernels as K
    from pkm_dynamics.core.status import OK
    model = ChainModel.build(_unlimited(load_robot(SOURCES["chain_3"]).chain), 9)
    head, fe = model.head(), model.data().no_wrench
    x, z = np.array([0.1, 0.2, x2]), np.zeros(3)
    for inverse in (False, True):
        s1, s2 = np.zeros(3, np.int64), np.zeros(3, np.int64)
        c1 = K.state_dynamics(inverse, *head, x, z, z, fe, np.empty(3), s1)
        c2 = K.chain_dynamics(inverse, *head, x[None], z[None], z[None], fe, np.empty((1, 3)), s2)
        assert c1 == c2 != OK
        assert s1.tolist() == s2.tolist() == [c1, 0, 2]
