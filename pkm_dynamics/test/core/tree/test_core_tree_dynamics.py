"""Tree dynamics (RNEA, CRBA, ABA) against Pinocchio, an independent implementation."""
import os
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest

from pkm_dynamics.core import DescriptionError, StateError, load_tree, spatial
from pkm_dynamics.core.tree import tree_dynamics as td

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data")
URDFS = ["arm_6r.urdf", "mixed_chain.urdf", "branched_tree.urdf"]
GRAVITY = np.array([0.3, -0.2, -9.80665])


def _pin_model(path):
    model = pin.buildModelFromUrdf(path)
    model.gravity.linear = GRAVITY
    return model


def _perm(tree, pmodel):
    """Index in Pinocchio's q of each tree joint (matched by name)."""
    idx = []
    for name in tree.joint_names:
        jid = pmodel.getJointId(name)
        assert pmodel.joints[jid].nq == 1
        idx.append(pmodel.joints[jid].idx_q)
    return np.array(idx)


def _rel(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-12)


@pytest.mark.parametrize("urdf", URDFS)
def test_against_pinocchio(urdf):
    path = os.path.join(DATA, urdf)
    tree = load_tree(path, gravity=GRAVITY)
    pm = _pin_model(path)
    pd = pm.createData()
    perm = _perm(tree, pm)
    assert pm.nq == tree.nq
    rng = np.random.default_rng(1)
    for _ in range(10):
        q, qd, qdd = rng.uniform(-2, 2, (3, tree.nq))
        Q, QD, QDD = (np.zeros(tree.nq) for _ in range(3))
        Q[perm], QD[perm], QDD[perm] = q, qd, qdd
        tau = td.rnea(tree, q, qd, qdd)
        assert _rel(tau, pin.rnea(pm, pd, Q, QD, QDD)[perm]) < 1e-10
        H = td.crba(tree, q)
        Hp = pin.crba(pm, pd, Q)
        Hp = np.triu(Hp) + np.triu(Hp, 1).T
        assert _rel(H, Hp[np.ix_(perm, perm)]) < 1e-10
        T = np.zeros(tree.nq)
        T[perm] = tau + rng.normal(size=tree.nq)
        assert _rel(td.aba(tree, q, qd, T[perm]), pin.aba(pm, pd, Q, QD, T)[perm]) < 1e-10
        # forward kinematics of every link frame
        pin.framesForwardKinematics(pm, pd, Q)
        for link in tree.frames:
            fid = pm.getFrameId(link, pin.BODY)
            assert np.allclose(td.frame_pose(tree, q, link), pd.oMf[fid].homogeneous, atol=1e-12)


@pytest.mark.parametrize("urdf", URDFS)
def test_round_trip_and_mass_matrix(urdf):
    tree = load_tree(os.path.join(DATA, urdf))
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-2, 2, (3, tree.nq))
    tau = td.rnea(tree, q, qd, qdd)
    assert _rel(td.aba(tree, q, qd, tau), qdd) < 1e-12
    # tau = H qdd + bias: mass matrix consistent with RNEA
    H = td.crba(tree, q)
    bias = td.rnea(tree, q, qd, np.zeros(tree.nq))
    assert _rel(H @ qdd + bias, tau) < 1e-12
    assert np.all(np.linalg.eigvalsh(H) > 0)


def test_batched_trajectory():
    tree = load_tree(os.path.join(DATA, "arm_6r.urdf"))
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-1, 1, (3, 20, tree.nq))
    tau = td.batched(td.rnea, tree, q, qd, qdd)
    assert tau.shape == (20, tree.nq)
    for k in (0, 7, 19):
        assert np.array_equal(tau[k], td.rnea(tree, q[k], qd[k], qdd[k]))
    assert _rel(td.batched(td.aba, tree, q, qd, tau), qdd) < 1e-12


def test_external_wrench_matches_jacobian_transpose():
    """A tip wrench enters RNEA as -J^T W (virtual work), J from the frame Jacobian."""
    tree = load_tree(os.path.join(DATA, "mixed_chain.urdf"))
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-1, 1, (3, tree.nq))
    W = rng.normal(size=6)
    body, O = tree.frame("tool")
    f_ext = np.zeros((tree.nq, 6))
    f_ext[body] = spatial.Ad_inv(O).T @ W  # wrench W acting at the tool frame, in body coordinates
    J = td.frame_jacobian(tree, q, "tool")
    lhs = td.rnea(tree, q, qd, qdd, f_ext=f_ext)
    assert _rel(lhs, td.rnea(tree, q, qd, qdd) - J.T @ W) < 1e-12


def test_spatial_identities():
    rng = np.random.default_rng(5)
    for _ in range(50):
        X, Y = rng.normal(size=(2, 6))
        C = spatial.exp_se3(X)
        assert np.allclose(spatial.exp_se3(spatial.Ad(C) @ Y), C @ spatial.exp_se3(Y) @ spatial.pose_inv(C))
        assert np.allclose(spatial.Ad_inv(C), np.linalg.inv(spatial.Ad(C)))
        h = 1e-6
        dAd = (spatial.Ad(spatial.exp_se3(X, h)) - spatial.Ad(spatial.exp_se3(X, -h))) / (2 * h)
        assert np.allclose(dAd, spatial.ad(X), atol=1e-6)
        assert np.abs(spatial.bracket(X, Y) - spatial.ad(X) @ Y).max() < 1e-13
        Z = rng.normal(size=6) * np.array([1, 1, 1, 1, 1, 1]) * 0.5
        assert np.allclose(spatial.log_se3(spatial.exp_se3(Z)), Z)
        # the joint-screw closed forms of Ad_inv(exp(X q)) against inverting Ad(exp(X q))
        e = rng.normal(size=3)
        e /= np.linalg.norm(e)
        q = rng.uniform(-4.0, 4.0)
        for S in (np.r_[e, 0, 0, 0], np.r_[0, 0, 0, e], X):
            assert np.abs(spatial.Ad_inv_exp(S, q) - np.linalg.inv(spatial.Ad(spatial.exp_se3(S, q)))).max() < 1e-12
        assert spatial.bracket_list(X.tolist(), Y.tolist()) == pytest.approx(spatial.ad(X) @ Y, abs=1e-13)
        M = spatial.spatial_inertia(2.0, rng.normal(size=3), np.diag([1.0, 2.0, 2.5]))
        assert spatial.wrench_bias_list(X.tolist(), (M @ X).tolist()) == pytest.approx(
            -spatial.ad(X).T @ M @ X, abs=1e-12)                           # -ad*(V) M V



def test_exp_se3_equals_matrix_exponential_at_every_angle():
    """The closed forms (with their small-angle series) against scipy's matrix exponential,
    from zero to large rotation angles, and ``log_se3`` inverting them."""
    import scipy.linalg
    rng = np.random.default_rng(6)
    for angle in (0.0, 1e-12, 1e-9, 1e-6, 1e-4, 1e-3, 0.1, 1.0, 3.0):
        for _ in range(10):
            X = rng.normal(size=6)
            X[:3] *= angle / np.linalg.norm(X[:3])
            Xh = np.zeros((4, 4))
            Xh[:3, :3], Xh[:3, 3] = spatial.hat(X[:3]), X[3:]
            assert np.abs(spatial.exp_se3(X) - scipy.linalg.expm(Xh)).max() < 1e-13, angle
            assert np.abs(spatial.exp_so3(X[:3]) - scipy.linalg.expm(Xh[:3, :3])).max() < 1e-14, angle
            assert np.abs(spatial.log_se3(spatial.exp_se3(X)) - X).max() < 1e-12, angle


BAD = {
    "two parents": ('<joint name="j2" type="revolute"><parent link="a"/><child link="b"/>'
                    '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>', "two parents"),
    "mimic": ('<link name="c"><inertial><mass value="1"/>'
              '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
              '<joint name="jm" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/>'
              '<limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="j"/></joint>', "jm"),
    "floating": ('<link name="c"><inertial><mass value="1"/>'
                 '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
                 '<joint name="jf" type="floating"><parent link="b"/><child link="c"/></joint>', "jf"),
    "zero mass": ('<link name="c"><inertial><mass value="0"/>'
                  '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
                  '<joint name="jz" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/>'
                  '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>', "'c'"),
    "massless subtree": ('<link name="c"/><joint name="jn" type="revolute"><parent link="b"/><child link="c"/>'
                         '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>', "jn"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_rejects_bad_urdf(case):
    extra, culprit = BAD[case]
    urdf = ('<robot name="bad"><link name="a"/><link name="b"><inertial><mass value="1"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
            '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
            '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>' + extra + '</robot>')
    with pytest.raises(DescriptionError, match=culprit):
        load_tree(urdf)


def test_rejects_bad_state():
    tree = load_tree(os.path.join(DATA, "arm_6r.urdf"))
    with pytest.raises(StateError, match="shape"):
        td.rnea(tree, np.zeros(5), np.zeros(6), np.zeros(6))
    q = np.zeros(6)
    q[2] = np.nan
    with pytest.raises(StateError, match="joint3"):
        td.rnea(tree, q, np.zeros(6), np.zeros(6))


def test_core_does_not_import_rclpy():
    code = "import sys, pkm_dynamics.core; assert 'rclpy' not in sys.modules, 'rclpy imported'; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
