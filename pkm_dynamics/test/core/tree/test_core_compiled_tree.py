"""Compiled tree kernels (core/tree/tree_kernels.py) against the numpy reference route of
core/tree/tree_dynamics.py and against Pinocchio (an independent implementation, same URDF): forward
kinematics, twists and accelerations, RNEA, CRBA, ABA and the frame Jacobian on the spanning tree
of every example robot and of the test trees, single states and batches, plus the errors."""
import glob
import os
import threading
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin     # a test dependency (package.xml, requirements.txt): never skipped
import pytest

from pkm_dynamics.core import StateError, load_tree
from pkm_dynamics.core.tree import tree_dynamics as td
from pkm_dynamics.core.tree import compiled_tree as tm
from pkm_dynamics.core.tree.tree_model import EXTENSION_TAGS

HERE = os.path.dirname(os.path.abspath(__file__))
URDFS = sorted(glob.glob(os.path.join(HERE, "..", "..", "..", "robots", "*.urdf"))
               + glob.glob(os.path.join(HERE, "..", "..", "data", "*.urdf")))
GRAVITY = np.array([0.3, -0.2, -9.80665])


def _plain_urdf(path):
    """The URDF part of a robot description (extension elements removed) for Pinocchio."""
    root = ET.parse(path).getroot()
    for el in [el for el in root if el.tag in EXTENSION_TAGS]:
        root.remove(el)
    return ET.tostring(root, encoding="unicode")


@pytest.fixture(scope="module", params=URDFS, ids=lambda p: os.path.basename(p)[:-5])
def trees(request):
    """(tree, its compiled arrays, Pinocchio model and data, index in Pinocchio's v of each joint)."""
    tree = load_tree(request.param, gravity=GRAVITY)
    pm = pin.buildModelFromXML(_plain_urdf(request.param))
    pm.gravity.linear = GRAVITY
    perm = [pm.joints[pm.getJointId(name)].idx_v for name in tree.joint_names]
    assert pm.nv == tree.nq
    return tree, tree.compiled, pm, pm.createData(), np.array(perm)


def _pin_q(tree, pm, q):
    """Pinocchio's configuration of the joint values ``q`` (a continuous joint is (cos, sin))."""
    out = np.zeros(pm.nq)
    for name, v in zip(tree.joint_names, q):
        joint = pm.joints[pm.getJointId(name)]
        out[joint.idx_q:joint.idx_q + joint.nq] = (v,) if joint.nq == 1 else (np.cos(v), np.sin(v))
    return out


def _states(tree, rng, batch):
    n = tree.nq
    return (rng.uniform(-2, 2, (batch, n)), rng.normal(size=(batch, n)), rng.normal(size=(batch, n)),
            rng.normal(scale=10.0, size=(batch, n, 6)))


def _close(a, ref, rel=1e-12):
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(a, ref, rtol=0, atol=rel * scale)


def test_kernels_match_the_reference_route_batched_and_single(trees):
    tree, ct, _, _, _ = trees
    Q, QD, QDD, FE = _states(tree, np.random.default_rng(5), 6)
    link = tree.body_names[-1]
    batch = dict(fk=tm.forward_kinematics(ct, Q), tau=tm.rnea(ct, Q, QD, QDD, f_ext=FE),
                 H=tm.crba(ct, Q), qdd=tm.aba(ct, Q, QD, QDD, f_ext=FE), J=tm.frame_jacobian(ct, Q, link),
                 kin=tm.kinematics(ct, Q, QD, QDD, base_acceleration=np.arange(6.0)))
    for k in range(len(Q)):
        q, qd, qdd, fe = Q[k], QD[k], QDD[k], FE[k]
        _close(batch["fk"][k], td.forward_kinematics(tree, q))
        _close(batch["tau"][k], td.rnea(tree, q, qd, qdd, f_ext=fe))
        _close(batch["H"][k], td.crba(tree, q))
        _close(batch["qdd"][k], td.aba(tree, q, qd, qdd, f_ext=fe), 1e-10)
        _close(batch["J"][k], td.frame_jacobian(tree, q, link))
        _, C, V, A = td.kinematics(tree, q, qd, qdd, base_acceleration=np.arange(6.0))
        for got, ref in zip((batch["kin"][0][k], batch["kin"][1][k], batch["kin"][2][k]), (C, V, A)):
            _close(got, ref)
        # one state gives the row of the batch, bit for bit
        np.testing.assert_array_equal(tm.rnea(ct, q, qd, qdd, f_ext=fe), batch["tau"][k])
        np.testing.assert_array_equal(tm.aba(ct, q, qd, qdd, f_ext=fe), batch["qdd"][k])
        np.testing.assert_array_equal(tm.crba(ct, q), batch["H"][k])
        np.testing.assert_array_equal(tm.frame_jacobian(ct, q, link), batch["J"][k])


def test_kernels_match_pinocchio(trees):
    tree, ct, pm, pd, perm = trees
    Q, QD, QDD, FE = _states(tree, np.random.default_rng(6), 5)
    n = tree.nq
    tau = tm.rnea(ct, Q, QD, QDD, f_ext=FE)
    H = tm.crba(ct, Q)
    qdd = tm.aba(ct, Q, QD, tau, f_ext=FE)
    C = tm.forward_kinematics(ct, Q)
    links = sorted(tree.frames)
    J = {link: tm.frame_jacobian(ct, Q, link) for link in links}
    for k in range(len(Q)):
        qd, a = np.zeros(n), np.zeros(n)
        q = _pin_q(tree, pm, Q[k])
        qd[perm], a[perm] = QD[k], QDD[k]
        fext = [pin.Force.Zero() for _ in range(pm.njoints)]
        for i, name in enumerate(tree.joint_names):       # (moment, force) -> Pinocchio's (linear, angular)
            fext[pm.getJointId(name)] = pin.Force(FE[k, i, 3:], FE[k, i, :3])
        _close(tau[k], pin.rnea(pm, pd, q, qd, a, fext)[perm], 1e-10)
        Hp = pin.crba(pm, pd, q)
        Hp = np.triu(Hp) + np.triu(Hp, 1).T
        _close(H[k], Hp[np.ix_(perm, perm)], 1e-10)
        t = np.zeros(n)
        t[perm] = tau[k]
        _close(pin.aba(pm, pd, q, qd, t, fext)[perm], QDD[k], 1e-9)
        _close(qdd[k], QDD[k], 1e-9)
        pin.forwardKinematics(pm, pd, q)
        for i, name in enumerate(tree.joint_names):
            _close(C[k, i], pd.oMi[pm.getJointId(name)].homogeneous)
        pin.computeJointJacobians(pm, pd, q)
        pin.updateFramePlacements(pm, pd)
        for link in links:
            Jp = pin.getFrameJacobian(pm, pd, pm.getFrameId(link, pin.BODY), pin.LOCAL)
            _close(J[link][k], np.vstack([Jp[3:], Jp[:3]])[:, perm])      # (v, w) -> (w, v)


def test_model_arrays_are_read_only_and_scratch_is_per_thread():
    tree = load_tree(URDFS[0])
    ct = tree.compiled
    assert tree.compiled is ct
    for a in ct.model:
        assert not a.flags.writeable
    mine = ct.data()
    theirs = []
    t = threading.Thread(target=lambda: theirs.append(ct.data()))
    t.start()
    t.join()
    assert all(a is not b for a, b in zip(mine, theirs[0]))


@pytest.mark.parametrize("which", [0, 1, 2])
def test_non_finite_input_raises_the_reference_message(which):
    tree = load_tree(URDFS[0])
    ct = tree.compiled
    arrays = [np.full((3, tree.nq), 0.1) for _ in range(3)]
    arrays[which][1, -1] = np.nan
    names = ("q", "qd", "qdd")
    with pytest.raises(StateError) as ref:
        td.rnea(tree, *(a[1] for a in arrays))
    assert tree.joint_names[-1] in str(ref.value) and names[which] in str(ref.value)
    with pytest.raises(StateError) as got:
        tm.rnea(ct, *arrays)
    assert str(got.value) == str(ref.value)
    with pytest.raises(StateError, match="f_ext is not finite"):
        tm.aba(ct, *(a[0] for a in arrays), f_ext=np.full((tree.nq, 6), np.inf))


def test_bad_shapes_and_overflow_raise_state_error():
    tree = load_tree(URDFS[0])
    ct = tree.compiled
    n = tree.nq
    with pytest.raises(StateError, match=r"qd has shape \(2, %d\), but q has shape \(3, %d\)" % (n, n)):
        tm.rnea(ct, np.zeros((3, n)), np.zeros((2, n)), np.zeros((3, n)))
    with pytest.raises(StateError, match=r"q has shape \(%d,\)" % (n + 1)):
        tm.crba(ct, np.zeros(n + 1))
    with pytest.raises(StateError, match=r"f_ext has shape \(3, 6\)"):
        tm.rnea(ct, np.zeros(n), np.zeros(n), np.zeros(n), f_ext=np.zeros((3, 6)))
    with pytest.raises(StateError, match="result is not finite at joint"):
        tm.rnea(ct, np.zeros(n), np.full(n, 1e200), np.zeros(n))


def test_every_call_uses_the_one_compiled_signature():
    """Gravity given or not, wrenches or not, lists or arrays: the inputs are made the one array
    type each kernel is compiled for (another would compile it again, seconds in a control loop)."""
    from pkm_dynamics.core.tree import tree_kernels as K
    tree = load_tree(URDFS[0])
    ct = tree.compiled
    n = tree.nq
    q = np.full((2, n), 0.1)[:, :]
    tm.rnea(ct, q.tolist(), q[:, ::1], q, gravity=[0.0, 0.0, -1.0], f_ext=np.zeros((2, n, 6)))
    tm.rnea(ct, q[0], q[0], q[0])
    tm.aba(ct, q[0], q[0], q[0], gravity=np.ones(3), f_ext=np.zeros((n, 6)))
    tm.kinematics(ct, q, q, base_acceleration=[0.0] * 6)
    tm.kinematics(ct, q, q)
    for fn in (K.rnea_rows, K.aba_rows, K.kinematics_rows):
        assert len(fn.signatures) == 1, fn.signatures
