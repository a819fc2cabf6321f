"""Forward kinematics of a :class:`~.pkm.ParallelRobot`: the platform pose for given actuator
values, by Newton's method on the inverse kinematics (paper 001 eqs. 23, 30), on the working
mode of the start configuration.

A Newton step ``dx = J_IK^+ (theta_act - f_IK(x))`` (eq. 30) moves the platform to
``C exp(P_p dx)``; its IK starts from the previous iterate's configuration.  An iterate is no
state of the robot: its joints may pass beyond their limits on the way to a solution inside
them, so the IK of an iterate does not enforce the limits (they are checked on the solution),
and it is the direct solve only (:func:`.working_mode.solve_direct`), so that every iterate
stays on the working mode of the one before.

:meth:`PkmForwardKinematics.forward_kinematics` first tries Newton's method from the start (the
reference configuration, or the given pose or solution) and accepts its solution when no joint
moved by more than :data:`..status.DIRECT_STEP` from the start (the IK's rule for staying
on the start's working mode).  Otherwise -- an iterate out of reach of a limb, a jump, a
solution far from the start -- it follows the straight actuator path from the start's actuator
values to the requested ones (continuation, as the IK follows the straight task-space path from
the start's pose), in steps of at most :data:`..status.CONTINUATION_STEP` (m, rad), each
solved by Newton's method from the previous step's solution and halved where that fails.
"""
from __future__ import annotations

import numpy as np

from ..bounds import check_limits, continuation_steps
from ..errors import ConvergenceError, SingularityError, StateError
from .pkm_solution import PkmIKSolution
from ..spatial.se3 import exp_se3
from ..status import CONTINUATION_STEP, DIRECT_STEP, LIMIT_SLACK

#: most halvings of a continuation step of the forward kinematics that fails (then: refused)
MAX_HALVINGS = 8
#: most Newton iterations of one continuation step (from a start this near, Newton's method
#: converges in 3-4; more: the step reaches a singularity or the workspace's end, and is halved)
STEP_ITERATIONS = 12
#: relative residual of ``J_IK dx = theta_act - f_IK(x)`` at convergence up to which the
#: actuator values of a redundantly actuated robot count as consistent
CONSISTENT_ACTUATORS = 1e-6


class PkmForwardKinematics:
    """Forward kinematics of a parallel robot (part of the robot class, with
    :class:`~.pkm_kinematics.PkmKinematics`)."""

    def forward_kinematics(self, actuators, *, initial=None, tol: float | None = None,
                           max_iter: int | None = None, return_solution: bool = False):
        """Platform pose (4, 4) for actuator values (n_act,), on the working mode of the start
        (module docstring): Newton's method on the inverse kinematics until the correction of
        the task coordinates is at most ``tol`` (m, rad; default the IK accuracy goal: the pose
        is then that close to the exact one); each iterate's IK is solved 100 times finer.
        ``initial``: a start pose (4, 4) or a :class:`PkmIKSolution` (default: the reference
        configuration); ``max_iter``: Newton iterations per solve (default the IK's).  Batched
        over a leading axis (each sample starts from the previous result).  Actuator values
        beyond a stroke, or putting a joint beyond its limits, raise :class:`StateError` naming
        the joint; values reached by no configuration on the start's working mode
        :class:`ConvergenceError`."""
        a = np.asarray(actuators, dtype=float)
        if a.ndim == 2:
            out, init = [], initial
            for row in a:
                C, s = self.forward_kinematics(row, initial=init, tol=tol, max_iter=max_iter, return_solution=True)
                out.append(C)
                init = s
            return np.stack(out)
        if a.shape != (len(self._act),) or not np.isfinite(a).all():
            raise StateError(f"actuator values must be {len(self._act)} finite numbers, got shape {a.shape}")
        tree = self.description.tree      # a value beyond a stroke is no state of the robot
        check_limits(tree, [tree.joint_index(n) for n in self.actuated_joints], a, "actuator position")
        tol = self.tol if tol is None else tol
        max_iter = self.max_iter if max_iter is None else max_iter
        if isinstance(initial, PkmIKSolution) and np.ndim(initial.pose) == 2:
            C0, sol0 = np.asarray(initial.pose, dtype=float), initial     # a previous solution
        elif isinstance(initial, PkmIKSolution):                          # of a batch: its last
            C0 = np.asarray(initial.pose[-1], dtype=float)
            sol0 = self.inverse_kinematics(C0, initial=initial, tol=1e-2 * tol)
        else:
            C0 = self.reference_pose.copy() if initial is None else self._check_pose(initial)
            sol0 = self.inverse_kinematics(C0, tol=1e-2 * tol)
        try:
            C, sol = self._fk_newton(a, C0, sol0, tol, max_iter)
            if self._fk_joint_step(sol0, sol) > DIRECT_STEP:
                C, sol = self._fk_continuation(a, C0, sol0, tol, max_iter)
        except (ConvergenceError, SingularityError):
            C, sol = self._fk_continuation(a, C0, sol0, tol, max_iter)
        sol = self._fk_check_limits(a, C, sol, tol)
        return (C, sol) if return_solution else C

    @staticmethod
    def _fk_joint_step(sol0, sol) -> float:
        """Largest joint change (m, rad) of any limb between two IK solutions."""
        return float(max(np.abs(t - t0).max(initial=0.0) for t, t0 in zip(sol.limb_theta, sol0.limb_theta)))

    def _fk_newton(self, a, C, sol, tol, max_iter):
        """Newton's method on the IK for the actuator values ``a`` (n_act,) from the pose ``C``
        (4, 4) and its IK solution ``sol``: ``dx = J_IK^-1 (a - f_IK(x))`` (eq. 30; least
        squares for a redundantly actuated robot), ``C <- C exp(P_p dx)``, the IK of each iterate from the previous one
        (:meth:`~.pkm_kinematics.PkmKinematics._ik_one` as an iterate), until ``|dx|_inf <=
        tol``.  Returns ``(C, sol)``; raises :class:`ConvergenceError` (or the
        :class:`SingularityError` of an iterate) when it does not get there, and
        :class:`StateError` when the least-squares residual stays (inconsistent actuator values
        of a redundantly actuated robot)."""
        square = len(a) == self.dof
        for _ in range(max_iter + 1):
            err = a - sol.actuators
            try:
                dx = np.linalg.solve(sol.J_IK, err) if square else np.linalg.lstsq(sol.J_IK, err, rcond=None)[0]
            except np.linalg.LinAlgError:
                raise SingularityError("forward kinematics: J_IK is singular at an iterate (an actuation "
                                       "singularity)") from None
            if np.abs(dx).max() <= tol:
                residual = 0.0 if square else np.linalg.norm(sol.J_IK @ dx - err)
                if residual > CONSISTENT_ACTUATORS * max(1.0, np.linalg.norm(a)):
                    raise StateError(f"the actuator values {a.tolist()} are inconsistent: no platform pose "
                                     f"produces them (residual {residual:.3g}; a redundantly actuated robot "
                                     "has fewer task coordinates than actuators)")
                return C, sol
            C = C @ exp_se3(self.P_p @ dx)
            sol = self._ik_one(C, None, None, np.concatenate(sol.limb_theta), self.ik_scheme, 1e-2 * tol, iterate=True)
        raise ConvergenceError(f"forward kinematics did not converge in {max_iter} iterations "
                               f"(actuator error {np.linalg.norm(a - sol.actuators):.3g})")

    def _fk_continuation(self, a, C, sol, tol, max_iter):
        """:meth:`_fk_newton` along the straight path from the actuator values of ``sol`` (the
        start, at pose ``C``) to ``a``, in steps of at most :data:`..status.CONTINUATION_STEP`,
        a step halved (at most :data:`MAX_HALVINGS` times) where Newton's method fails (or takes
        more than :data:`STEP_ITERATIONS`).  Returns
        ``(C, sol)`` at ``a``."""
        a0 = np.array(sol.actuators, dtype=float)
        n = max(1, continuation_steps(np.abs(a - a0).max(initial=0.0), CONTINUATION_STEP,
                                      "the actuator vector", "that of the start configuration"))
        s, h = 0.0, 1.0 / n
        while s < 1.0:
            t = min(1.0, s + h)
            try:
                C, sol = self._fk_newton(a0 + t * (a - a0), C, sol, tol, min(max_iter, STEP_ITERATIONS))
            except (ConvergenceError, SingularityError) as exc:
                if h * n < 0.5 ** MAX_HALVINGS:
                    raise ConvergenceError(
                        f"forward kinematics: no configuration on the start's working mode along the "
                        f"straight actuator path from {np.round(a0, 6).tolist()} to {np.round(a, 6).tolist()} "
                        f"beyond {s:.3g} of the way ({exc}): a singularity or the end of the workspace") from None
                h /= 2
                continue
            s, h = t, min(1.0 / n, 2 * h)
        return C, sol

    def _fk_check_limits(self, a, C, sol, tol):
        """``sol`` when every joint of the forward kinematics' solution is within its limits
        (the iterates' IK did not enforce them); else the :class:`StateError` of the IK at
        ``C``, which names the joint."""
        lo = np.concatenate([limb.tree.lower for limb in self.limbs]) - LIMIT_SLACK
        hi = np.concatenate([limb.tree.upper for limb in self.limbs]) + LIMIT_SLACK
        flat = np.concatenate(sol.limb_theta)
        if ((lo <= flat) & (flat <= hi)).all():
            return sol
        try:
            return self._ik_one(C, None, None, np.concatenate(sol.limb_theta), self.ik_scheme, 1e-2 * tol)
        except StateError as exc:
            raise StateError(f"forward kinematics of the actuator values {np.round(a, 9).tolist()}: {exc}") from None
