"""The status codes of the compiled kernels and the solver constants shared between modules.

A kernel never raises: it returns one of the codes below (often with ``status = (code, row,
index)``, the culprit) and the thin Python layer of its concept turns the code into the named
exception, usually by running the numpy reference route on the culprit, which words the refusal
(:func:`.module_chain.chain_model._raise`, :func:`.tree.compiled_tree._check`,
:func:`.hoid.higher_order._recursive`, :mod:`.pkm.limb_tables`, :mod:`.pkm.pkm_kinematics`,
:mod:`.pkm.pkm_task_dynamics`, :mod:`.reactions.chain_reactions_model`).  Each code is defined once,
with a distinct value, whatever concept returns it; a code means the same wherever it appears.

The constants are those both routes (kernels and reference) or several concepts use: defined
here once, so that the two routes decide alike.  This module imports nothing; the kernels read its
values as compile-time constants (:func:`..numba_support.cache.source_hash` covers it).
"""

# ---------------------------------------------------------------------------------------------
# status codes (those of the module chain keep the values they had: its messages quote them)

#: done: the outputs hold the result
OK = 0
#: an input is not finite, beyond its bound of :mod:`.bounds`, or not a pose (its checks word it)
BAD_INPUT = 1
#: an actuator beyond its stroke (the limits of its joint)
STROKE = 2
#: a 4-bar module does not close: the actuator length is outside its triangle (paper 000 eq. 2)
CLOSURE = 3
#: a 4-bar module at a singular angle: ``|sin|`` of q, q1 or q2 below :data:`SINGULAR_SIN`
SINGULAR_ANGLE = 4
#: a 4-bar module whose ``det A`` (paper 000 eq. 61) vanishes
SINGULAR_DET = 5
#: a module's ``alpha`` (paper 000 eq. 51) zero or not finite (the derivatives: ``M`` not positive definite)
SINGULAR_ALPHA = 6
#: a result is not finite (the state is too large for the dynamics)
NONFINITE_RESULT = 7
#: a matrix of a limb is singular: ``G_y``, ``L_t`` or ``J_t`` (also beyond :data:`MAX_JT_CONDITION`)
SINGULAR = 8
#: a Newton iteration did not converge within its iterations
NO_CONVERGENCE = 9
#: ``kappa(F)`` of a limb beyond the singularity threshold
ILL_CONDITIONED = 10
#: a joint moved farther than :data:`DIRECT_STEP` from the start: the continuation decides
FAR_STEP = 11
#: the solution is on another assembly branch than the start's
OTHER_BRANCH = 12
#: ``kappa(G_y)`` of a loop beyond its threshold at the solution
LOOP_CONDITION = 13
#: a joint of a limb beyond its limits
LIMITS = 14
#: a zero pivot in the Newton step of a limb's closure (HOID, paper 002)
SINGULAR_NEWTON = 15
#: a limb stopped with a status of its own (the per-limb ``status`` array holds it)
LIMB_STATUS = 16
#: a limb's rates (paper 001 eqs. 27-29) stopped with a status of their own
RATES_STATUS = 17
#: ``J_IK`` (paper 001 eq. 30) not finite, beyond the singularity threshold or singular
ACTUATION = 18
#: the task-space mass matrix ``M_t`` (paper 001 eq. 39) beyond the threshold or singular
MASS_MATRIX = 19
#: a 4-bar's pin force is undetermined (:data:`.reactions.chain_reactions.SINGULAR_PIN`)
PIN_SINGULAR = 20
#: a 4-bar's pin equations are inconsistent: the motion is not one the loop forces produce
INCONSISTENT = 21
#: the efforts of a simulation step are not ``n`` finite values (:mod:`.simulation.simulation_kernels`)
BAD_EFFORTS = 22
#: a platform pose whose rotation is not orthonormal or that is off the task manifold (the
#: robot's checks word it: :mod:`.hoid.hoid_robot_kernels`)
BAD_POSE = 23

# ---------------------------------------------------------------------------------------------
# solver constants shared by the kernels and the reference route, or by several concepts

#: slack (m or rad) on a joint's limits (an actuator's stroke) for round-off
LIMIT_SLACK = 1e-12
#: ``|sin|`` below which an angle q, q1 or q2 of a 4-bar module counts as singular (paper 000
#: eq. 5: "q, q1 and q2 != 0"; relative to ``max(1, L1 k_e)`` for ``det A``, eq. 61)
SINGULAR_SIN = 1e-9
#: relative singular-value threshold for rank decisions (redundant constraint rows, Remark 4 of
#: paper 001; the rank of the actuation)
RANK_TOLERANCE = 1e-9
#: largest joint change (rad or m) of a direct IK solve accepted as staying on the start's
#: working mode (paper 001 Remark 2)
DIRECT_STEP = 0.5
#: largest change (rad, m) of the prescribed coordinates (platform pose, actuators) per step of a
#: continuation: keeps Newton on the start's assembly branch (working mode)
CONTINUATION_STEP = 0.05
#: residual (m, rad) of the pose error and loop constraints regarded as round-off
ROUND_OFF = 1e-14
#: most refinement steps after an IK converged
REFINEMENT_STEPS = 3
#: iterations of the loop closure of Algorithm 2 (paper 001) in one outer step
INNER_MAX_ITER = 30
#: largest distance ``|log(C_p^-1 C_target)|`` of a converged limb's platform from the target
MISS_TOLERANCE = 1e-6
#: the default largest admissible ``kappa(G_y)`` of a loop at an IK solution
#: (``SolverOptions.loop_singularity_threshold``), and the ``kappa(G_y)`` of a loop's load-time
#: partition beyond which an IK step resolves it with the partition chosen at the current
#: configuration (paper 001 Remark 3)
LOOP_SINGULARITY_THRESHOLD = 1e4
#: condition number ``kappa_1`` of a limb's ``J_t`` above which the HOID recursion refuses
MAX_JT_CONDITION = 1e12
#: largest ``|R^T R - I|_F`` of the rotation of a requested platform pose
ORTHONORMAL_TOLERANCE = 1e-6
#: largest distance (m, rad) of a requested platform pose from the task manifold ``C_ref exp(P_p x)``
MANIFOLD_TOLERANCE = 1e-9
