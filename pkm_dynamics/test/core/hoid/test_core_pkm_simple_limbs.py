"""The PKM route on PKM with simple limbs (other example robots of the package): the 6-UPS
Gough-Stewart platform (equimobile limbs, spherical cut joints at the platform turned into limb
joints) and the planar 3RRR (task space vx vy wz).  Task-space ID (paper 001 eq. 45) against the
KKT inverse dynamics of the whole spanning tree by the independent route of
test/pinocchio_loops.py (Pinocchio, its own cut rows and loop closure from the task motion);
FD(ID) round trip."""
from pathlib import Path

import numpy as np
import pytest

from pinocchio_loops import PinocchioLoops
from pkm_dynamics.core.pkm.parallel_robot import ParallelRobot

ROBOTS = Path(__file__).resolve().parents[3] / "robots"


@pytest.mark.parametrize("name", ["gough_stewart_6ups", "planar_3rrr"])
def test_id_against_kkt_and_round_trip(name):
    r = ParallelRobot(str(ROBOTS / f"{name}.urdf"))
    assert all(limb.D_t.shape == (r.dof, r.dof) for limb in r.limbs)      # equimobile limbs
    independent = PinocchioLoops((ROBOTS / f"{name}.urdf").read_text(encoding="utf-8"), r.tree_joints,
                                 r.tree.gravity)
    rng = np.random.default_rng(2)
    init = None
    for _ in range(3):
        x = 0.02 * rng.standard_normal(r.dof)
        V, A = 0.2 * rng.standard_normal(r.dof), rng.standard_normal(r.dof)
        s = r.inverse_kinematics(r.task_pose(x), V, A, initial=init)
        init = s
        assert s.residual <= 1e-10
        np.testing.assert_allclose(r.task_coordinates(s.pose), x, atol=1e-12)
        u = r.inverse_dynamics(s, V, A)
        ref = independent.inverse_dynamics(*independent.close(s.pose, V, A), None)[0]
        np.testing.assert_allclose(u, ref, rtol=1e-8, atol=1e-8 * np.abs(ref).max())
        np.testing.assert_allclose(r.forward_dynamics(s, V, u), A, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(r.forward_kinematics(s.actuators), s.pose, atol=1e-9)
