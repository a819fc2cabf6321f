"""Exact first derivatives of the module-chain dynamics (core/derivatives/derivatives.py, the forward-mode
kernel of core/derivatives/chain_derivatives.py) against two independent paths: central finite
differences of the public FD/ID calls, and Pinocchio's derivatives of the constrained dynamics
of the same mechanism (spanning tree + one CONTACT_3D per cut joint,
``computeConstraintDynamicsDerivatives``) mapped to actuator coordinates through the closure."""
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from pkm_dynamics.core import SingularityError, StateError
from pkm_dynamics.core.derivatives.derivatives import DynamicsDerivatives
from pkm_dynamics.core.description.examples import module_chain_urdf
from pkm_dynamics.core.robot import load_robot
from pkm_dynamics.core.tree.tree_model import EXTENSION_TAGS
from pkm_dynamics.testing import chain_states, module_chain_sources

HERE = os.path.dirname(os.path.abspath(__file__))
ROBOTS = os.path.join(HERE, "..", "..", "..", "robots")
CHAINS = module_chain_sources(ROBOTS)


@pytest.fixture(scope="module", params=sorted(CHAINS))
def chain(request):
    return load_robot(CHAINS[request.param])


def _state(robot, rng):
    """A state inside the strokes (20-80 %), velocities, accelerations, an end-effector wrench."""
    return chain_states(robot, rng, None, (0.2, 0.8), rate_scale=0.5, wrench_scale=50.0)


def _central(fn, args, which, h):
    """Central differences (step ``h``) of ``fn(*args)`` along every component of
    ``args[which]``: the columns of the Jacobian."""
    cols = []
    for i in range(len(args[which])):
        a, b = [v.copy() for v in args], [v.copy() for v in args]
        a[which][i] += h
        b[which][i] -= h
        cols.append((fn(*a) - fn(*b)) / (2.0 * h))
    return np.column_stack(cols)


def _relative(a, ref) -> float:
    return float(np.abs(a - ref).max() / max(np.abs(ref).max(), 1e-300))


def test_inverse_dynamics_derivatives_match_central_differences(chain):
    rng = np.random.default_rng(5)
    for _ in range(3):
        x, xd, xdd, fe = _state(chain, rng)
        d = chain.inverse_dynamics_derivatives(x, xd, xdd, wrench=fe)
        assert isinstance(d, DynamicsDerivatives)
        np.testing.assert_allclose(d.value, chain.inverse_dynamics(x, xd, xdd, wrench=fe), rtol=1e-13, atol=1e-9)
        fn = lambda a, b, c: chain.inverse_dynamics(a, b, c, wrench=fe)      # noqa: E731
        for which, jac in enumerate((d.d_x, d.d_xd, d.d_u)):
            assert jac.shape == (chain.n, chain.n)
            assert _relative(jac, _central(fn, [x, xd, xdd], which, 1e-6)) <= 1e-6


def test_forward_dynamics_derivatives_match_central_differences(chain):
    rng = np.random.default_rng(6)
    for _ in range(3):
        x, xd, xdd, fe = _state(chain, rng)
        f = chain.inverse_dynamics(x, xd, xdd, wrench=fe)
        d = chain.forward_dynamics_derivatives(x, xd, f, wrench=fe)
        np.testing.assert_allclose(d.value, chain.forward_dynamics(x, xd, f, wrench=fe), rtol=1e-12, atol=1e-12)
        fn = lambda a, b, c: chain.forward_dynamics(a, b, c, wrench=fe)      # noqa: E731
        steps = (1e-6, 1e-6, 1e-6 * max(1.0, np.abs(f).max()))
        for which, jac in enumerate((d.d_x, d.d_xd, d.d_u)):
            assert _relative(jac, _central(fn, [x, xd, f], which, steps[which])) <= 1e-6


def test_mass_matrix_identities(chain):
    """d_u of the ID is the symmetric positive definite M, d_u of the FD its inverse, and
    dFD/d(x, xd) = -M^-1 dID/d(x, xd) at the FD's accelerations."""
    x, xd, xdd, fe = _state(chain, np.random.default_rng(7))
    di = chain.inverse_dynamics_derivatives(x, xd, xdd, fe)
    df = chain.forward_dynamics_derivatives(x, xd, di.value, fe)
    M = di.d_u
    scale = np.abs(M).max()
    np.testing.assert_allclose(M, M.T, atol=1e-12 * scale)
    assert np.linalg.eigvalsh(M).min() > 0
    np.testing.assert_allclose(df.d_u @ M, np.eye(chain.n), atol=1e-10)
    np.testing.assert_allclose(M @ df.d_x, -di.d_x, atol=1e-10 * np.abs(di.d_x).max())
    np.testing.assert_allclose(M @ df.d_xd, -di.d_xd, atol=1e-10 * max(1.0, np.abs(di.d_xd).max()))


def test_batch_matches_single_states(chain):
    rng = np.random.default_rng(8)
    rows = [_state(chain, rng) for _ in range(4)]
    X, XD, XDD, FE = (np.array([r[i] for r in rows]) for i in range(4))
    F = chain.inverse_dynamics(X, XD, XDD, wrench=FE)
    for method, third in ((chain.inverse_dynamics_derivatives, XDD), (chain.forward_dynamics_derivatives, F)):
        batch = method(X, XD, third, wrench=FE)
        assert batch.value.shape == (4, chain.n) and batch.d_x.shape == (4, chain.n, chain.n)
        for k in range(4):
            one = method(X[k], XD[k], third[k], FE[k])
            for name in ("value", "d_x", "d_xd", "d_u"):
                np.testing.assert_array_equal(getattr(one, name), getattr(batch, name)[k])


def test_bad_states_raise_the_messages_of_the_dynamics():
    robot = load_robot(CHAINS["heavy_duty_4dof"])
    x = np.array([0.3, 0.2, 0.4, 0.5])
    z = np.zeros(4)
    bad = x.copy()
    bad[2] = 5.0                                                     # beyond the stroke
    with pytest.raises(StateError) as ref:
        robot.forward_dynamics(bad, z, z)
    with pytest.raises(StateError) as err:
        robot.forward_dynamics_derivatives(bad, z, z)
    assert str(err.value) == str(ref.value)
    with pytest.raises(StateError, match="xd"):
        robot.inverse_dynamics_derivatives(x, [0, np.nan, 0, 0], z)
    with pytest.raises(StateError, match="shape"):
        robot.inverse_dynamics_derivatives(x, z[:3], z)
    chain = load_robot(module_chain_urdf(2))
    with pytest.raises((SingularityError, StateError)) as ref:
        chain.inverse_dynamics([0.0, 10.0], [0, 0], [0, 0])
    with pytest.raises(type(ref.value)) as err:
        chain.inverse_dynamics_derivatives([0.0, 10.0], [0, 0], [0, 0])
    assert str(err.value) == str(ref.value)


# ----------------------------------------------------------------------------------------------
# Pinocchio: derivatives of the constrained dynamics of the spanning tree with the loops closed


class _PinocchioMechanism:
    """The URDF spanning tree in Pinocchio with one CONTACT_3D per cut joint (as
    bench/bench_module_chain.py builds it), and the map between tree and Pinocchio vectors."""

    def __init__(self, robot):
        import pinocchio as pin     # a test dependency (package.xml, requirements.txt): never skipped
        self.pin = pin
        root = ET.fromstring(robot.description.xml)
        for el in list(root):
            if el.tag in EXTENSION_TAGS:
                root.remove(el)
        m = self.model = pin.buildModelFromXML(ET.tostring(root, encoding="unicode"))
        m.gravity.linear = robot.gravity
        self.data = m.createData()
        self.cmodels, self.cdatas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
        for cut in robot.description.cut_joints:
            ends = []
            for link, origin in ((cut.parent_link, cut.parent_origin), (cut.child_link, cut.child_origin)):
                fr = m.frames[m.getFrameId(link)]
                ends.append((fr.parentJoint, fr.placement * pin.SE3(origin[:3, :3].copy(), origin[:3, 3].copy())))
            c = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, m, ends[0][0], ends[0][1], ends[1][0],
                                         ends[1][1], pin.ReferenceFrame.LOCAL)
            self.cmodels.append(c)
            self.cdatas.append(c.createData())
        pin.initConstraintDynamics(m, self.data, self.cmodels, self.cdatas)
        self.prox = pin.ProximalSettings(1e-10, 1e-12, 3)
        self.joints = [m.joints[m.getJointId(name)] for name in robot.tree_joints]
        self.P = np.zeros((m.nv, len(self.joints)))               # tree order -> Pinocchio v
        for j, jm in enumerate(self.joints):
            self.P[jm.idx_v, j] = 1.0

    def configuration(self, Q):
        q = self.pin.neutral(self.model)
        for jm, qi in zip(self.joints, Q):
            if jm.nq == 2:                                         # continuous joint: (cos, sin)
                q[jm.idx_q], q[jm.idx_q + 1] = np.cos(qi), np.sin(qi)
            else:
                q[jm.idx_q] = qi
        return q

    def derivatives(self, Q, QD, tau):
        """``(ddq, ddq_dq, ddq_dv, ddq_dtau)`` in tree order."""
        pin, m, d = self.pin, self.model, self.data
        q, v, t = self.configuration(Q), self.P @ QD, self.P @ tau
        ddq = pin.constraintDynamics(m, d, q, v, t, self.cmodels, self.cdatas, self.prox)
        pin.computeConstraintDynamicsDerivatives(m, d, self.cmodels, self.cdatas, self.prox)
        P = self.P
        return P.T @ ddq, P.T @ d.ddq_dq @ P, P.T @ d.ddq_dv @ P, P.T @ d.ddq_dtau @ P


def _closure_maps(robot, x):
    """Derivatives of the tree coordinates along the actuators (each tree joint follows one
    actuator x_k): ``H = dq/dx``, ``T2``, ``T3`` (nq, n) with ``d2q/dx_k^2``, ``d3q/dx_k^3`` in
    column k.  H and T2 from ``tree_state(x, 1, 0)`` (velocities and accelerations for unit
    actuator rates), T3 from the jet route (:mod:`pkm_dynamics.core.jet_dynamics`, Newton and
    pseudo-inverse on the cut-joint constraints: no code of the chain kernels) along
    ``x(t) = x + t``."""
    from pkm_dynamics.core.spatial import taylor
    from pkm_dynamics.core.hoid.jet_dynamics import jet_model, tree_motion_jet
    n, nq = robot.n, robot.tree.nq
    Q, H1, H2 = robot.tree_state(x, np.ones(n), np.zeros(n))
    q3 = taylor.to_derivatives(tree_motion_jet(jet_model(robot.description), Q,
                                               np.array([x, np.ones(n), np.zeros(n), np.zeros(n)])))[3]
    H, T2, T3 = np.zeros((nq, n)), np.zeros((nq, n)), np.zeros((nq, n))
    for k, info in enumerate(robot.chain.info):
        for j in info.tree_idx:
            H[j, k], T2[j, k], T3[j, k] = H1[j], H2[j], q3[j]
    return H, T2, T3


PINOCCHIO_CHAINS = ["heavy_duty_4dof", "chain_1", "chain_3", "chain_8"]


@pytest.mark.parametrize("name", PINOCCHIO_CHAINS)
def test_inverse_dynamics_derivatives_match_pinocchio_rnea_derivatives(name):
    """The chain ID is ``f(x, xd, xdd) = H^T tau(q(x), H xd, H xdd + T2 xd^2)`` (tau: RNEA of
    the open spanning tree; the loop forces do no work along H).  Chain rule with Pinocchio's
    ``computeRNEADerivatives``: ``df/dxdd = H^T dtau_da H``, ``df/dxd = H^T (dtau_dv H + dtau_da
    2 T2 xd)``, ``df/dx = diag(T2^T tau) + H^T (dtau_dq H + dtau_dv T2 xd + dtau_da (T2 xdd +
    T3 xd^2))`` (column k scaled by xd_k, xdd_k)."""
    robot = load_robot(CHAINS[name])
    peer = _PinocchioMechanism(robot)
    pin, P = peer.pin, peer.P
    rng = np.random.default_rng(10)
    for _ in range(3):
        x, xd, xdd, _ = _state(robot, rng)
        ours = robot.inverse_dynamics_derivatives(x, xd, xdd)
        H, T2, T3 = _closure_maps(robot, x)
        Q, QD, QDD = robot.tree_state(x, xd, xdd)
        q, v, a = peer.configuration(Q), P @ QD, P @ QDD
        dq, dv, da = (P.T @ m @ P for m in pin.computeRNEADerivatives(peer.model, peer.data, q, v, a))
        tau = P.T @ pin.rnea(peer.model, peer.data, q, v, a)
        assert _relative(ours.value, H.T @ tau) <= 1e-12
        assert _relative(ours.d_u, H.T @ da @ H) <= 1e-8
        assert _relative(ours.d_xd, H.T @ (dv @ H + da @ (2.0 * T2 * xd))) <= 1e-8
        d_x = np.diag(T2.T @ tau) + H.T @ (dq @ H + dv @ (T2 * xd) + da @ (T2 * xdd + T3 * xd**2))
        assert _relative(ours.d_x, d_x) <= 1e-8


@pytest.mark.parametrize("name", PINOCCHIO_CHAINS)
def test_forward_dynamics_derivatives_match_pinocchio_constraint_dynamics(name):
    """``computeConstraintDynamicsDerivatives`` mapped through the closure: with ``x = S q``,
    ``dxdd/dxd = S ddq_dv H`` and ``dxdd/df = S ddq_dtau S^T``.  ``dxdd/dx`` is not compared
    here: Pinocchio 4.1.0's ``ddq_dq`` for these loop constraints (CONTACT_3D between two moving
    bodies) differs from the central differences of its own ``constraintDynamics`` in the
    column of the link joint of each 4-bar (chain_1: by 9.2 where the entries are ~3), so
    ``d_x`` is checked against Pinocchio through its RNEA derivatives (the test above, with
    ``dFD/dx = -M^-1 dID/dx`` of :func:`test_mass_matrix_identities`)."""
    robot = load_robot(CHAINS[name])
    peer = _PinocchioMechanism(robot)
    n, nq = robot.n, robot.tree.nq
    S = np.zeros((n, nq))
    for k, info in enumerate(robot.chain.info):
        S[k, robot.tree_joints.index(info.joint)] = 1.0
    rng = np.random.default_rng(9)
    for _ in range(3):
        x, xd, xdd, _ = _state(robot, rng)
        f = robot.inverse_dynamics(x, xd, xdd)
        ours = robot.forward_dynamics_derivatives(x, xd, f)
        H, T2, _ = _closure_maps(robot, x)
        Q, QD, _ = robot.tree_state(x, xd)
        ddq, dq, dv, dtau = peer.derivatives(Q, QD, S.T @ f)
        assert _relative(S @ ddq, ours.value) <= 1e-9
        assert _relative(ours.d_xd, S @ dv @ H) <= 1e-8
        assert _relative(ours.d_u, S @ dtau @ S.T) <= 1e-8
