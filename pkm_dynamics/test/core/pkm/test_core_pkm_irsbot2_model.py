"""IRSBot-2 example description (paper 001 Sec. 6): masses of the geometric primitives,
loop closure at the zero configuration, topology of the limbs found from the description."""
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core.tree.cut_joints import LoopConstraints
from pkm_dynamics.core.description.robot_description import parse_description

ROBOTS = Path(__file__).resolve().parents[3] / "robots"
RHO = 2700.0
# paper 001 Sec. 6.4.2
PAPER_MASSES = {"m1": 1.17188, "m2": 8.11899, "m3": 21.1875, "m4": 1.1781, "m5": 1.1781, "m6": 1.97754}


def eq47():
    a, b, alpha = 1 / 8, 1 / 12, np.pi / 6
    b1, b3 = b * np.cos(alpha), b * np.sin(alpha)
    return dict(a=a, b1=b1, b3=b3, c1=b1 / 2, c3=b3, d1=b1 / 2, d2=a, d3=b3, L1=1 / 4, L2=1 / 2,
                p1=a / 2, p2=a / 2)


def test_primitive_masses_match_the_paper():
    """rho * volume of the primitives of Sec. 6.4.2 with the lengths of eq. 47."""
    P = eq47()
    m = {
        "m1": RHO * P["L1"] * (P["L1"] / 6) ** 2,                       # square beam, side L1/6
        "m2": RHO * 2 * (P["c1"] + P["d1"]) * 2 * P["d2"] * (P["c3"] + P["d3"]),   # plate
        "m4": RHO * np.pi * (P["L2"] / 30) ** 2 * P["L2"],              # round rod, radius L2/30
        "m6": RHO * 4 * P["p1"] * 3 * P["p2"] * P["p2"] / 4,            # platform plate
    }
    m["m5"] = m["m4"]
    for k, v in m.items():
        assert v == pytest.approx(PAPER_MASSES[k], rel=5e-6), k
    # body 3 as described (square beam, side L1/10) does not give the paper's m3
    assert RHO * P["L1"] * (P["L1"] / 10) ** 2 == pytest.approx(0.421875)


@pytest.mark.parametrize("name", ["irsbot2.urdf", "irsbot2_paths.urdf"])
def test_description_masses_and_closure(name):
    desc = parse_description(str(ROBOTS / name))
    tree = desc.tree
    mass = {b: tree.M[i][3, 3] for i, b in enumerate(tree.body_names)}
    for l in (1, 2):
        assert mass[f"l{l}_arm"] == pytest.approx(PAPER_MASSES["m1"], rel=5e-6)
        assert mass[f"l{l}_elbow"] == pytest.approx(PAPER_MASSES["m2"], rel=5e-6)
        assert mass[f"l{l}_rod"] == pytest.approx(PAPER_MASSES["m3"], rel=1e-12)
        assert mass[f"l{l}_rod4"] == pytest.approx(PAPER_MASSES["m4"], rel=5e-5)
        assert mass[f"l{l}_rod5"] == pytest.approx(PAPER_MASSES["m5"], rel=5e-5)
    assert mass["platform"] == pytest.approx(PAPER_MASSES["m6"], rel=5e-6)
    # all five cut joints closed at q = 0; 22 constraint rows (Sec. 4.3); with the U joints as
    # two R joints the tree has 16 joints, and rank 14 leaves the PKM's 2 DOF
    g, G, _ = LoopConstraints(desc).evaluate(np.zeros(tree.nq))
    assert np.max(np.abs(g)) < 1e-12
    assert G.shape == (22, 16)
    assert np.linalg.matrix_rank(G, tol=1e-9) == 14
    assert [c.type for c in desc.cut_joints].count("universal") == 3
    assert desc.actuated_joints == ("l1_j1", "l2_j1")
    assert desc.platform.task_space == ("vx", "vz")


def test_paths_geometry_reproduces_the_paper_reference_height():
    """The printed r_{6,0} of Sec. 6.4 is eq. 46 with PAPER_PATH_LENGTHS (see make_irsbot2_urdf)."""
    from pkm_dynamics.core.tree.tree_dynamics import frame_pose
    desc = parse_description(str(ROBOTS / "irsbot2_paths.urdf"))
    s2, s3, s6 = np.sqrt([2.0, 3.0, 6.0])
    r60 = -(4 + 6 * s2 + s6 * np.sqrt(37 - 6 * s2 - 2 * s3 - 4 * s6)) / 24
    C = frame_pose(desc.tree, np.zeros(desc.tree.nq), "platform_center")
    np.testing.assert_allclose(C[:3, 3], [0, 0, r60], atol=1e-12)
    np.testing.assert_allclose(C[:3, :3], np.eye(3), atol=1e-12)
