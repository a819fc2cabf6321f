"""Constrained dynamics of the spanning tree with the cut-joint constraints as Lagrange
multipliers (KKT form): a second route to the closed-loop dynamics inside the package, and
:func:`independent_rows`, which :mod:`.reactions` uses for its minimum-norm multipliers.

What it shares, so what it cannot catch: the cut-joint rows and their acceleration bias
(:class:`.cut_joints.LoopConstraints`, :func:`.cut_joints.cut_joint_geometry`, which the PKM
limbs and their compiled tables use too), the tree dynamics (:func:`.tree_dynamics.crba`,
:func:`.tree_dynamics.rnea`) and the description parser; and :func:`kkt_inverse_dynamics` takes
the tree motion ``(q, qd, qdd)`` from its caller, so fed the motion of the code under test it
only checks the force balance of that motion (for a non-redundant robot the system is square:
a wrong ``qdd`` gives other forces without an error).  The check that shares no code with the
package is ``test/pinocchio_loops.py`` (Pinocchio's CRBA/RNEA and frame algebra, its own cut-joint
rows and loop closure from the actuator or task motion; ``test/core/tree/test_core_independent_kkt.py``).

Equations of motion of the tree with loop constraints ``G qdd + Gdot qd = 0`` (paper 001
eqs. 13-14; paper 000 eq. 1 in general form)::

    H qdd + b = tau + G^T lambda

Loop constraints are often redundant (a planar loop closed by a spatial revolute cut joint
has 5 constraint rows of rank 2; overconstrained PKM): the rows are first reduced to an
orthonormal basis of their row space (SVD), which leaves the motion and the actuator forces
unique while the multipliers become a minimum-norm representative.
"""
from __future__ import annotations

import numpy as np

from .cut_joints import LoopConstraints
from ..description.robot_description import RobotDescription
from ..errors import SingularityError
from ..status import RANK_TOLERANCE
from .tree_dynamics import crba, rnea


def independent_rows(G: np.ndarray, tol: float = RANK_TOLERANCE) -> np.ndarray:
    """Orthonormal basis ``U_r`` (m, r) of the column space of ``G`` (m, n), so that
    ``U_r^T G`` has independent rows spanning the same constraints (Remark 4 of paper 001)."""
    if G.shape[0] == 0:
        return np.zeros((0, 0))
    U, s, _ = np.linalg.svd(G, full_matrices=False)
    r = int(np.sum(s > tol * max(1.0, s[0])))
    return U[:, :r]


def kkt_forward_dynamics(desc: RobotDescription, q, qd, tau, f_ext=None, gravity=None,
                         constraints: LoopConstraints | None = None):
    """Tree accelerations ``qdd`` (n,) and multipliers ``lambda`` (m,) for generalized forces
    ``tau`` (n,) on the tree joints, from the KKT system

        [[H, G^T], [G, 0]] (qdd, -lambda) = (tau - b, -Gdot qd)

    so that ``H qdd + b = tau + G^T lambda`` (the module docstring's sign): ``G^T lambda`` is
    the generalized force of the constraint wrenches."""
    tree = desc.tree
    lc = constraints if constraints is not None else LoopConstraints(desc)
    _, G, bias = lc.evaluate(q, qd)
    H = crba(tree, q)
    b = rnea(tree, q, qd, np.zeros(tree.nq), gravity=gravity, f_ext=f_ext)
    U = independent_rows(G)
    Gr, br = U.T @ G, U.T @ bias
    n, r = tree.nq, Gr.shape[0]
    K = np.zeros((n + r, n + r))
    K[:n, :n] = H
    K[:n, n:] = Gr.T
    K[n:, :n] = Gr
    rhs = np.concatenate([np.asarray(tau, dtype=float) - b, -br])
    sol = np.linalg.solve(K, rhs)
    return sol[:n], -(U @ sol[n:])


def kkt_inverse_dynamics(desc: RobotDescription, q, qd, qdd, actuated, f_ext=None, gravity=None,
                         constraints: LoopConstraints | None = None, consistency_tol: float = 1e-8):
    """Actuator forces ``u`` (len(actuated),) that produce the consistent tree motion
    ``(q, qd, qdd)``: solves ``rnea(q, qd, qdd) = S^T u + G^T lambda`` for ``(u, lambda)``,
    ``S`` selecting the actuated tree joints (indices ``actuated``).

    Raises :class:`SingularityError` when the actuators cannot balance the motion (input
    singularity) or the equations are inconsistent (the motion violates the constraints)."""
    tree = desc.tree
    lc = constraints if constraints is not None else LoopConstraints(desc)
    _, G, _ = lc.evaluate(q)
    tau = rnea(tree, q, qd, qdd, gravity=gravity, f_ext=f_ext)
    U = independent_rows(G)
    Gr = U.T @ G
    S = np.zeros((len(actuated), tree.nq))
    S[np.arange(len(actuated)), list(actuated)] = 1.0
    A = np.hstack([S.T, Gr.T])
    sol, *_ = np.linalg.lstsq(A, tau, rcond=None)
    s = np.linalg.svd(A, compute_uv=False)
    if s[-1] < RANK_TOLERANCE * s[0]:
        raise SingularityError("actuators and loop constraints do not determine the actuator forces "
                               f"(smallest singular value {s[-1]:.3g}): input singularity")
    res = np.linalg.norm(A @ sol - tau)
    if res > consistency_tol * max(1.0, np.linalg.norm(tau)):
        raise SingularityError(f"the tree motion is not consistent with the loop constraints "
                               f"(force residual {res:.3g})")
    return sol[:len(actuated)]
