"""The structured backward steps of the compiled module chain (core/module_chain/chain_recursions.py)
against the general step they replace, on the crane's serial modules (a revolute first module and a
prismatic tip, paper 000 eqs. 50-52): the first module's projections U, D, u without M^A
(serial_base_projections) and the prismatic tip's congruence as one translation of the build's
constant (serial_tip_prismatic, the slot SERIAL_TIP), each equal to serial_backward_general to
round-off at seeded random states; both maps of E (the flag E_RZ and the matrix AE) where the
crane runs only one.  The whole FD through them is compared with the numpy reference route in
test_core_compiled_chain.py."""
import os

import numpy as np
import pytest

from pkm_dynamics.core.module_chain import chain_layout as CL
from pkm_dynamics.core.module_chain.chain_layout import model_arrays, scratch_arrays
from pkm_dynamics.core.module_chain.chain_recursions import (first_forward_pass, serial_backward_general,
                                                             serial_base_projections, serial_tip_prismatic)
from pkm_dynamics.core.robot import load_robot
from pkm_dynamics.core.spatial.se3 import Ad_inv
from pkm_dynamics.testing import chain_states, module_chain_sources

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = module_chain_sources(os.path.join(HERE, "..", "..", "..", "robots"))


@pytest.fixture(scope="module")
def crane():
    return load_robot(SOURCES["heavy_duty_4dof"])


def _scratch(robot, x, xd):
    """The crane's model views (writable copies) and a scratch after the first forward pass."""
    model = robot.compiled
    n = model.n
    geo, mats, nud0 = (a.copy() for a in model_arrays(model.flat, n))
    data = model.data().flat.copy()
    A, V, S, W, w = scratch_arrays(data, n)
    code, _ = first_forward_pass(geo, mats, A, V, S, W, w, x, xd, False)
    assert code == 0
    return geo, mats, A, V, S, W, w


def _close(a, ref):
    np.testing.assert_allclose(a, ref, rtol=1e-12, atol=1e-12 * max(1.0, float(np.abs(ref).max())))


def test_flags_and_tip_inertia_of_the_crane(crane):
    """Only the crane's prismatic tip takes the translation path; its slot is the congruence of
    M_B4 - U U^T / D by Ad_inv(B) (numpy, from the chain's own module data)."""
    model = crane.compiled
    np.testing.assert_array_equal(model.geo[:, CL.TIP_PRISMATIC], [0.0, 0.0, 0.0, 1.0])
    mod = crane.chain.modules[3]
    U = mod.M_B4 @ mod.X
    AB = Ad_inv(mod.B)
    _close(model.mats[3, CL.SERIAL_TIP], AB.T @ (mod.M_B4 - np.outer(U, U) / (mod.X @ U)) @ AB)


@pytest.mark.parametrize("e_rz", [True, False])
def test_structured_serial_steps_equal_the_general_step(crane, e_rz):
    """At 10 seeded states (random M_E, p_E for the first module), the structured steps give the
    general step's D, u, U, p^A and (tip) M_E, p_E of the previous module to 1e-12 relative;
    ``e_rz`` False: the same modules with the flag E_RZ cleared (the matrix AE of the build)."""
    rng = np.random.default_rng(5)
    X, XD, _, _ = chain_states(crane, rng, 10, (0.1, 0.9), rate_scale=1.0, wrench_scale=100.0)
    n = crane.compiled.n
    for x, xd in zip(X, XD):
        geo, mats, A, V, S, W, w = _scratch(crane, x, xd)
        if not e_rz:
            geo[:, CL.E_RZ] = 0.0
        B = rng.normal(size=(6, 6))
        W[0] = B @ B.T * 100.0
        w[1] = rng.normal(size=6) * 100.0
        fk = float(rng.normal()) * 1e3
        for k, last, tip, step in ((0, True, False, serial_base_projections),
                                   (n - 1, False, True, serial_tip_prismatic)):
            S2, W2, w2 = S.copy(), W.copy(), w.copy()
            serial_backward_general(geo[k], mats[k], A[k], V[k], S2[k], fk, last, tip, W2, w2)
            S1, W1, w1 = S.copy(), W.copy(), w.copy()
            if last:
                step(geo[k], mats[k], V[k], S1[k], fk, tip, W1, w1)
                _close(w1[2], w2[2])                                         # p^A
            else:
                step(geo[k], mats[k], A[k], V[k], S1[k], fk, W1, w1)
                _close(W1[0], W2[0])                                         # M_E of module n-2
                _close(w1[1], w2[1])                                         # p_E
            for col in (CL.ALPHA, CL.DELTA):
                _close(S1[k, col], S2[k, col])
            _close(S1[k, CL.PSI], S2[k, CL.PSI])


def test_unrolled_products_and_the_cylinder_piston_inertia_equal_the_general_kernels_bit_for_bit():
    """mat6_vec / mat6T_vec (the chain kernels' products of a matrix and a vector) give matvec /
    matTvec's numbers bit for bit, and cylinder_piston_inertia the translation congruence of M_B4
    along x plus M_B3 (congruence_translation_xz at pz = 0, then the sum), and A^T M A of the
    numpy adjoint to round-off."""
    from pkm_dynamics.core.module_chain.chain_closure import congruence_translation_xz, cylinder_piston_inertia
    from pkm_dynamics.core.spatial.se3_kernels import ad_inv_pose_rz, mat6_vec, mat6T_vec, matTvec, matvec
    rng = np.random.default_rng(8)
    for _ in range(5):
        A, v = rng.normal(size=(6, 6)), rng.normal(size=6)
        got, want = np.empty(6), np.empty(6)
        mat6_vec(A, v, got)
        matvec(A, v, want)
        np.testing.assert_array_equal(got, want)
        mat6T_vec(A, v, got)
        matTvec(A, v, want)
        np.testing.assert_array_equal(got, want)
        B3, B4 = rng.normal(size=(6, 6)), rng.normal(size=(6, 6))
        M3, M4, ka = B3 @ B3.T, B4 @ B4.T, float(rng.uniform(0.1, 2.0))
        got, want, T = np.empty((6, 6)), np.empty((6, 6)), np.empty((6, 6))
        cylinder_piston_inertia(M3, M4, ka, got)
        congruence_translation_xz(M4, ka, 0.0, want)
        np.testing.assert_array_equal(got, want + M3)
        ad_inv_pose_rz(1.0, 0.0, ka, 0.0, 0.0, T)
        _close(got, M3 + T.T @ M4 @ T)
