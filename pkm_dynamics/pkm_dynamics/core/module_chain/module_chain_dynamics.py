"""The numpy route of a module chain's dynamics (paper 000): the O(n) forward dynamics of
Algorithm 1 (:func:`parallel_serial_forward_dynamics`), the chain's analytic inverse dynamics
(:func:`chain_inverse_dynamics`), forward kinematics and the tree state of a chain recognised by
:func:`~.module_chain.recognise_modules`, and the checks of a chain's state arrays.  The compiled
kernels (:mod:`~pkm_dynamics.core.module_chain.chain_recursions`) run the same algorithms; this route is their
independent check."""
from __future__ import annotations


import numpy as np

from ..bounds import check_bound, check_effort, check_position, check_rate
from ..errors import StateError
from .parallel_module import (alpha_beta_terms, assembled_base_inertia,
                              assembled_link_inertia, closure, forward_dynamics_base_frame,
                              module_accelerations, module_adjoints, module_kinematics, module_poses,
                              parallel_inverse_dynamics)
from ..spatial.se3 import (Ad_inv_exp, bracket_list, exp_se3, wrench_bias_list)
from ..status import LIMIT_SLACK

from .module_chain import ModuleChain, SerialModule

# ----------------------------------------------------------------------------------------------
# per-state helpers


def _check_actuators(chain: ModuleChain, x: np.ndarray) -> None:
    for mod, info, v in zip(chain.modules, chain.info, x):
        if v < info.lower - LIMIT_SLACK or v > info.upper + LIMIT_SLACK:
            unit = "rad" if info.kind == "serial" and np.any(mod.X[:3]) else "m"
            raise StateError(f"module '{info.name}': x = {v:.6g} {unit} is beyond the limits "
                             f"[{info.lower:.6g}, {info.upper:.6g}] of joint '{info.joint}' (its stroke)")


def _serial_first_pass(mod: SerialModule, x: float, xd: float, nu_Bc: np.ndarray) -> dict:
    """Serial module, Algorithm 1 lines 8-10: pose, twist, bias c_B4 (eq. 10), p_B4 (eq. 12)."""
    A = Ad_inv_exp(mod.X, x) @ mod.AB             # Ad_inv(B exp(X x))
    nu = A @ nu_Bc
    nu += mod.X * xd
    nu_list = nu.tolist()
    c, p = np.array([bracket_list(nu_list, [s * xd for s in mod.X_list]),      # ad(nu) X xd
                     wrench_bias_list(nu_list, (mod.M_B4 @ nu).tolist())])     # -ad*(nu) M nu
    AE = mod.AE
    return {"A": A, "nu": nu, "c": c, "p": p, "AE": AE, "nuE": AE @ nu}


def _first_forward_pass(chain: ModuleChain, x, xd) -> list:
    """First forward recursion of Algorithm 1 (lines 2-10): closure, poses, twists, biases."""
    nu = np.zeros(6)
    out = []
    x, xd = np.asarray(x, dtype=float).tolist(), np.asarray(xd, dtype=float).tolist()
    for mod, info, xi, xdi in zip(chain.modules, chain.info, x, xd):
        if info.kind == "parallel":
            st = closure(mod, info.sx * xi, info.sx * xdi)
            module_adjoints(mod, st)
            module_kinematics(mod, st, nu)
            out.append(st)
            nu = st.nu["E"]
        else:
            s = _serial_first_pass(mod, xi, xdi, nu)
            out.append(s)
            nu = s["nuE"]
    return out


def _base_acceleration(chain: ModuleChain, gravity) -> np.ndarray:
    if gravity is None:
        return chain.nud_0
    g = np.asarray(gravity, dtype=float).reshape(3)
    return chain.A_root[:, 3:] @ -g                                     # nu_dot_0 = -nu_dot_g


def _ee_wrench(chain: ModuleChain, f_ext) -> np.ndarray:
    """``F_E`` of the last module (eq. 20): minus the external wrench acting at the end effector,
    carried from the end-effector frame to the last module's E frame (identity: E is the
    end-effector frame)."""
    if f_ext is None:
        return np.zeros(6)
    return -np.asarray(f_ext, dtype=float).reshape(6)


def parallel_serial_forward_dynamics(chain: ModuleChain, x, xd, f, f_ext=None, gravity=None) -> np.ndarray:
    """Algorithm 1 of paper 000 (ParallelSerialManipulatorDynamics): actuator accelerations
    ``xdd`` (n,) from positions ``x``, velocities ``xd`` and forces ``f`` (n,), O(n).

    First forward recursion: eqs. 2, 5, 28 (closure), 6, 10, 12, 30.  Backward recursion:
    parallel modules eqs. 23-24, 62-64, 32, 34, 26, 42-45, 48, 49; serial modules eqs. 50-52; the
    base-frame wrench of module k is the input wrench F_E of module k-1 (line 24).  Second
    forward recursion: eq. 46 and eqs. 29/9 (parallel), ABA line 30-32 (serial).  ``f_ext``
    (6,): wrench (moment, force) acting on the end effector, in the end-effector frame (eq. 20)."""
    first = _first_forward_pass(chain, x, xd)
    n = chain.n
    M_E = np.zeros((6, 6))
    p_E = _ee_wrench(chain, f_ext)
    back = [None] * n
    for k in range(n - 1, -1, -1):                      # backward recursion
        mod, info, s = chain.modules[k], chain.info[k], first[k]
        # (the first module sits on the fixed base: its assembled inertia at Bc is not needed)
        if info.kind == "parallel":
            fk = info.sx * f[k]
            Mt, pt = assembled_link_inertia(mod, s, M_E, p_E)          # eqs. 23-24
            ab = alpha_beta_terms(mod, s, Mt, pt)                      # eqs. 32, 34, 26, 42-45
            if k > 0:
                M_E, p_E = assembled_base_inertia(mod, s, ab, Mt, pt, fk)  # eqs. 48-49
            back[k] = (ab, fk)
        else:
            AE = s["AE"]
            MA = mod.M_B4 + AE.T @ M_E @ AE                            # eq. 50a
            pA = s["p"] + AE.T @ p_E                                   # eq. 50b
            U = MA @ mod.X                                             # psi^T, eq. 51
            D = mod.X @ U                                              # alpha
            u = f[k] - mod.X @ pA                                      # u
            if k > 0:
                Ma = MA - np.outer(U, U) / D                           # eq. 52a
                pa = pA + Ma @ s["c"] + U * (u / D)                    # eq. 52b
                A = s["A"]
                M_E, p_E = A.T @ Ma @ A, A.T @ pa                      # eqs. 52c-d (M_Bc = 0)
            back[k] = (U, D, u)
    xdd = np.empty(n)
    nud = _base_acceleration(chain, gravity)
    for k in range(n):                                  # second forward recursion
        mod, info, s = chain.modules[k], chain.info[k], first[k]
        if info.kind == "parallel":
            ab, fk = back[k]
            a = forward_dynamics_base_frame(ab, fk, nud)               # eq. 46
            xdd[k] = info.sx * a
            nud = s.AE @ (s.A1 @ nud + s.xi[1] * a + s.xi[2])          # eqs. 29a, 9b
        else:
            U, D, u = back[k]
            a = s["A"] @ nud + s["c"]
            xdd[k] = (u - U @ a) / D
            nud = s["AE"] @ (a + mod.X * xdd[k])
    return xdd


def chain_inverse_dynamics(chain: ModuleChain, x, xd, xdd, f_ext=None, gravity=None) -> np.ndarray:
    """Analytic inverse dynamics of the chain: actuator forces ``f`` (n,) for ``(x, xd, xdd)``.

    Forward recursion of accelerations (eqs. 7, 9 / 27, 29) from the base, backward recursion of
    wrenches: each parallel module by eqs. 11, 19, 65, 16 (App. A-B) and its base wrench eq. 38;
    each serial module by Newton-Euler (eq. 11) projected on its screw.  ``f_ext`` as in
    :func:`parallel_serial_forward_dynamics`."""
    first = _first_forward_pass(chain, x, xd)
    nud = _base_acceleration(chain, gravity)
    acc = []
    for mod, info, s, xdd_k in zip(chain.modules, chain.info, first, np.asarray(xdd, dtype=float).tolist()):
        if info.kind == "parallel":
            a = module_accelerations(mod, s, nud, info.sx * xdd_k)       # B1, B3, B4 (eq. 29)
            nud = s.AE @ a[0]                                            # E, eq. 9b
        else:
            a = s["A"] @ nud                                             # eq. 9
            a += s["c"]
            a += mod.X * xdd_k
            nud = s["AE"] @ a
        acc.append(a)
    f = [0.0] * chain.n
    F_E = _ee_wrench(chain, f_ext)
    for k in range(chain.n - 1, -1, -1):
        mod, info, s = chain.modules[k], chain.info[k], first[k]
        if info.kind == "parallel":
            fk, F_E, _ = parallel_inverse_dynamics(mod, s, acc[k], F_E)
            f[k] = info.sx * fk
        else:
            F = mod.M_B4 @ acc[k]                                        # eq. 11
            F += s["p"]
            F += F_E @ s["AE"]                                           # Ad*: wrench E -> B4
            f[k] = float(mod.X @ F)
            F_E = F @ s["A"]                                             # Ad*: wrench B4 -> Bc
    return np.array(f)


def chain_forward_kinematics(chain: ModuleChain, x) -> np.ndarray:
    """End-effector pose (4, 4) in the root link: product of the module poses (eqs. 2-3)."""
    C = chain.root_C_Bc.copy()
    for mod, info, xi in zip(chain.modules, chain.info, x):
        if info.kind == "parallel":
            st = closure(mod, info.sx * xi, 0.0)
            module_poses(mod, st)
            C = C @ st.P1
            E = mod.B1_C_E
        else:
            C = C @ mod.B @ exp_se3(mod.X, xi)
            E = mod.B4_C_E
        C = C @ E
    return C


def chain_tree_state(chain: ModuleChain, nq: int, x, xd, xdd) -> tuple:
    """Positions, velocities and accelerations (each (nq,)) of every tree joint with all loops
    closed: eqs. 2 (q, q1), 4-5 (rates) and 7, 27-28 (accelerations) per parallel module."""
    Q, QD, QDD = np.zeros(nq), np.zeros(nq), np.zeros(nq)
    for mod, info, xi, xdi, xddi in zip(chain.modules, chain.info, x, xd, xdd):
        if info.kind == "parallel":
            st = closure(mod, info.sx * xi, info.sx * xdi)
            a = info.sx * xddi
            jl, jc, jp = info.tree_idx
            (sl, sc), (rl, rc) = info.signs, info.refs
            k = st.k
            Q[jl], QD[jl], QDD[jl] = sl * (st.q - rl), sl * k[1] * st.xd, sl * (k[4] + k[1] * a)
            Q[jc], QD[jc], QDD[jc] = sc * (st.q1 - rc), sc * k[2] * st.xd, sc * (k[5] + k[2] * a)
            Q[jp], QD[jp], QDD[jp] = xi, xdi, xddi
        else:
            (j,) = info.tree_idx
            Q[j], QD[j], QDD[j] = xi, xdi, xddi
    return Q, QD, QDD


#: the bound (core.bounds) of each named state array; positions (and an IK seed, ``initial``)
#: are bounded by the strokes and, for a joint without limits (continuous), by MAX_POSITION
_STATE_BOUNDS = {"x": lambda a, name: check_position(a, name, "m or rad"),
                 "initial": lambda a, name: check_position(a, name, "m or rad"),
                 "xd": lambda a, name: check_rate(a, name, 1),
                 "xdd": lambda a, name: check_rate(a, name, 2),
                 "twist": lambda a, name: check_rate(a, name, 1),
                 "acceleration": lambda a, name: check_rate(a, name, 2),
                 "f": check_effort, "f_ext": check_effort}


def _as_state(name: str, v, n: int) -> np.ndarray:
    """``v`` as a float array (n,) or (batch, n), finite and within the bound of ``name``
    (:data:`_STATE_BOUNDS`); else :class:`StateError` naming it."""
    a = np.asarray(v, dtype=float)
    if a.shape[-1:] != (n,) or a.ndim not in (1, 2):
        raise StateError(f"{name} has shape {a.shape}, expected ({n},) or (batch, {n})")
    _STATE_BOUNDS.get(name, lambda a, name: check_bound(a, np.inf, name))(a, name)
    return a
