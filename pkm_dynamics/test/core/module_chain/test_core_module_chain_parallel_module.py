"""One parallel module of paper 000: closure rates against finite differences, the K matrices of
App. B against the linear system of App. A and against virtual work, assembled inertia symmetry."""
import math

import numpy as np
import pytest

from pkm_dynamics.core import SingularityError
from pkm_dynamics.core.module_chain.parallel_module import (ParallelModule, S_X, XI, actuator_wrench_maps,
                                                            alpha_beta_terms, assembled_base_inertia,
                                                            assembled_link_inertia, closure, loop_statics_matrix,
                                                            loop_statics_rhs, module_kinematics, module_poses)
from pkm_dynamics.core.spatial.se3 import spatial_inertia


def _module(seed=0):
    rng = np.random.default_rng(seed)

    def inertia():
        A = rng.normal(size=(3, 3))
        return spatial_inertia(rng.uniform(5, 50), rng.normal(size=3) * 0.3, A @ A.T + np.eye(3))

    E = np.eye(4)
    E[:3, 3] = [1.1, 0.2, 0.05]
    return ParallelModule(name="test", L=1.0071227324212, L1=0.37610632101293, Lc=0.745, Lc0=0.085, h=0.02,
                          M_B1=inertia(), M_B3=inertia(), M_B4=inertia(), B1_C_E=E)


XS = [0.05, 0.2, 0.35, 0.5]


@pytest.mark.parametrize("x", XS)
def test_closure_angles_and_rates_against_finite_differences(x):
    mod = _module()
    xd, h = 0.7, 1e-6
    st = closure(mod, x, xd)
    d = x + mod.x0
    # eq. 2a holds, the loop closes: q2 is the link angle relative to the piston
    assert math.sqrt(mod.L**2 + mod.L1**2 + 2 * mod.L * mod.L1 * math.cos(st.q)) == pytest.approx(d, abs=1e-14)
    assert st.q2 == pytest.approx(st.q - st.q1, abs=1e-12)
    tip = np.array([mod.L + mod.L1 * math.cos(st.q), mod.L1 * math.sin(st.q)])
    assert np.allclose(tip, d * np.array([math.cos(st.q1), math.sin(st.q1)]), atol=1e-14)
    p, m = closure(mod, x + h, xd), closure(mod, x - h, xd)
    for i, name in ((1, "q"), (2, "q1"), (3, "q2")):
        dq = (getattr(p, name) - getattr(m, name)) / (2 * h)
        assert st.k[i] == pytest.approx(dq, rel=1e-7)                          # eq. 5
        dk = (p.k[i] - m.k[i]) / (2 * h)
        assert st.k[i + 3] == pytest.approx(dk * xd * xd, rel=1e-6, abs=1e-9)  # eq. 28: k4 = k1' xd


@pytest.mark.parametrize("x", XS)
def test_wrench_maps_solve_the_loop_statics_of_app_a(x):
    """F_B4 = K1 F~_B1 + K3 F^_B3 + K4 F^_B4 (eq. 65) against numpy's solution of A F_psi = F^_psi
    (eq. 57) for random body wrenches; f_B4^x is also Cramer's rule (eq. 61)."""
    mod = _module()
    st = closure(mod, x, 0.0)
    K1, K3, K4 = actuator_wrench_maps(mod, x, st.q2)
    A = loop_statics_matrix(mod, x, st.q2)
    assert np.linalg.det(A) == pytest.approx(-mod.L1 * math.sin(st.q2) * (x + mod.x0), rel=1e-12)
    rng = np.random.default_rng(1)
    for _ in range(5):
        F1, F3, F4 = rng.normal(size=(3, 6)) * 100
        rhs = loop_statics_rhs(F1, F3, F4)
        sol = np.linalg.solve(A, rhs)
        FB4 = K1 @ F1 + K3 @ F3 + K4 @ F4
        assert np.allclose(FB4[list(XI)], sol[2:5], rtol=1e-12, atol=1e-9)
        Apsi = A.copy()
        Apsi[:, 2] = rhs
        assert FB4[3] == pytest.approx(np.linalg.det(Apsi) / np.linalg.det(A), rel=1e-10)
        assert np.all(FB4[[0, 1, 5]] == 0)                                      # eq. 56d


@pytest.mark.parametrize("x", XS)
def test_actuator_force_row_is_virtual_work(x):
    """s_x^T K_i equals the velocity map of the body (xi_1, xi_4, xi_7 of eq. 30) on the in-plane
    components: f = sum of the powers of the body wrenches per unit xd, an independent route."""
    mod = _module()
    st = closure(mod, x, 0.0)
    module_poses(mod, st)
    module_kinematics(mod, st, np.zeros(6))
    K1, K3, K4 = actuator_wrench_maps(mod, x, st.q2)
    for K, xi in ((K1, st.xi[1]), (K3, st.xi[4]), (K4, st.xi[7])):
        assert np.allclose(K[3][list(XI)], xi[list(XI)], rtol=1e-12, atol=1e-14)


def test_assembled_inertia_is_symmetric_and_alpha_positive():
    mod = _module(2)
    rng = np.random.default_rng(4)
    st = closure(mod, 0.3, 0.4)
    module_poses(mod, st)
    module_kinematics(mod, st, rng.normal(size=6))
    M_E = spatial_inertia(100.0, [0.3, 0.1, 0.0], np.diag([1.0, 2.0, 3.0]))
    Mt, pt = assembled_link_inertia(mod, st, M_E, rng.normal(size=6))
    ab = alpha_beta_terms(mod, st, Mt, pt)
    assert ab["alpha"] > 0
    MA, _ = assembled_base_inertia(mod, st, ab, Mt, pt, 10.0)
    assert np.abs(MA - MA.T).max() < 1e-12 * np.abs(MA).max()
    assert np.linalg.eigvalsh(0.5 * (MA + MA.T)).min() > -1e-9


@pytest.mark.parametrize("where", ["below", "straight", "beyond"])
def test_singular_configurations_raise(where):
    mod = _module()
    x = {"below": abs(mod.L - mod.L1) - mod.x0 - 0.01, "straight": mod.L + mod.L1 - mod.x0,
         "beyond": mod.L + mod.L1 - mod.x0 + 0.01}[where]
    with pytest.raises(SingularityError, match=r"module 'test'.*x = "):
        closure(mod, x, 0.0)
    assert S_X[3] == 1.0


@pytest.mark.parametrize("x", XS)
def test_scalar_inverse_and_forward_dynamics_eqs_35_36_46(x):
    """f = alpha xdd + beta (eq. 35) with beta = psi nu_dot_Bc + delta (eq. 44) equals the direct
    wrench route of eqs. 65/16; eq. 36 and eq. 46 invert it."""
    from pkm_dynamics.core.module_chain.parallel_module import (forward_dynamics_base_frame, forward_dynamics_scalar,
                                                                module_accelerations, parallel_inverse_dynamics)
    mod = _module(5)
    rng = np.random.default_rng(6)
    st = closure(mod, x, 0.3)
    module_poses(mod, st)
    module_kinematics(mod, st, rng.normal(size=6))
    M_E = spatial_inertia(50.0, [0.2, 0.1, 0.0], np.diag([1.0, 2.0, 2.5]))
    p_E = rng.normal(size=6) * 10
    nud = rng.normal(size=6)
    xdd = 0.8
    Mt, pt = assembled_link_inertia(mod, st, M_E, p_E)
    ab = alpha_beta_terms(mod, st, Mt, pt)
    beta = ab["psi"] @ nud + ab["delta"]
    acc = module_accelerations(mod, st, nud, xdd)
    F_E = M_E @ (st.AE @ acc[0]) + p_E                               # eqs. 9b, 21
    f, F_Bc, _ = parallel_inverse_dynamics(mod, st, acc, F_E)
    assert ab["alpha"] * xdd + beta == pytest.approx(f, rel=1e-12)
    assert forward_dynamics_scalar(ab["alpha"], beta, f) == pytest.approx(xdd, rel=1e-12)
    assert forward_dynamics_base_frame(ab, f, nud) == pytest.approx(xdd, rel=1e-12)
    MA, pA = assembled_base_inertia(mod, st, ab, Mt, pt, f)
    assert np.allclose(MA @ nud + pA, F_Bc, rtol=1e-11, atol=1e-9 * np.abs(F_Bc).max())   # eq. 37
