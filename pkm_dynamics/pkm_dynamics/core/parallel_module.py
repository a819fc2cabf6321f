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

from .errors import SingularityError
from .spatial import Ad_inv

#: screw of a revolute joint about z and of a prismatic joint along x, (omega, v) layout
S_Z = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
S_X = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0])
#: indices of (f^x, f^y, m^z) in a (moment, force) wrench: the projector Xi of App. B
XI = (3, 4, 2)
#: |sin| below which q, q1 or q2 count as singular (paper eq. 5: "q, q1 and q2 != 0")
SINGULAR_SIN = 1e-9


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

    @property
    def x0(self) -> float:
        return self.Lc + self.Lc0


@dataclass
class ParallelModuleState:
    """Per-state data of one module (filled by :func:`closure` and :func:`module_kinematics`)."""

    x: float
    xd: float
    q: float
    q1: float
    q2: float
    k: np.ndarray            # (7,) k[1..6] of eqs. 5 and 28 (k[0] unused)
    P1: np.ndarray = None    # Bc_C_B1 (4, 4)
    P3: np.ndarray = None    # Bc_C_B3
    P43: np.ndarray = None   # B3_C_B4
    P4: np.ndarray = None    # Bc_C_B4
    A1: np.ndarray = None    # Ad_inv(P1): twists Bc -> B1 (6, 6)
    A3: np.ndarray = None
    A43: np.ndarray = None
    A4: np.ndarray = None
    AE: np.ndarray = None    # Ad_inv(B1_C_E): twists B1 -> E
    nu: dict = None          # twists of Bc, B1, B3, B4, E (6,)
    c: dict = None           # acceleration biases c_B1, c_B3, c_B4 (eq. 10)
    p: dict = None           # wrench biases p_B1, p_B3, p_B4 (eq. 12)
    xi: dict = None          # xi_1, xi_2, xi_4, xi_5, xi_7, xi_8 (eq. 30)


def _ad_inv_pose(c: float, s: float, px: float, py: float, pz: float) -> np.ndarray:
    """``Ad_inv`` of the pose ``T(p) Rz(theta)`` (``c, s = cos, sin theta``), written out:
    ``[[R^T, 0], [-R^T [p]x, R^T]]`` (same as :func:`.spatial.Ad_inv`, without the generic path)."""
    return np.array([
        [c, s, 0.0, 0.0, 0.0, 0.0],
        [-s, c, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
        [-s * pz, c * pz, -c * py + s * px, c, s, 0.0],
        [-c * pz, -s * pz, s * py + c * px, -s, c, 0.0],
        [py, -px, 0.0, 0.0, 0.0, 1.0],
    ])


def _bias_rz(nu: np.ndarray, qd: float) -> np.ndarray:
    """``ad(nu) s_z qd`` (eq. 10 for a revolute joint about z) = ``(w x e_z, v x e_z) qd``."""
    w0, w1, _, v0, v1, _ = nu.tolist()
    return np.array([w1 * qd, -w0 * qd, 0.0, v1 * qd, -v0 * qd, 0.0])


def _bias_px(nu: np.ndarray, xd: float) -> np.ndarray:
    """``ad(nu) s_x xd`` (eq. 10 for a prismatic joint along x) = ``(0, w x e_x) xd``."""
    _, w1, w2 = nu[:3].tolist()
    return np.array([0.0, 0.0, 0.0, 0.0, w2 * xd, -w1 * xd])


def wrench_bias(M: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """``p = -ad*(nu) M nu`` (eq. 12) = ``(w x h_m + v x h_f, w x h_f)`` with ``h = M nu``."""
    a, b, c, d, e, f = nu.tolist()
    hm0, hm1, hm2, hf0, hf1, hf2 = (M @ nu).tolist()
    return np.array([
        b * hm2 - c * hm1 + e * hf2 - f * hf1,
        c * hm0 - a * hm2 + f * hf0 - d * hf2,
        a * hm1 - b * hm0 + d * hf1 - e * hf0,
        b * hf2 - c * hf1,
        c * hf0 - a * hf2,
        a * hf1 - b * hf0,
    ])


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
    k = np.array([0.0, k1, k2, k3, k1d * xd, k2d * xd, k3d * xd])
    return ParallelModuleState(x=x, xd=xd, q=q, q1=q1, q2=q2, k=k)


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
    Bc -> B3, B3 -> B4, Bc -> B4, B1 -> E) used by eqs. 6 and 9, without the poses themselves
    (the dynamics need only these); stored in ``st``."""
    c, s = math.cos(st.q), math.sin(st.q)
    c1, s1 = math.cos(st.q1), math.sin(st.q1)
    ka = st.x + mod.Lc0
    st.A1 = _ad_inv_pose(c, s, mod.L, 0.0, mod.h)
    st.A3 = _ad_inv_pose(c1, s1, 0.0, 0.0, 0.0)
    st.A43 = _ad_inv_pose(1.0, 0.0, ka, 0.0, 0.0)
    st.A4 = _ad_inv_pose(c1, s1, c1 * ka, s1 * ka, 0.0)
    st.AE = mod.AE


def module_kinematics(mod: ParallelModule, st: ParallelModuleState, nu_Bc: np.ndarray) -> None:
    """First forward pass of Algorithm 1 for a parallel module (lines 4-7).

    Twists (eq. 6a, 6c, 6d, 6b), acceleration biases ``c_i = ad(nu_i) s_i qd_i`` (eq. 10),
    wrench biases ``p_i = -ad*(nu_i) M_i nu_i`` (eq. 12) and the elements xi_1, xi_2, xi_4,
    xi_5, xi_7, xi_8 of eq. 30 (those independent of the base acceleration).
    ``nu_Bc`` (6,): twist of the base frame Bc.  Results are stored in ``st``; the adjoint maps
    come from :func:`module_adjoints` (or :func:`module_poses`), computed here if missing."""
    if st.A1 is None:
        module_adjoints(mod, st)
    k1, k2, _, k4, k5, _ = st.k[1:].tolist()
    qd, qd1 = k1 * st.xd, k2 * st.xd
    nu1 = st.A1 @ nu_Bc
    nu1[2] += qd                                            # eq. 6a (+ s_z qd)
    nu3 = st.A3 @ nu_Bc
    nu3[2] += qd1                                           # eq. 6c (+ s_z qd1)
    nu4 = st.A43 @ nu3
    nu4[3] += st.xd                                         # eq. 6d (+ s_x xd)
    nuE = st.AE @ nu1                                       # eq. 6b
    c1 = _bias_rz(nu1, qd)                                  # eq. 10
    c3 = _bias_rz(nu3, qd1)
    c4 = _bias_px(nu4, st.xd)
    st.nu = {"Bc": nu_Bc, "B1": nu1, "B3": nu3, "B4": nu4, "E": nuE}
    st.c = {"B1": c1, "B3": c3, "B4": c4}
    st.p = {"B1": wrench_bias(mod.M_B1, nu1),               # eq. 12
            "B3": wrench_bias(mod.M_B3, nu3),
            "B4": wrench_bias(mod.M_B4, nu4)}
    xi2 = c1.copy()
    xi2[2] += k4
    xi4 = S_Z * k2
    xi5 = c3.copy()
    xi5[2] += k5
    xi7 = st.A43 @ xi4
    xi7[3] += 1.0
    st.xi = {1: S_Z * k1,                                   # eq. 30a
             2: xi2,                                        # eq. 30b: s_z k4 + c1
             4: xi4,                                        # eq. 30d
             5: xi5,                                        # eq. 30e: s_z k5 + c3
             7: xi7,                                        # eq. 30g: Ad s_z k2 + s_x
             8: st.A43 @ xi5 + c4}                          # eq. 30h


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


def actuator_force_rows(mod: ParallelModule, x: float, q2: float) -> tuple:
    """``s_x^T K1, s_x^T K3, s_x^T K4`` (each (6,)): the only rows of eqs. 62-64 that eq. 34 and
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
    r1 = np.array([0.0, 0.0, 1.0 / kb, 0.0, 0.0, 0.0])
    r3 = np.array([0.0, 0.0, kf, 0.0, 0.0, 0.0])
    r4 = np.array([0.0, 0.0, kf, 1.0, ka * kf, 0.0])
    return r1, r3, r4


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
        raise SingularityError(f"module '{mod.name}': actuator inertia alpha = {alpha:.3g} at x = {st.x:.6g} m (eq. 36)")
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


def module_accelerations(mod: ParallelModule, st: ParallelModuleState, nud_Bc: np.ndarray, xdd: float) -> dict:
    """Spatial accelerations of B1, B3, B4 and E for a known ``xdd`` (eqs. 29a-c, 30, 9b)."""
    xi = st.xi
    a1 = st.A1 @ nud_Bc + xi[1] * xdd + xi[2]               # eq. 29a
    a3 = st.A3 @ nud_Bc + xi[4] * xdd + xi[5]               # eq. 29b
    a4 = st.A4 @ nud_Bc + xi[7] * xdd + xi[8]               # eq. 29c
    return {"B1": a1, "B3": a3, "B4": a4, "E": st.AE @ a1}


def parallel_inverse_dynamics(mod: ParallelModule, st: ParallelModuleState, acc: dict, F_E: np.ndarray) -> tuple:
    """Analytic inverse dynamics of one module (App. A-B): actuator force and base wrench.

    ``F~_B1 = M_B1 nu_dot_B1 + p_B1 + Ad* F_E`` (eqs. 11, 19), ``F^_B3``, ``F^_B4`` (eq. 11),
    ``F_B4 = K1 F~_B1 + K3 F^_B3 + K4 F^_B4`` (eq. 65), ``f = s_x^T F_B4`` (eq. 16), and the
    wrench on the base frame without internal loop forces, eq. 38 (``F^_B0 = 0``: counted by
    the previous module).  ``F_E`` (6,): wrench the link transmits at E to the next module (or
    minus the external wrench at the end effector).  Returns ``(f, F_Bc (6,), wrenches dict)``."""
    Ft1 = mod.M_B1 @ acc["B1"] + st.p["B1"] + st.AE.T @ F_E
    Fh3 = mod.M_B3 @ acc["B3"] + st.p["B3"]
    Fh4 = mod.M_B4 @ acc["B4"] + st.p["B4"]
    r1, r3, r4 = actuator_force_rows(mod, st.x, st.q2)
    f = r1 @ Ft1 + r3 @ Fh3 + r4 @ Fh4                       # eqs. 65, 16
    F_Bc = st.A1.T @ Ft1 + st.A3.T @ Fh3 + st.A4.T @ Fh4      # eq. 38
    return float(f), F_Bc, {"B1": Ft1, "B3": Fh3, "B4": Fh4}
