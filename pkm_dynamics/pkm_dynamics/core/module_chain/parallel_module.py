"""One linearly actuated 4-bar "parallel mechanism" of paper 000 (Paz & Mattila), Secs. 2-3, App. A-B.

The module is a planar closed chain of three passive revolute joints (q, q1, q2) and one
prismatic actuator x (paper Fig. 1).  Frames (paper notation; all z axes along the joint axes):

* ``Bc`` (= B0 = B2): on the base body, origin at the cylinder pivot, x toward the link pivot;
* ``B1``: on the output link, origin at the link pivot, ``Bc_C_B1 = T([L, 0, h]) Rz(q)``, x toward
  the rod-end pivot T1 = ``B1 + [L1, 0, 0]``; E: a frame on the output link where the next
  module (or the end effector) attaches, ``B1_C_E`` constant;
* ``B3``: on the cylinder barrel, ``Bc_C_B3 = Rz(q1)``, x along the cylinder;
* ``B4``: on the piston, ``B3_C_B4 = T([x + Lc0, 0, 0])``; the rod-end pivot P = T2 is at
  ``B4 + [Lc, 0, 0]``, so the pivot-to-pivot length is ``x + x0`` with ``x0 = Lc + Lc0``.

Conventions are those of :mod:`.spatial` (twist ``(omega, v)``, wrench ``(moment, force)``,
body-fixed quantities).  The paper writes ``Ad_{G_B^A}`` for the map of twists from frame A to
frame B; here that is ``Ad_inv(A_C_B)``, and ``Ad*`` is its transpose.  The paper's wrench
``[f^x, f^y, f^z, m^x, m^y, m^z]`` (eq. 54) becomes ``[m^x, m^y, m^z, f^x, f^y, f^z]``; the
projector Xi of App. B picks the indices ``(3, 4, 2)`` = ``(f^x, f^y, m^z)``.

Model data (:class:`ParallelModule`) and per-state data (:class:`ParallelModuleState`) are kept
apart; each function below is one step of the paper, named after it, numpy in and out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import SingularityError
from ..spatial.se3 import AD_POSE_FLAT, Ad_inv, ad_inv_pose_entries, wrench_bias_list
from ..status import SINGULAR_SIN

#: screw of a revolute joint about z and of a prismatic joint along x, (omega, v) layout
S_Z = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
S_X = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0])
#: indices of (f^x, f^y, m^z) in a (moment, force) wrench: the projector Xi of App. B
XI = (3, 4, 2)


@dataclass(frozen=True)
class ParallelModule:
    """Model data of one parallel module (lengths derived from the URDF geometry).

    ``L``: cylinder pivot to link pivot; ``L1``: link pivot to rod-end pivot; ``Lc0``: cylinder
    pivot to the piston frame B4 at x = 0; ``Lc``: B4 to the rod-end pivot; ``x0 = Lc + Lc0``
    (eq. 2a).  ``h``: offset of the link pivot along the joint axis.  ``M_B1``, ``M_B3``,
    ``M_B4`` (6, 6): spatial inertias of the output link, cylinder and piston about B1, B3, B4.
    ``B1_C_E`` (4, 4): the attachment frame E in B1.  The base body's own inertia belongs to
    the previous module (M_B0 = 0 in eqs. 37-49), so chained modules count every body once.
    """

    name: str
    L: float
    L1: float
    Lc: float
    Lc0: float
    h: float
    M_B1: np.ndarray
    M_B3: np.ndarray
    M_B4: np.ndarray
    B1_C_E: np.ndarray
    x_lower: float = -np.inf
    x_upper: float = np.inf

    def __post_init__(self):
        object.__setattr__(self, "AE", Ad_inv(self.B1_C_E))   # twists B1 -> E (constant)
        M = np.stack([self.M_B1, self.M_B3, self.M_B4])        # (3, 6, 6), body order B1, B3, B4
        M.setflags(write=False)
        object.__setattr__(self, "M", M)

    @property
    def x0(self) -> float:
        return self.Lc + self.Lc0


@dataclass(slots=True)
class ParallelModuleState:
    """Per-state data of one module (filled by :func:`closure` and :func:`module_kinematics`).

    The three moving bodies are also kept stacked in the order B1 (link), B3 (cylinder), B4
    (piston), so that one numpy call treats all three: ``A`` (3, 6, 6) holds A1, A3, A4,
    ``nus``, ``ps``, ``xa``, ``xb`` (3, 6) the twists, wrench biases and the acceleration
    coefficients of eq. 29 (``nu_dot_i = A_i nu_dot_Bc + xa_i xdd + xb_i``, i.e. xi_1, xi_4,
    xi_7 and xi_2, xi_5, xi_8 of eq. 30); the per-body names below are views of these."""

    x: float
    xd: float
    q: float
    q1: float
    q2: float
    k: tuple                 # (7,) k[1..6] of eqs. 5 and 28 (k[0] unused)
    P1: np.ndarray = None    # Bc_C_B1 (4, 4)
    P3: np.ndarray = None    # Bc_C_B3
    P43: np.ndarray = None   # B3_C_B4
    P4: np.ndarray = None    # Bc_C_B4
    A: np.ndarray = None     # (3, 6, 6): A1, A3, A4
    A1: np.ndarray = None    # Ad_inv(P1): twists Bc -> B1 (6, 6)
    A3: np.ndarray = None
    A4: np.ndarray = None
    AE: np.ndarray = None    # Ad_inv(B1_C_E): twists B1 -> E
    nus: np.ndarray = None   # (3, 6) twists of B1, B3, B4
    ps: np.ndarray = None    # (3, 6) wrench biases of B1, B3, B4
    xa: np.ndarray = None    # (3, 6) xi_1, xi_4, xi_7
    xb: np.ndarray = None    # (3, 6) xi_2, xi_5, xi_8
    nu: dict = None          # twists of Bc, B1, B3, B4, E (6,)
    p: dict = None           # wrench biases p_B1, p_B3, p_B4 (eq. 12)
    xi: dict = None          # xi_1, xi_2, xi_4, xi_5, xi_7, xi_8 (eq. 30)


#: flat indices of the entries of :func:`.spatial.ad_inv_pose_entries` in the stack (3, 6, 6) of B1,
#: B3, B4, and the stack with its constant ones
_AD_STACK_FLAT = np.array([36 * k + i for k in range(3) for i in AD_POSE_FLAT])
_AD_STACK_ONES = np.zeros((3, 6, 6))
_AD_STACK_ONES[:, 2, 2] = _AD_STACK_ONES[:, 5, 5] = 1.0


def closure(mod: ParallelModule, x: float, xd: float) -> ParallelModuleState:
    """Closed-chain kinematics of the module from the actuator state, eqs. 2, 4-5, 7, 27-28.

    ``d = x + x0``; eq. 2a inverted on the branch q < 0 gives
    ``q = -acos((d^2 - L^2 - L1^2) / (2 L L1))``; eqs. 2b-2c give q1 and q2; eq. 5 the velocity
    ratios ``k1, k2, k3`` (``qd = k1 xd``, ``qd1 = k2 xd``, ``qd2 = k3 xd``, eq. 4); their time
    derivatives give ``k4 = k1' xd, k5 = k2' xd, k6 = k3' xd`` (eq. 28) so that
    ``qdd = k4 + k1 xdd`` etc. (eqs. 7, 27).

    Raises :class:`SingularityError` naming the module and the value when ``x + x0`` leaves
    ``[|L - L1|, L + L1]`` or when q, q1 or q2 is 0 (or pi): the loop is straight and eq. 5 breaks.
    """
    L, L1 = mod.L, mod.L1
    d = x + mod.x0
    lo, hi = abs(L - L1), L + L1
    if not (lo < d < hi):
        raise SingularityError(
            f"module '{mod.name}': x = {x:.6g} m gives pivot distance x + x0 = {d:.6g} m outside the "
            f"open range ({lo:.6g}, {hi:.6g}) m where the loop closes (eq. 2a)")
    cq = (d * d - L * L - L1 * L1) / (2.0 * L * L1)
    c1 = (d * d + L * L - L1 * L1) / (2.0 * d * L)       # eq. 2b: q1 = -acos(c1)
    c2 = (d * d + L1 * L1 - L * L) / (2.0 * d * L1)      # eq. 2c: q2 = -acos(c2)
    q = -math.acos(min(1.0, max(-1.0, cq)))
    q1 = -math.acos(min(1.0, max(-1.0, c1)))
    q2 = -math.acos(min(1.0, max(-1.0, c2)))
    s, s1, s2 = math.sin(q), math.sin(q1), math.sin(q2)
    for nm, v, sv in (("q", q, s), ("q1", q1, s1), ("q2", q2, s2)):
        if abs(sv) < SINGULAR_SIN:
            raise SingularityError(f"module '{mod.name}': passive angle {nm} = {v:.6g} rad at x = {x:.6g} m "
                                   "is singular (eq. 5 requires q, q1, q2 != 0)")
    k1 = -d / (L * L1 * s)                                  # eq. 5a
    k2 = -(d - L * c1) / (d * L * s1)                       # eq. 5b (cos q1 = c1)
    k3 = -(d - L1 * c2) / (d * L1 * s2)                     # eq. 5c
    qd, qd1, qd2 = k1 * xd, k2 * xd, k3 * xd                # eq. 4
    # time derivatives of eq. 5 (quotient rule), then eq. 28
    k1d = -xd / (L * L1 * s) + d * math.cos(q) * qd / (L * L1 * s * s)
    num, den = -(d - L * c1), d * L * s1
    k2d = (-(xd + L * s1 * qd1) * den - num * L * (xd * s1 + d * c1 * qd1)) / (den * den)
    num, den = -(d - L1 * c2), d * L1 * s2
    k3d = (-(xd + L1 * s2 * qd2) * den - num * L1 * (xd * s2 + d * c2 * qd2)) / (den * den)
    k = (0.0, k1, k2, k3, k1d * xd, k2d * xd, k3d * xd)
    return ParallelModuleState(x, xd, q, q1, q2, k)


def _pose_rz(c: float, s: float, px: float, py: float, pz: float) -> np.ndarray:
    """The pose ``T(p) Rz(theta)`` (``c, s = cos, sin theta``)."""
    return np.array([[c, -s, 0.0, px], [s, c, 0.0, py], [0.0, 0.0, 1.0, pz], [0.0, 0.0, 0.0, 1.0]])


def module_poses(mod: ParallelModule, st: ParallelModuleState) -> None:
    """Poses of B1, B3, B4 in Bc (eq. 3: ``G = exp([s] q)`` about the z / x screws) and the
    adjoint maps used by eqs. 6 and 9 (:func:`module_adjoints`); stored in ``st``."""
    c, s = math.cos(st.q), math.sin(st.q)
    c1, s1 = math.cos(st.q1), math.sin(st.q1)
    ka = st.x + mod.Lc0
    st.P1 = _pose_rz(c, s, mod.L, 0.0, mod.h)                # T([L, 0, h]) Rz(q)
    st.P3 = _pose_rz(c1, s1, 0.0, 0.0, 0.0)                  # Rz(q1)
    st.P43 = _pose_rz(1.0, 0.0, ka, 0.0, 0.0)                # T([x + Lc0, 0, 0])
    st.P4 = _pose_rz(c1, s1, c1 * ka, s1 * ka, 0.0)          # P3 P43
    module_adjoints(mod, st)


def module_adjoints(mod: ParallelModule, st: ParallelModuleState) -> None:
    """The adjoint maps ``Ad(P)^-1`` of the poses of :func:`module_poses` (twists Bc -> B1,
    Bc -> B3, Bc -> B4, B1 -> E) used by eqs. 6 and 9, without the poses themselves (the
    dynamics need only these); stored in ``st``.  (B3 -> B4 is a translation along x by
    ``x + Lc0``; where it is needed, eqs. 6d and 30g-h, it is written out.)"""
    c, s = math.cos(st.q), math.sin(st.q)
    c1, s1 = math.cos(st.q1), math.sin(st.q1)
    ka = st.x + mod.Lc0
    st.A = A = _AD_STACK_ONES.copy()
    A.reshape(108)[_AD_STACK_FLAT] = (ad_inv_pose_entries(c, s, mod.L, 0.0, mod.h)
                                          + ad_inv_pose_entries(c1, s1, 0.0, 0.0, 0.0)
                                          + ad_inv_pose_entries(c1, s1, c1 * ka, s1 * ka, 0.0))
    st.A1, st.A3, st.A4 = A
    st.AE = mod.AE


def module_kinematics(mod: ParallelModule, st: ParallelModuleState, nu_Bc: np.ndarray) -> None:
    """First forward pass of Algorithm 1 for a parallel module (lines 4-7).

    Twists (eq. 6a, 6c, 6d, 6b), acceleration biases ``c_i = ad(nu_i) s_i qd_i`` (eq. 10, kept
    inside xi_2, xi_5, xi_8), wrench biases ``p_i = -ad*(nu_i) M_i nu_i`` (eq. 12) and the
    elements xi_1, xi_2, xi_4, xi_5, xi_7, xi_8 of eq. 30 (those independent of the base
    acceleration).
    ``nu_Bc`` (6,): twist of the base frame Bc.  Results are stored in ``st``; the adjoint maps
    come from :func:`module_adjoints` (or :func:`module_poses`), computed here if missing.

    The three bodies go through together: eq. 6d ``nu_B4 = Ad nu_B3 + s_x xd`` is written as
    ``A4 nu_Bc + Ad s_z qd1 + s_x xd`` with ``Ad s_z = (0, 0, 1, 0, x + Lc0, 0)``, so that
    ``nus = A nu_Bc + (joint-rate twists)`` is one product; likewise eq. 30g
    ``xi_7 = Ad s_z k2 + s_x`` and eq. 30h, ``Ad xi_5 = (w, v + w x (x + Lc0) e_x)``."""
    if st.A is None:
        module_adjoints(mod, st)
    _, k1, k2, _, k4, k5, _ = st.k
    xd = st.xd
    qd, qd1 = k1 * xd, k2 * xd
    ka = st.x + mod.Lc0
    nus = (st.A.reshape(18, 6) @ nu_Bc).reshape(3, 6)
    nus[0, 2] += qd                                         # eq. 6a (+ s_z qd)
    nus[1, 2] += qd1                                        # eq. 6c (+ s_z qd1)
    nus[2, 2] += qd1                                        # eq. 6d (+ Ad s_z qd1 + s_x xd)
    nus[2, 3] += xd
    nus[2, 4] += ka * qd1
    n1, n3, n4 = nu_rows = nus.tolist()
    h = np.matmul(mod.M, nus[:, :, None]).reshape(3, 6).tolist()
    ps_rows = [wrench_bias_list(v, hv) for v, hv in zip(nu_rows, h)]              # eq. 12
    c1 = [n1[1] * qd, -n1[0] * qd, 0.0, n1[4] * qd, -n1[3] * qd, 0.0]            # eq. 10, s_z
    c3 = [n3[1] * qd1, -n3[0] * qd1, 0.0, n3[4] * qd1, -n3[3] * qd1, 0.0]        # eq. 10, s_z
    c4 = [0.0, 0.0, 0.0, 0.0, n4[2] * xd, -n4[1] * xd]                         # eq. 10, s_x
    xi5 = c3.copy()
    xi5[2] += k5                                            # eq. 30e: s_z k5 + c3
    w0, w1, w2, v0, v1, v2 = xi5
    xi8 = [w0, w1, w2, v0, v1 + ka * w2 + c4[4], v2 - ka * w1 + c4[5]]   # eq. 30h: Ad xi_5 + c4
    xi2 = c1.copy()
    xi2[2] += k4                                            # eq. 30b: s_z k4 + c1
    rows = np.array([ps_rows,
                     [[0.0, 0.0, k1, 0.0, 0.0, 0.0],       # eq. 30a: s_z k1
                      [0.0, 0.0, k2, 0.0, 0.0, 0.0],       # eq. 30d: s_z k2
                      [0.0, 0.0, k2, 1.0, ka * k2, 0.0]],  # eq. 30g: Ad s_z k2 + s_x
                     [xi2, xi5, xi8]])
    st.ps, st.xa, st.xb = ps, xa, xb = rows
    st.nus = nus
    nu1, nu3, nu4 = nus
    st.nu = {"Bc": nu_Bc, "B1": nu1, "B3": nu3, "B4": nu4, "E": st.AE @ nu1}   # eq. 6b
    st.p = {"B1": ps[0], "B3": ps[1], "B4": ps[2]}
    st.xi = {1: xa[0], 2: xb[0], 4: xa[1], 5: xb[1], 7: xa[2], 8: xb[2]}


def loop_statics_matrix(mod: ParallelModule, x: float, q2: float) -> np.ndarray:
    """The 7x7 matrix A of eq. 60 (App. A, eq. 57 ``A F_psi = F_hat_psi``) with
    ``F_psi = [f_P^x, f_P^y, f_B4^x, f_B4^y, m_B4^z, f_B3^x, f_B3^y]`` (eq. 58)."""
    L1, Lc, Lc0 = mod.L1, mod.Lc, mod.Lc0
    s, c = math.sin(q2), math.cos(q2)
    return np.array([
        [-L1 * s, L1 * c, 0, 0, 0, 0, 0],
        [1, 0, -1, 0, 0, 0, 0],
        [0, 1, 0, -1, 0, 0, 0],
        [0, Lc, 0, 0, -1, 0, 0],
        [0, 0, 0, x + Lc0, 1, 0, 0],
        [0, 0, 1, 0, 0, -1, 0],
        [0, 0, 0, 1, 0, 0, -1],
    ], dtype=float)


def loop_statics_rhs(Ft_B1: np.ndarray, Fh_B3: np.ndarray, Fh_B4: np.ndarray) -> np.ndarray:
    """Right-hand side ``F_hat_psi`` of eq. 57 (eq. 59) from the (6,) wrenches ``F~_B1``
    (eq. 19), ``F^_B3``, ``F^_B4`` (eq. 11), with the signs of the body balances eqs. 13-14:
    ``[m~z_B1, -f^x_B4, -f^y_B4, -m^z_B4, -m^z_B3, -f^x_B3, -f^y_B3]``."""
    return np.array([Ft_B1[2], -Fh_B4[3], -Fh_B4[4], -Fh_B4[2], -Fh_B3[2], -Fh_B3[3], -Fh_B3[4]])


def actuator_wrench_maps(mod: ParallelModule, x: float, q2: float) -> tuple:
    """The matrices ``K1, K3, K4`` (6, 6) of eqs. 62-64: ``F_B4 = K1 F~_B1 + K3 F^_B3 + K4 F^_B4``
    (eq. 65), the in-plane part of the solution of eq. 57 (``A^-1`` rows 3-5 times the
    commutation matrix C), lifted from se*(2) to se*(3) with ``K_i = Xi^T K_i_bar Xi`` (eq. 64).

    With ``k_a = x + Lc0``, ``k_b = -L1 sin q2``, ``k_c = L1 cos q2``, ``k_e = k_a + Lc``,
    ``k_f = k_c / (k_b k_e)``, ``k_g = Lc / k_e``::

        K1_bar = [[0, 0, 1/k_b], 0, 0]      K3_bar = [[0, 0, k_f],      K4_bar = [[1, k_a k_f, k_f],
                                                      [0, 0, -1/k_e],             [0, k_g,  -1/k_e],
                                                      [0, 0, -k_g]]               [0, -k_a k_g, k_a/k_e]]

    (rows ``f^x, f^y, m^z`` of F_B4; columns ``f^x, f^y, m^z`` of the wrench it multiplies).
    NB: the printed eq. 62 has ``+1/k_e`` in row 2, column 9; solving eq. 57 gives ``-1/k_e``
    (the row-1 entry ``k_f`` of the same column is only consistent with the minus sign).
    The solution exists iff ``det A = -L1 sin q2 (x + x0) != 0`` (after eq. 61);
    :class:`SingularityError` otherwise."""
    L1, Lc = mod.L1, mod.Lc
    ka = x + mod.Lc0
    kb = -L1 * math.sin(q2)
    kc = L1 * math.cos(q2)
    ke = ka + Lc
    detA = kb * ke
    if abs(detA) < SINGULAR_SIN * max(1.0, L1 * ke):
        raise SingularityError(f"module '{mod.name}': det A = -L1 sin(q2) (x + x0) = {detA:.3g} at x = {x:.6g} m, "
                               f"q2 = {q2:.6g} rad (eq. 61): the actuator force is undetermined")
    kf = kc / (kb * ke)
    kg = Lc / ke
    Kb1 = np.array([[0, 0, 1 / kb], [0, 0, 0], [0, 0, 0]])
    Kb3 = np.array([[0, 0, kf], [0, 0, -1 / ke], [0, 0, -kg]])
    Kb4 = np.array([[1, ka * kf, kf], [0, kg, -1 / ke], [0, -ka * kg, ka / ke]])
    out = []
    for Kb in (Kb1, Kb3, Kb4):
        K = np.zeros((6, 6))
        K[np.ix_(XI, XI)] = Kb                               # eq. 64
        out.append(K)
    return tuple(out)


def actuator_force_rows(mod: ParallelModule, x: float, q2: float) -> np.ndarray:
    """``s_x^T K1, s_x^T K3, s_x^T K4`` (rows of a (3, 6) array): the only rows of eqs. 62-64 that eq. 34 and
    eq. 16 need (``f_B4^x = s_x^T F_B4``), i.e. the first rows of K1_bar, K3_bar, K4_bar of
    :func:`actuator_wrench_maps` placed at (f^x, f^y, m^z).  Same singularity check."""
    L1 = mod.L1
    ka = x + mod.Lc0
    kb = -L1 * math.sin(q2)
    ke = ka + mod.Lc
    detA = kb * ke
    if abs(detA) < SINGULAR_SIN * max(1.0, L1 * ke):
        actuator_wrench_maps(mod, x, q2)          # raises with the full message
    kf = L1 * math.cos(q2) / detA
    return np.array([[0.0, 0.0, 1.0 / kb, 0.0, 0.0, 0.0],
                     [0.0, 0.0, kf, 0.0, 0.0, 0.0],
                     [0.0, 0.0, kf, 1.0, ka * kf, 0.0]])


def assembled_link_inertia(mod: ParallelModule, st: ParallelModuleState, M_E: np.ndarray, p_E: np.ndarray) -> tuple:
    """``M~_B1 = M_B1 + Ad* M^A_E Ad`` (eq. 23) and ``p~_B1 = p_B1 + Ad* p^A_E`` (eq. 24) from the
    assembled inertia ``M_E`` (6, 6) and bias ``p_E`` (6,) at E (eq. 21; external wrench included,
    eq. 20)."""
    AE = st.AE
    return mod.M_B1 + AE.T @ M_E @ AE, st.p["B1"] + AE.T @ p_E


def alpha_beta_terms(mod: ParallelModule, st: ParallelModuleState, Mt: np.ndarray, pt: np.ndarray) -> dict:
    """Scalar inverse-dynamics coefficients of the module, Sec. 3.1-3.2.

    With the rows ``r_i = s_x^T K_i`` (eqs. 62-64): ``alpha = s_x^T xi*_alpha`` (eqs. 32, 34),
    ``xi*_gamma`` (eq. 26), ``Psi`` (eq. 42), ``xi*_delta`` (eq. 43), ``psi = s_x^T Psi`` and
    ``delta = s_x^T xi*_delta`` (eq. 45), so that ``beta = psi nu_dot_Bc + delta`` (eq. 44) and
    ``f = alpha xdd + beta`` (eq. 35).  ``Mt``, ``pt``: ``M~_B1``, ``p~_B1`` of eqs. 23-24.
    Returns a dict with ``alpha`` (float), ``psi`` (6,), ``delta`` (float), ``rows`` (r1, r3, r4)."""
    r1, r3, r4 = actuator_force_rows(mod, st.x, st.q2)
    xi = st.xi
    M3, M4 = mod.M_B3, mod.M_B4
    w1, w3, w4 = r1 @ Mt, r3 @ M3, r4 @ M4                  # s_x^T K_i M_i  (1x6 each)
    alpha = w1 @ xi[1] + w3 @ xi[4] + w4 @ xi[7]             # eqs. 32, 34
    gamma = r1 @ pt + r3 @ st.p["B3"] + r4 @ st.p["B4"]      # s_x^T xi*_gamma, eq. 26
    psi = w1 @ st.A1 + w3 @ st.A3 + w4 @ st.A4               # s_x^T Psi, eqs. 42, 45
    delta = w1 @ xi[2] + w3 @ xi[5] + w4 @ xi[8] + gamma     # s_x^T xi*_delta, eqs. 43, 45
    if not abs(alpha) > 0.0:
        raise SingularityError(f"module '{mod.name}': actuator inertia alpha = {alpha:.3g} at x = {st.x:.6g} m "
                               "(eq. 36)")
    return {"alpha": float(alpha), "psi": psi, "delta": float(delta), "rows": (r1, r3, r4)}


def forward_dynamics_scalar(alpha: float, beta: float, f: float) -> float:
    """Scalar forward dynamics of one module, eq. 36: ``xdd = (f - beta) / alpha``."""
    return (f - beta) / alpha


def forward_dynamics_base_frame(ab: dict, f: float, nud_Bc: np.ndarray) -> float:
    """Forward dynamics in terms of the base acceleration, eq. 46:
    ``xdd = (f - psi nu_dot_Bc - delta) / alpha``."""
    return (f - ab["psi"] @ nud_Bc - ab["delta"]) / ab["alpha"]


def assembled_base_inertia(mod: ParallelModule, st: ParallelModuleState, ab: dict, Mt: np.ndarray,
                           pt: np.ndarray, f: float) -> tuple:
    """Assembled inertia ``M^A_Bc`` (6, 6) and bias ``p^A_Bc`` (6,) of the module at Bc,
    eqs. 47-49 (with ``M_B0 = 0``, ``p_B0 = 0``: the base body is counted by the previous module),
    so that the wrench the module exerts on its base is ``F_Bc = M^A_Bc nu_dot_Bc + p^A_Bc`` (eq. 37)."""
    alpha, psi, delta = ab["alpha"], ab["psi"], ab["delta"]
    xi = st.xi
    u = (f - delta) / alpha
    x1 = xi[1] * u + xi[2]                                   # eq. 48d
    x3 = xi[4] * u + xi[5]                                   # eq. 48e
    x4 = xi[7] * u + xi[8]                                   # eq. 48f
    # eq. 49a with Psi_i = A_i - xi_i psi^T / alpha (eqs. 48a-c):
    # M^A = sum_i A_i^T M_i A_i - (sum_i A_i^T M_i xi_i) psi^T / alpha
    AM1, AM3, AM4 = st.A1.T @ Mt, st.A3.T @ mod.M_B3, st.A4.T @ mod.M_B4
    h = AM1 @ xi[1] + AM3 @ xi[4] + AM4 @ xi[7]
    MA = AM1 @ st.A1 + AM3 @ st.A3 + AM4 @ st.A4 - np.outer(h, psi / alpha)       # eq. 49a
    pA = (AM1 @ x1 + AM3 @ x3 + AM4 @ x4
          + st.A1.T @ pt + st.A3.T @ st.p["B3"] + st.A4.T @ st.p["B4"])            # eq. 49b
    return MA, pA


def module_accelerations(mod: ParallelModule, st: ParallelModuleState, nud_Bc: np.ndarray, xdd: float) -> np.ndarray:
    """Spatial accelerations (3, 6) of B1, B3, B4 for a known ``xdd`` (eqs. 29a-c, 30);
    that of E is ``st.AE @ acc[0]`` (eq. 9b)."""
    acc = (st.A.reshape(18, 6) @ nud_Bc).reshape(3, 6)     # eqs. 29a-c
    acc += st.xa * xdd
    acc += st.xb
    return acc


def parallel_inverse_dynamics(mod: ParallelModule, st: ParallelModuleState, acc: np.ndarray, F_E: np.ndarray) -> tuple:
    """Analytic inverse dynamics of one module (App. A-B): actuator force and base wrench.

    ``F~_B1 = M_B1 nu_dot_B1 + p_B1 + Ad* F_E`` (eqs. 11, 19), ``F^_B3``, ``F^_B4`` (eq. 11),
    ``F_B4 = K1 F~_B1 + K3 F^_B3 + K4 F^_B4`` (eq. 65), ``f = s_x^T F_B4`` (eq. 16), and the
    wrench on the base frame without internal loop forces, eq. 38 (``F^_B0 = 0``: counted by
    the previous module).  ``acc`` (3, 6): accelerations of B1, B3, B4
    (:func:`module_accelerations`); ``F_E`` (6,): wrench the link transmits at E to the next
    module (or minus the external wrench at the end effector).  Returns ``(f, F_Bc (6,),
    F (3, 6))`` with the rows ``F~_B1, F^_B3, F^_B4``."""
    F = np.matmul(mod.M, acc[:, :, None]).reshape(3, 6)     # eq. 11, three bodies
    F += st.ps
    F[0] += F_E @ st.AE                                     # eq. 19: Ad* F_E
    f = actuator_force_rows(mod, st.x, st.q2).reshape(18) @ F.reshape(18)   # eqs. 65, 16
    F_Bc = F.reshape(18) @ st.A.reshape(18, 6)              # eq. 38: sum_i A_i^T F_i
    return float(f), F_Bc, F
