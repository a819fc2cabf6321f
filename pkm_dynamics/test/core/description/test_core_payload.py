"""Run-time payload (core/description/payload.py): a robot with the payload added at run time gives the
numbers of the same robot whose URDF text carries the load as an extra link fixed to the end
effector / platform link (an independent path: URDF parsing merges the fixed link's
<inertial>, with the joint origin and the inertial frame composed by build_tree). The load's
link sits at the centre of mass with rotated axes, so frame handling is exercised."""
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core import DescriptionError, load_robot
from pkm_dynamics.core.description.payload import (Payload, description_with_payload, payload_link,
                                                   robot_with_payload)
from payload_links import with_load_link

ROBOTS = Path(__file__).resolve().parents[3] / "robots"
PAYLOAD = Payload(35.0, [0.12, -0.05, 0.2], [[0.9, 0.05, -0.02], [0.05, 0.7, 0.03],
                                            [-0.02, 0.03, 1.1]])
def rel(a, b):
    return np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(1.0, np.linalg.norm(b))


def pair(name):
    text = (ROBOTS / f"{name}.urdf").read_text()
    plain = load_robot(text)
    loaded = robot_with_payload(plain, PAYLOAD)
    reference = load_robot(with_load_link(text, payload_link(plain.description), PAYLOAD))
    return plain, loaded, reference


@pytest.mark.parametrize("name,x0", [("linear_4bar_1dof", [0.2]),
                                     ("heavy_duty_4dof", [0.3, 0.2, 0.25, 0.4])])
def test_module_chain_payload_matches_load_in_urdf(name, x0):
    plain, loaded, reference = pair(name)
    assert loaded.tree.total_mass == pytest.approx(reference.tree.total_mass, rel=1e-14)
    assert loaded.tree.total_mass == pytest.approx(plain.tree.total_mass + PAYLOAD.mass)
    rng = np.random.default_rng(3)
    for _ in range(4):
        x = np.asarray(x0) + rng.uniform(-0.02, 0.02, plain.n)
        xd, xdd = rng.normal(scale=0.1, size=(2, plain.n))
        f = loaded.inverse_dynamics(x, xd, xdd)
        assert rel(f, reference.inverse_dynamics(x, xd, xdd)) < 1e-11
        assert rel(f, plain.inverse_dynamics(x, xd, xdd)) > 1e-3      # the load matters
        assert rel(loaded.forward_dynamics(x, xd, f), reference.forward_dynamics(x, xd, f)) < 1e-10
        jerk, snap = rng.normal(scale=0.1, size=(2, plain.n))
        a = loaded.higher_order_inverse_dynamics(x, xd, xdd, jerk, snap)
        b = reference.higher_order_inverse_dynamics(x, xd, xdd, jerk, snap)
        for k in ("u", "du", "ddu"):
            assert rel(getattr(a, k), getattr(b, k)) < 1e-9


@pytest.mark.parametrize("name,offset", [("planar_3rrr", [0.01, -0.01, 0.05]),
                                         ("gough_stewart_6ups",
                                          [0.02, -0.01, 0.03, 0.01, 0.02, 0.03])])
def test_parallel_payload_matches_load_in_urdf(name, offset):
    plain, loaded, reference = pair(name)
    assert loaded.tree.total_mass == pytest.approx(reference.tree.total_mass, rel=1e-14)
    rng = np.random.default_rng(5)
    for s in (0.3, 1.0):
        pose = plain.task_pose(s * np.asarray(offset))
        V, A = rng.normal(scale=0.2, size=(2, plain.dof))
        u = loaded.inverse_dynamics(pose, V, A)
        assert rel(u, reference.inverse_dynamics(pose, V, A)) < 1e-10
        assert rel(u, plain.inverse_dynamics(pose, V, A)) > 1e-3
        sol = loaded.inverse_kinematics(pose)
        M_ref = reference.mass_matrix(reference.inverse_kinematics(pose))
        assert rel(loaded.mass_matrix(sol), M_ref) < 1e-11
        a = loaded.forward_dynamics(pose, V, u)
        assert rel(a, reference.forward_dynamics(pose, V, u)) < 1e-9
        jerk, snap = rng.normal(scale=0.2, size=(2, plain.dof))
        h = loaded.higher_order_inverse_dynamics(pose, V, A, jerk, snap)
        h_ref = reference.higher_order_inverse_dynamics(pose, V, A, jerk, snap)
        for k in ("u", "du", "ddu"):
            assert rel(getattr(h, k), getattr(h_ref, k)) < 1e-9


def test_empty_payload_keeps_the_description():
    desc = load_robot((ROBOTS / "planar_3rrr.urdf").read_text()).description
    assert description_with_payload(desc, Payload()) is desc


def test_payload_keeps_the_original_robot():
    plain, loaded, _ = pair("linear_4bar_1dof")
    x = [0.5 * (plain.chain.info[0].lower + plain.chain.info[0].upper)]
    fresh = load_robot((ROBOTS / "linear_4bar_1dof.urdf").read_text())
    assert np.array_equal(plain.inverse_dynamics(x, [0.0], [0.0]),
                          fresh.inverse_dynamics(x, [0.0], [0.0]))
    assert loaded.tree.M is not plain.tree.M


def test_point_mass_has_no_inertia():
    p = Payload(2.0, [0.0, 0.0, 0.5])
    M = p.spatial_inertia()
    assert M[3, 3] == 2.0 and M[0, 0] == pytest.approx(2.0 * 0.25)    # m |c|^2 about x


@pytest.mark.parametrize("args,culprit", [
    ((-1.0, None, None), "mass"),
    ((float("nan"), None, None), "mass"),
    ((1.0, [0.0, float("inf"), 0.0], None), "centre of mass"),
    ((1.0, [0.0, 0.0], None), "centre of mass"),
    ((1.0, None, np.diag([-0.1, 1.0, 1.0])), "semi-definite"),
    ((1.0, None, np.diag([0.1, 0.1, 1.0])), "triangle"),
    ((1.0, None, [[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), "symmetric"),
])
def test_invalid_payload_is_refused_naming_the_culprit(args, culprit):
    with pytest.raises(DescriptionError, match=culprit):
        Payload(*args)


def test_urdf_inertia_order():
    p = Payload.from_urdf_inertia(1.0, [0, 0, 0], [1.0, 0.1, 0.2, 1.5, 0.3, 2.0])
    assert np.array_equal(p.inertia, [[1.0, 0.1, 0.2], [0.1, 1.5, 0.3], [0.2, 0.3, 2.0]])
    with pytest.raises(DescriptionError, match="6 numbers"):
        Payload.from_urdf_inertia(1.0, [0, 0, 0], [1.0, 1.0, 1.0])
