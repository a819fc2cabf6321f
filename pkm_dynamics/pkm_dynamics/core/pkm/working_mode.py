"""Working modes and joint limits of a limb IK solution (paper 001 Sec. 4, Remark 2).

A pose of the platform is in general reached by several configurations of a limb (its working
modes: elbow up or down, each loop assembled one way or the other).  Newton's method goes to
whichever its first steps lead to, so two schemes (or one scheme from a far start) may return
different ones.  The rule here: the IK returns the configuration *on the working mode of its
start* (the ``initial`` configuration, the previous solution of a trajectory, the ``seed`` of
a service request; by default the reference configuration of the robot description).

Newton's method from the start stays on its working mode while the target is near; from a far
start its full steps may jump to another.  :func:`solve_on_working_mode` accepts the direct
solve when no joint moved by more than :data:`..status.DIRECT_STEP` (a trajectory's next sample, a
near seed); otherwise it follows the straight task-space path from the start's platform pose
to the target in steps of at most :data:`..status.CONTINUATION_STEP` (continuation, as
the loop closure of the higher-order route does), which stays on the start's working mode
unless the path crosses a singularity (then the IK raises :class:`~.errors.SingularityError`
or :class:`~.errors.ConvergenceError`); a path that leaves the joint limits is refused at the
first step beyond them (:class:`~.errors.StateError`), so a pose far out of the workspace costs
a few steps, not the whole path.  Both IK schemes thus return the same configuration.

:func:`apply_joint_limits` then shifts revolute angles by multiples of ``2 pi`` (the value
nearest the start that lies within the URDF limits) and refuses a joint outside its limits with
a :class:`~.errors.StateError` naming joint, value and limits.
"""
from __future__ import annotations

import numpy as np

from ..bounds import continuation_steps
from ..errors import ConvergenceError, SingularityError, StateError
from ..limb.limb_kinematics import limb_platform_pose
from ..limb.limb_model import Limb
from ..spatial.se3 import exp_se3, log_se3, pose_inv
from ..status import CONTINUATION_STEP, DIRECT_STEP, LIMIT_SLACK


def solve_direct(solver, limb: Limb, C_target, theta0, **kw):
    """The direct solve ``solver(limb, C_target, theta0, **kw) -> (theta, info)`` (Algorithms 1-2
    or 3), accepted as staying on the working mode of ``theta0`` (n_l,) when no joint moved by
    more than :data:`..status.DIRECT_STEP`; else :class:`~.errors.ConvergenceError` (the solver's own
    refusals pass through)."""
    theta, info = solver(limb, C_target, theta0, **kw)
    step = np.abs(theta - theta0).max(initial=0.0)
    if not step <= DIRECT_STEP:
        raise ConvergenceError(f"{limb.name}: the direct inverse kinematics solve moved a joint by "
                               f"{step:.3g} (more than {DIRECT_STEP}): possibly onto another working mode")
    return theta, info


def solve_on_working_mode(solver, limb: Limb, C_target, theta0, **kw):
    """``solver(limb, C, theta, **kw) -> (theta, info)`` (Algorithms 1-2 or 3) for the target
    pose ``C_target`` (4, 4) from ``theta0`` (n_l,), on the working mode of ``theta0``.

    The direct solve if it converges with ``|theta - theta0|_inf <=`` :data:`..status.DIRECT_STEP`
    (:func:`solve_direct`);
    else solves along ``C_0 exp(s log(C_0^-1 C_target))``, ``s = k / N``, ``k = 1..N``, with
    ``N >= 2`` the smallest number of steps that moves the limb's task coordinates by at most
    :data:`..status.CONTINUATION_STEP` per step (``C_0``: the platform pose of
    ``theta0``), at most :data:`.bounds.MAX_CONTINUATION_STEPS` (farther: out of reach,
    :class:`~.errors.ConvergenceError`).  Returns ``(theta, info)`` of the last solve (``info.outer``/``info.inner``
    then count the iterations of every step)."""
    theta0 = np.asarray(theta0, dtype=float)
    try:
        return solve_direct(solver, limb, C_target, theta0, **kw)
    except (ConvergenceError, SingularityError):
        pass
    C0 = limb_platform_pose(limb, theta0)
    xi = log_se3(pose_inv(C0) @ C_target)
    steps = max(2, continuation_steps(np.abs(xi[limb.task_rows]).max(initial=0.0), CONTINUATION_STEP,
                                      f"{limb.name}: the platform pose", "the start configuration"))
    theta, outer, inner = theta0.copy(), 0, []
    for k in range(1, steps + 1):
        C = C_target if k == steps else C0 @ exp_se3(xi * k / steps)
        theta, info = solver(limb, C, theta, **kw)
        outer, inner = outer + info.outer, inner + info.inner
        if k < steps:                   # the path leaves the joint limits: refused here, at once
            try:
                apply_joint_limits(limb, theta, theta0)
            except StateError as exc:
                raise StateError(f"{exc} (at step {k} of {steps} of the straight task-space path "
                                 "from the start pose)") from None
    info.outer, info.inner = outer, inner
    return theta, info


def apply_joint_limits(limb: Limb, theta, theta0, check: bool = True) -> np.ndarray:
    """``theta`` (n_l,) with every revolute angle shifted by the multiple of ``2 pi`` that puts
    it within its limits nearest to its start value ``theta0`` (n_l,) (unlimited angles: the
    value nearest the start).  Raises :class:`StateError` naming the joint, its value and its
    limits when a joint cannot be brought within them; ``check`` False: leaves such a joint
    at its value nearest the start (a Newton iterate of the forward kinematics, whose limits
    are checked on its solution)."""
    tree = limb.tree
    out = np.array(theta, dtype=float)
    for j in range(limb.n):
        lo, hi = tree.lower[j] - LIMIT_SLACK, tree.upper[j] + LIMIT_SLACK
        v = out[j]
        if limb.kin.revolute[j]:
            base = v - 2 * np.pi * np.round((v - theta0[j]) / (2 * np.pi))   # nearest the start
            cands = [base + 2 * np.pi * k for k in range(-3, 4) if lo <= base + 2 * np.pi * k <= hi]
            if cands:
                out[j] = min(cands, key=lambda c: abs(c - theta0[j]))
                continue
            v = base
        if lo <= v <= hi or not check:
            out[j] = v
        else:
            unit = "rad" if limb.kin.revolute[j] else "m"
            raise StateError(f"joint '{tree.joint_names[j]}' ({limb.name}) would be at {v:.6g} {unit}, outside "
                             f"its limits [{tree.lower[j]:.6g}, {tree.upper[j]:.6g}]: the platform pose "
                             "is beyond the joint's range")
    return out
