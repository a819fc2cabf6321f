"""The batched inverse kinematics of a module chain (the robot interface's leading axis; issue
29): every pose on its own, the numbers of one-pose calls."""
from __future__ import annotations

import os

import numpy as np

from pkm_dynamics.core import load_robot

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "robots")


def test_module_chain_batch_is_every_pose_on_its_own():
    """A module chain's inverse kinematics takes a leading axis (the robot interface) and gives
    each pose the solution of a one-pose call (nearest the reference, whatever came before)."""
    crane = load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))
    rng = np.random.default_rng(5)
    x = np.column_stack([rng.uniform(-1, 1, 5), rng.uniform(0.05, 0.5, 5), rng.uniform(0.05, 0.5, 5),
                         rng.uniform(0.1, 1.0, 5)])
    poses = crane.forward_kinematics(x)
    batch = crane.inverse_kinematics(poses)
    assert batch.actuators.shape == (5, 4) and batch.q.shape == (5, len(crane.tree_joints))
    for i, P in enumerate(poses):
        one = crane.inverse_kinematics(P)
        np.testing.assert_array_equal(batch.actuators[i], one.actuators)
        np.testing.assert_array_equal(batch.solutions[i], one.solutions)
        np.testing.assert_allclose(crane.forward_kinematics(batch.actuators[i]), P, atol=1e-9)
