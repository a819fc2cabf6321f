"""Layout of the compiled limb kernels' model and scratch (paper 001, Müller): every entry of the
per-limb model tuple ``lm`` and scratch tuples ``ld``, ``lx`` a named index constant carrying
the paper's symbol where it has one, so that a kernel reads ``ld[LD_H]`` for ``H`` (eq. 16) and
the packer (:mod:`..pkm.limb_tables`) and the views (:mod:`..pkm.robot_kernels`) place each entry by
its name, never by counting.  Module-level ints are compile-time constants in numba (a tuple
indexed by one is a static index): naming them costs nothing at run time.

n joints, delta = dof of the limb, dl task rows of the limb, dp platform dof, nl loops (FCs),
nc cut joints, M rows of the largest loop, R / I its most dependent / independent joints, N the
side of the square scratch, m the stacked constraint and platform rows.
"""
from __future__ import annotations

# --- model ``lm`` (read-only, one per limb) ----------------------------------------------------
#: parent of each body (n,) int (-1: the base); reference configurations B_i (n, 4, 4); joint
#: screws X_i (n, 6) (eq. 1)
LM_PARENT, LM_B, LM_X = 0, 1, 2
#: constants of the closed-form exp(X_i theta): W, W^2 (n, 3, 3), W v, W^2 v (n, 3)
#: (:class:`.limb_types.LimbScrews`)
LM_W, LM_W2, LM_WV, LM_W2V = 3, 4, 5, 6
#: (n, n) int, row i: 1 at the joints supporting body i
LM_SUPPORT = 7
#: the limb's sizes (7,) int, entries SIZE_*
LM_SIZES = 8
#: platform frame in the limb's platform body (4, 4); the limb's task rows (dl,) int; D_t (dl, dp)
#: (eq. 30); independent joints (delta,) int
LM_PLATFORM_OFFSET, LM_TASK_ROWS, LM_D_T, LM_INDEPENDENT = 9, 10, 11, 12
#: cut joints (App. A): bodies k, r (nc, 2) int; points d_k, d_r (nc, 2, 3); vectors (nc, 9, 3):
#: u_pos in rows CUT_U_POS.., u_a in CUT_U_A.., u_b in CUT_U_B..; counts n_pos, n_rot (nc, 2) int
LM_CUT_BODIES, LM_CUT_POINTS, LM_CUT_VECTORS, LM_CUT_COUNTS = 13, 14, 15, 16
#: loops (FCs) (nl, 5) int, columns LOOP_*; per loop its selected constraint rows (nl, R),
#: dependent joints (nl, R) and independent joints (nl, I), int (eqs. 16-18)
LM_LOOPS, LM_LOOP_ROWS, LM_LOOP_DEPENDENT, LM_LOOP_INDEPENDENT = 17, 18, 19, 20
#: revolute joints (n,) int; joint limits lower, upper (n,)
LM_REVOLUTE, LM_LOWER, LM_UPPER = 21, 22, 23
#: column of H (eq. 16) of each joint (n,) int, -1 for a dependent joint
LM_H_COLUMN = 24
#: body inertias M_i (n, 6, 6); the base acceleration (6,): (0, -gravity)
LM_INERTIA, LM_BASE_ACCELERATION = 25, 26
#: number of model entries, and those held in the int pack
LM_COUNT = 27
LM_INT = frozenset({LM_PARENT, LM_SUPPORT, LM_SIZES, LM_TASK_ROWS, LM_INDEPENDENT, LM_CUT_BODIES, LM_CUT_COUNTS,
                    LM_LOOPS, LM_LOOP_ROWS, LM_LOOP_DEPENDENT, LM_LOOP_INDEPENDENT, LM_REVOLUTE, LM_H_COLUMN})

#: entries of ``lm[LM_SIZES]``: platform body, dl, dp, delta, nl, nc, square (1: dl = dp = delta
#: and D_t orthogonal)
SIZE_PLATFORM_BODY, SIZE_DL, SIZE_DP, SIZE_DELTA, SIZE_NL, SIZE_NC, SIZE_SQUARE = 0, 1, 2, 3, 4, 5, 6
#: columns of ``lm[LM_LOOPS]``: first cut, end cut, constraint rows m, dependent r, independent
#: count of the loop
LOOP_FIRST_CUT, LOOP_END_CUT, LOOP_SIZE, LOOP_NDEP, LOOP_NIND = 0, 1, 2, 3, 4
#: columns of ``lm[LM_CUT_BODIES]``, ``lm[LM_CUT_POINTS]`` (the two sides k, r of a cut joint) and
#: of ``lm[LM_CUT_COUNTS]``; first rows of u_pos, u_a, u_b in ``lm[LM_CUT_VECTORS]``
CUT_K, CUT_R = 0, 1
CUT_NPOS, CUT_NROT = 0, 1
CUT_U_POS, CUT_U_A, CUT_U_B = 0, 3, 6

# --- scratch ``ld`` (one per limb and thread): the IK (:mod:`.limb_kernels`) -------------------
#: absolute configurations C_i (n, 4, 4) and spatial screws Y_i = Ad(C_i) X_i (n, 6)
LD_C, LD_Y = 0, 1
#: loop constraints g (nl, M) and their Jacobians G (nl, M, n) (App. A, eqs. 16-17)
LD_G_RES, LD_G_JAC = 2, 3
#: platform Jacobian J_p (6, n); H (n, delta) (eq. 16); L_t (dl, delta); F (delta, dp); K (n, dp)
#: (eqs. 22, 25, 27, 30)
LD_J_P, LD_H, LD_L_T, LD_F, LD_K = 4, 5, 6, 7, 8
#: square solves: matrix A (N, N), right-hand sides b (N, N), work W (N, N), vector (N,)
LD_A, LD_B, LD_WORK, LD_VEC = 9, 10, 11, 12
#: pose error dx (6,), platform pose (4, 4)
LD_DX, LD_POSE = 13, 14
#: inner iterations of each loop per outer step (max_iter + 1, nl), int (Algorithm 2)
LD_INNER = 15
#: joint step dtheta (n,); a spare (n,) (unused); (16, 4) scratch of the forward kinematics
LD_DTHETA, LD_SPARE, LD_FK = 16, 17, 18
#: the entries an IK solution's limbs are made of, the state ``C, Y, g, G`` and the Jacobians
#: ``J_p, H, L_t, F, K``: those :meth:`..pkm.limb_tables.LimbTables.state` reads and
#: :func:`..pkm.robot_kernels.keep_states` keeps
LD_STATE = (LD_C, LD_Y, LD_G_RES, LD_G_JAC, LD_J_P, LD_H, LD_L_T, LD_F, LD_K)
# --- scratch ``lx``: the rates and dynamics (:mod:`.limb_dynamics_kernels`), entries 19-31 of the
# packed scratch, indexed from 0 in ``lx``
#: stacked rows (m, n), their QR (m, n), right-hand side (m,), joint torques tau (max(n, 6),)
LX_STACKED, LX_QR, LX_RHS, LX_TAU = 0, 1, 2, 3
#: body twists, accelerations and their spatial forms (n, 6) each; bias (n,); qd (max(n, 6),);
#: zeros (max(n, 6),); platform acceleration (6,)
LX_V, LX_A, LX_VS, LX_AS, LX_BIAS, LX_QD, LX_ZEROS, LX_AP = 4, 5, 6, 7, 8, 9, 10, 11
#: the (n, 6, dp) of :func:`.limb_inertia_kernels.limb_task_inertia`
LX_TASK = 12
#: entries of ``ld`` in the packed scratch (``lx`` follows), all, and those held in the int pack
LD_COUNT = 19
LD_ALL = LD_COUNT + 13
LD_INT = frozenset({LD_INNER})
#: the positions of the ``lx`` entries in the packed scratch (plain module-level ints, as every
#: index here: numba types them as literals, and a view of a literal position compiles once)
(PACKED_STACKED, PACKED_QR, PACKED_RHS, PACKED_TAU, PACKED_V, PACKED_A, PACKED_VS, PACKED_AS, PACKED_BIAS,
 PACKED_QD, PACKED_ZEROS, PACKED_AP, PACKED_TASK) = range(LD_COUNT, LD_ALL)
