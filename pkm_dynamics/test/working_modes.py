"""Test support for working modes of parallel robots (paper 001 Remark 2)."""
from __future__ import annotations

import numpy as np

from pkm_dynamics.core.errors import StateError


def other_working_mode(robot, pose):
    """A configuration of ``pose`` on another working mode than the default start's (found from
    random starts) and the default solution."""
    default = robot.inverse_kinematics(pose)
    rng = np.random.default_rng(0)
    for _ in range(50):
        try:
            s = robot.inverse_kinematics(pose, initial=rng.uniform(-2.5, 2.5, robot.tree.nq))
        except StateError:
            continue
        if np.abs(s.actuators - default.actuators).max() > 0.5:
            return s, default
    raise AssertionError("no other working mode found")
