"""Layout of the flat model and scratch arrays of the compiled module-chain kernels (paper 000,
Paz & Mattila): every column and slot a named constant carrying the paper's symbol, so that a
kernel reads ``S[k, ALPHA]`` as eq. 32 does; and the views of the two flat buffers
(:func:`model_arrays`, :func:`scratch_arrays`).  Module-level ints and slices are compile-time
constants in numba: naming them costs nothing at run time.

n modules; :class:`.chain_model.ChainModel` fills the model, :class:`.chain_model.ChainData`
holds the scratch:

* ``geo`` (n, 24), one row per module: :data:`KIND` (:data:`PARALLEL` or :data:`SERIAL`),
  :data:`SX` (sign of the actuator coordinate), :data:`LOWER`, :data:`UPPER` (stroke),
  :data:`GEO_L`, :data:`GEO_L1`, :data:`GEO_LC`, :data:`GEO_LC0`, :data:`GEO_H` (the lengths
  of the 4-bar, eqs. 2-3), :data:`SCREW` (serial: its screw X), :data:`JOINT_Q`,
  :data:`JOINT_Q1`, :data:`JOINT_X` (the tree joints of link, cylinder and piston; serial: its
  joint in :data:`JOINT_Q`), :data:`SIGN_Q`, :data:`SIGN_Q1`, :data:`REF_Q`, :data:`REF_Q1`
  (tree value = sign * (paper angle - reference)), :data:`E_RZ` (the pose of E a rotation about z and
  a translation), :data:`TIP_PRISMATIC` (serial: a prismatic joint, :data:`SERIAL_TIP` filled);
* ``mats`` (n, 5, 6, 6): inertias M_B1, M_B3, M_B4 in slots :data:`B1`, :data:`B3`,
  :data:`B4` (serial: M_B4 in slot :data:`SERIAL_BODY` and its joint's reference pose B (4, 4)
  in the corner of slot :data:`SERIAL_B`, its inertia as the tip in slot :data:`SERIAL_TIP`), slot
  :data:`MAP_E` the map AE of twists to the attachment frame E, slot :data:`C_E` the pose of E
  (B1_C_E or B4_C_E) in its corner;
  ``nud0`` (6,): -gravity in Bc of module 1; ``root`` (4, 4): Bc of module 1 in the root link;
* a serial module's one body B4 is in slot :data:`SERIAL_BODY` of ``mats``, ``A`` and ``V``;
* scratch ``A`` (n, 3, 6, 6): twist maps Bc -> B1, B3, B4 (serial: its one map; those of a parallel
  module only for the derivatives, :func:`.chain_module_steps.parallel_maps`);
  ``V`` (n, 5, 3, 6), per body B1, B3, B4: :data:`NU` twists,
  :data:`P_BIAS` wrench biases (eq. 12), :data:`XI_U` xi_1/4/7 and :data:`XI_C` xi_2/5/8 (eq. 30;
  serial: c of eq. 10 in :data:`XI_C`), :data:`NUD` accelerations;
  ``S`` (n, 30), one row per module: :data:`X_ACT`, :data:`XD_ACT` (actuator, paper sign), columns 2-4
  unused, :data:`K1` .. :data:`K6` (eqs. 5, 28), :data:`ALPHA`, :data:`DELTA`, :data:`PSI`
  (eqs. 32-45; serial: D, u, U of eq. 51), :data:`KA`, :data:`KB`, :data:`KE`, :data:`KF`
  (eqs. 62-64), column 17 unused, :data:`COS_Q`, :data:`SIN_Q`, :data:`COS_Q1`,
  :data:`SIN_Q1`, :data:`COS_Q2`, :data:`SIN_Q2`;
  ``W`` (6, 6, 6) and ``w`` (12, 6): matrices and vectors of one step.

``geo``, ``mats``, ``nud0`` are views of one flat model buffer and ``A``, ``V``, ``S``, ``W``,
``w`` of one flat scratch buffer, in this order.
"""
from __future__ import annotations

from ..numba_support.cache import inline_kernel
from ..numba_support.views import c_view

# --- geo (n, 24): one module's geometry --------------------------------------------------------
#: module kind, its values; sign of the actuator coordinate; stroke ends
KIND, SX, LOWER, UPPER = 0, 1, 2, 3
PARALLEL, SERIAL = 0.0, 1.0
#: lengths of the parallel module (eqs. 2-3, Fig. 3): L, L1, Lc, Lc0 and the offset h of B1
GEO_L, GEO_L1, GEO_LC, GEO_LC0, GEO_H = 4, 5, 6, 7, 8
#: the screw X (6,) of a serial module (eq. 9), its first column
SCREW0 = 9
SCREW = slice(SCREW0, SCREW0 + 6)
#: tree joints of link (q), cylinder (q1) and piston (x); a serial module's joint in JOINT_Q
JOINT_Q, JOINT_Q1, JOINT_X = 15, 16, 17
#: signs and references of the link and cylinder joints: tree value = sign * (angle - reference)
SIGN_Q, SIGN_Q1, REF_Q, REF_Q1 = 18, 19, 20, 21
#: 1.0 when the pose of E (slot :data:`C_E` of ``mats``) is ``T(p) Rz(theta)``, a rotation about z
#: and a translation (the map AE = Ad_inv of it then applies as two cheap steps:
#: :func:`.chain_closure.carry_from_e`), else 0.0
E_RZ = 22
#: serial module: 1.0 when its screw is a translation (prismatic joint, ``X = (0, e)``) and slot
#: :data:`SERIAL_TIP` of ``mats`` holds its articulated inertia as the chain's tip at its base frame
#: (:func:`.chain_recursions.serial_tip_prismatic`), else 0.0
TIP_PRISMATIC = 23

# --- mats (n, 5, 6, 6): one module's matrices --------------------------------------------------
#: inertias M_B1, M_B3, M_B4 of a parallel module (eq. 11)
B1, B3, B4 = 0, 1, 2
#: a serial module's inertia M_B4 (its body's slot in ``A`` and ``V`` too) and reference pose B (4, 4
#: in the corner)
SERIAL_BODY, SERIAL_B = 0, 1
#: the map AE of twists to the attachment frame E, and the pose of E (4, 4 in the corner)
MAP_E, C_E = 3, 4
#: a serial module with :data:`TIP_PRISMATIC`: ``Ad_inv(B)^T (M_B4 - U U^T / D) Ad_inv(B)``
#: (``U = M_B4 X``, ``D = X^T U``, eqs. 51-52 with ``M_E = 0``), constant (the slot of M_B4 of a
#: parallel module)
SERIAL_TIP = 2

# --- V (n, 5, 3, 6): one module's vectors per body B1, B3, B4 ----------------------------------
#: twists nu (eq. 6), wrench biases p (eq. 12), xi_1/4/7 and xi_2/5/8 (eq. 30; serial: c of
#: eq. 10), accelerations nu-dot (eqs. 27, 29)
NU, P_BIAS, XI_U, XI_C, NUD = 0, 1, 2, 3, 4

# --- S (n, 30): one module's scalars ----------------------------------------------------------
#: the actuator's x, x-dot (paper sign)
X_ACT, XD_ACT = 0, 1
#: k1 .. k6 (eqs. 5, 28: qd = k1 xd, qd1 = k2 xd, qd2 = k3 xd; k4..k6 the xd^2 terms of qdd)
K1, K2, K3, K4, K5, K6 = 5, 6, 7, 8, 9, 10
#: alpha (eqs. 32, 34) and delta (eqs. 26, 43, 45); serial: D and u of eq. 51
ALPHA, DELTA = 11, 12
#: k_a, k_b, k_e, k_f of eqs. 62-64
KA, KB, KE, KF = 13, 14, 15, 16
#: psi (6,) (eqs. 42, 45); serial: U of eq. 51
PSI0 = 18
PSI = slice(PSI0, PSI0 + 6)
#: cosines and sines of the loop angles q, q1, q2 (eq. 2)
COS_Q, SIN_Q, COS_Q1, SIN_Q1, COS_Q2, SIN_Q2 = 24, 25, 26, 27, 28, 29

# --- loc (n, 24): one parallel module's closure tangents along its actuator (the derivatives,
# :func:`..derivatives.chain_derivatives.parallel_local_tangents`), sx applied unless said --------
#: dk1..dk3 / dx; dk4..dk6 / dx; dk4..dk6 / dxd (eqs. 5, 28 differentiated)
DK1_DX, DK2_DX, DK3_DX, DK4_DX, DK5_DX, DK6_DX, DK4_DXD, DK5_DXD, DK6_DXD = range(9)
#: d(cos q, sin q, cos q1, sin q1, cos q2, sin q2) / dx
DCOS_Q, DSIN_Q, DCOS_Q1, DSIN_Q1, DCOS_Q2, DSIN_Q2 = 9, 10, 11, 12, 13, 14
#: dk_a, dk_b, dk_f / dx (eqs. 62-64); the sign sx; dk1 / dx, dk2 / dx in the paper's coordinates
DKA_DX, DKB_DX, DKF_DX, LOC_SX, DK1_PAPER, DK2_PAPER = 15, 16, 17, 18, 19, 20
LOC_SIZE = 24

#: entries per module of ``geo``, ``mats`` (the model) and ``A``, ``V``, ``S`` (the scratch), and
#: of ``W``, ``w``: each set of arrays is one flat buffer in this order (:func:`model_arrays`,
#: :func:`scratch_arrays`), so that one state's call passes 2 arrays, not 8
GEO_SIZE, MATS_SIZE, A_SIZE, V_SIZE, S_SIZE, W_SIZE, w_SIZE = 24, 180, 108, 90, 30, 216, 72


@inline_kernel
def model_arrays(model, n):
    """``geo`` (n, 24), ``mats`` (n, 5, 6, 6), ``nud0`` (6,): views of the flat model buffer
    (:func:`..numba_support.views.c_view`: no shape check in a helper call, as ``reshape`` has)."""
    a, b = GEO_SIZE * n, (GEO_SIZE + MATS_SIZE) * n
    return c_view(model, 0, (n, GEO_SIZE)), c_view(model, a, (n, 5, 6, 6)), c_view(model, b, (6,))


@inline_kernel
def scratch_arrays(data, n):
    """``A`` (n, 3, 6, 6), ``V`` (n, 5, 3, 6), ``S`` (n, 30), ``W`` (6, 6, 6), ``w`` (12, 6): views
    of the flat scratch buffer (:func:`..numba_support.views.c_view`, as :func:`model_arrays`)."""
    a, b, c = A_SIZE * n, (A_SIZE + V_SIZE) * n, (A_SIZE + V_SIZE + S_SIZE) * n
    return (c_view(data, 0, (n, 3, 6, 6)), c_view(data, a, (n, 5, 3, 6)), c_view(data, b, (n, S_SIZE)),
            c_view(data, c, (6, 6, 6)), c_view(data, c + W_SIZE, (12, 6)))
