"""Smooth exciting motions of the identification tests: two sines per coordinate (the crane's
actuators; a parallel robot's task coordinates, with the body-fixed task twist and its rate)."""
import numpy as np

from pkm_dynamics.core.spatial.se3 import dexp


def two_sines(t, mid, amp, w1, w2, phase):
    """``(x, xd, xdd)`` (len(t), n) of ``mid + amp (0.7 sin(w1 t + phase) + 0.3 sin(w2 t))``."""
    a, b = w1 * t[:, None] + phase, w2 * t[:, None]
    return (mid + amp * (0.7 * np.sin(a) + 0.3 * np.sin(b)), amp * (0.7 * w1 * np.cos(a) + 0.3 * w2 * np.cos(b)),
            -amp * (0.7 * w1**2 * np.sin(a) + 0.3 * w2**2 * np.sin(b)))


def crane_motion(t):
    """Slew, lift, tilt, extension inside their strokes (the lift clear of its singular 0.553 m)."""
    return two_sines(t, np.array([0.0, 0.25, 0.3, 0.5]), np.array([0.8, 0.15, 0.2, 0.4]),
                     np.array([0.7, 1.1, 1.3, 0.9]), np.array([1.9, 2.3, 1.7, 2.9]), np.array([0.0, 1.0, 2.0, 3.0]))


def task_motion(robot, t, amp, h=1e-5):
    """Platform poses ``C_ref exp(P_p s(t))`` of two sines ``s`` of the task coordinates
    (amplitudes ``amp``), the body-fixed task twist ``V_t = P_p^T dexp_{-P_p s} P_p sdot`` and its
    rate by central differences of step ``h`` (s): ``(poses (N, 4, 4), V_t, Vdot_t (N, delta))``."""
    d = robot.dof
    args = (np.zeros(d), np.asarray(amp, dtype=float), 1.1 + 0.4 * np.arange(d), 2.3 + 0.5 * np.arange(d),
            np.arange(d, dtype=float))

    def twist(tt):
        s, sd, _ = two_sines(tt, *args)
        return np.stack([robot.P_p.T @ dexp(-(robot.P_p @ si)) @ robot.P_p @ sdi for si, sdi in zip(s, sd)])

    s = two_sines(t, *args)[0]
    return (np.stack([robot.task_pose(si) for si in s]), twist(t), (twist(t + h) - twist(t - h)) / (2 * h))
