"""Round-off accuracy of the SE(3)/SO(3) exponential and logarithm at every rotation angle,
dense around the small-angle series switch-overs (ours at 1e-4 rad, Pinocchio's at
eps^(1/4) = 1.22e-4 rad and 1e-3 rad) and near pi.

Independent paths: the power series ``sum H^k / k!`` of the 4x4 matrix ``H = [X]`` summed in
extended precision (``np.longdouble``), and Pinocchio's ``exp6``/``exp3``/``log6``/``log3``.
Every form is checked: the numpy forms of :mod:`.spatial`, the batched forms
(``*_batch``) and the scalar kernel of :mod:`~pkm_dynamics.core.spatial.se3_kernels`.
"""
import numpy as np
import pinocchio as pin     # a test dependency (package.xml, requirements.txt): never skipped

from pkm_dynamics.core import spatial
from pkm_dynamics.core.spatial import se3_kernels as spatial_kernels

ANGLES = (0.0, 1e-12, 1e-10, 1e-8, 1e-6, 1e-5, 5e-5, 9e-5, 1e-4, 1.1e-4, 1.2e-4, 1.22e-4,
          1.25e-4, 1.3e-4, 1.5e-4, 1.8e-4, 2e-4, 3e-4, 5e-4, 1e-3, 1.5e-3, 2e-3, 5e-3, 1e-2,
          0.1, 0.5, 1.0, 1.9, 2.0, 2.1, 3.0, 3.1, 3.14, 3.1415)
EPS = np.finfo(float).eps


def twists(angle, n=20, seed=0):
    """``n`` random twists whose rotation part has the norm ``angle``."""
    X = np.random.default_rng(seed).normal(size=(n, 6))
    X[:, :3] *= angle / np.linalg.norm(X[:, :3], axis=1, keepdims=True)
    return X


def expm_reference(X):
    """``exp([X])`` (4, 4) by its power series in extended precision."""
    H = np.zeros((4, 4), dtype=np.longdouble)
    a, b, c, d, e, f = X.astype(np.longdouble)
    H[:3, :3] = [[0, -c, b], [c, 0, -a], [-b, a, 0]]
    H[:3, 3] = d, e, f
    out = np.eye(4, dtype=np.longdouble)
    term = np.eye(4, dtype=np.longdouble)
    for k in range(1, 80):
        term = term @ H / k
        out += term
    return out


def tol(X):
    """Round-off bound for an entry of ``exp([X])`` or of ``log``: a few eps times the size."""
    return 4.0 * EPS * max(1.0, np.abs(X).max())


def test_extended_precision_is_extended():
    assert np.finfo(np.longdouble).eps < 1e-18


def test_exp_forms_at_round_off_against_extended_precision_and_pinocchio():
    out = np.zeros((4, 4))
    for angle in ANGLES:
        Xs = twists(angle)
        batched = spatial.exp_se3_batch(Xs)
        for X, E_batched in zip(Xs, batched):
            ref = expm_reference(X)
            t = tol(X)
            spatial_kernels.exp_se3(X, 1.0, out)
            for form, E in (("spatial", spatial.exp_se3(X)), ("batched", E_batched), ("kernel", out)):
                assert float(np.abs(E - ref).max()) <= t, (form, angle)
            assert float(np.abs(spatial.exp_so3(X[:3]) - ref[:3, :3]).max()) <= t, angle
            # Pinocchio: equal up to round-off plus Pinocchio's own distance from the reference
            # (its exp6 loses up to 1e-12 in the translation just above its switch-over
            # eps^(1/4), from the cancellation in (1 - sin(t)/t) / t^2)
            P = pin.exp6(pin.Motion(X[3:], X[:3])).homogeneous
            own = float(np.abs(P - ref).max())
            assert np.abs(spatial.exp_se3(X) - P).max() <= t + own, angle
            assert np.abs(spatial.exp_so3(X[:3]) - pin.exp3(X[:3])).max() <= 2 * t, angle


def test_log_forms_at_round_off_against_extended_precision_and_pinocchio():
    for angle in ANGLES:
        Xs = twists(angle, seed=1)
        C = np.array([expm_reference(X).astype(float) for X in Xs])
        batched = spatial.log_se3_batch(C)
        kernel = np.zeros(6)
        for X, Ck, L_batched in zip(Xs, C, batched):
            t = 2.0 * tol(X)
            assert np.abs(spatial.log_se3(Ck) - X).max() <= t, angle
            assert np.abs(L_batched - X).max() <= t, angle
            spatial_kernels.log_se3(Ck, kernel)
            assert np.abs(kernel - X).max() <= t, angle
            assert np.abs(spatial.log_so3(Ck[:3, :3]) - X[:3]).max() <= t, angle
            l6 = pin.log6(Ck)
            own = np.abs(np.r_[l6.angular, l6.linear] - X).max()
            assert np.abs(spatial.log_se3(Ck) - np.r_[l6.angular, l6.linear]).max() <= t + own, angle
            own3 = np.abs(pin.log3(Ck[:3, :3]) - X[:3]).max()
            assert np.abs(spatial.log_so3(Ck[:3, :3]) - pin.log3(Ck[:3, :3])).max() <= t + own3, angle


def test_pinocchio_at_round_off_away_from_its_switch_overs():
    """Where Pinocchio is itself at round-off, the comparison above is a tight one."""
    for angle in (1e-8, 1e-4, 0.1, 1.0, 2.0):
        for X in twists(angle, seed=2):
            P = pin.exp6(pin.Motion(X[3:], X[:3])).homogeneous
            assert np.abs(spatial.exp_se3(X) - P).max() <= 2 * tol(X), angle


def test_unit_screw_exp_at_round_off_against_extended_precision():
    """The joints' exponential (unit rotation axis or pure translation, precomputed hats) of
    the IK's inner loops, at the same angles, against the extended-precision series."""
    for angle in ANGLES:
        X = twists(1.0, n=10, seed=3)
        X[5:, :3] = 0.0                                     # prismatic joints
        X[5:, 3:] /= np.linalg.norm(X[5:, 3:], axis=1, keepdims=True)
        W = spatial.hat_batch(X[:, :3])
        th = np.full(len(X), angle) * np.where(np.arange(len(X)) % 2, -1.0, 1.0)
        T = spatial.exp_unit_screws_batch(th, X, W, W @ W)
        for k in range(len(X)):
            assert float(np.abs(T[k] - expm_reference(X[k] * th[k])).max()) <= tol(X[k] * th[k]), angle
