"""The scalar formulas of the spatial algebra that both routes evaluate from one definition: the
numpy forms of :mod:`.se3` and :mod:`.so3` call them, :mod:`.se3_kernels` compiles them (numba).
Plain scalar Python on floats, tuples in and out, calling nothing but :mod:`math`; conventions as
in :mod:`.se3`."""
from __future__ import annotations

import math

#: below this ``th^2`` the coefficients of :func:`so3_coefficients` are their series
SO3_SERIES_TH2 = 1e-8


def so3_coefficients(th2: float) -> tuple:
    """``sin(th)/th, (1 - cos th)/th^2, (th - sin th)/th^3`` for ``th^2``, by their series for
    small angles (where the closed forms lose digits to cancellation).  The first omitted terms
    (``th^4/120, th^4/720, th^4/5040``) are below 1e-18 there; above, the cancellation in
    ``th - sin th`` costs ``eps / th^2`` relative in the third coefficient, which multiplies
    ``th^2 |v|``: the translation of :func:`.se3.exp_se3` stays at round-off (``eps |v|``).

    Plain scalar Python: :mod:`~pkm_dynamics.core.spatial.se3_kernels` compiles this same function."""
    if th2 < SO3_SERIES_TH2:
        return 1.0 - th2 / 6.0, 0.5 - th2 / 24.0, 1.0 / 6.0 - th2 / 120.0
    th = math.sqrt(th2)
    s = math.sin(th)
    h = math.sin(0.5 * th) / th
    return s / th, 2.0 * h * h, (th - s) / (th2 * th)        # 1 - cos th = 2 sin^2(th/2)


def exp_se3_rows(a: float, b: float, c: float, d: float, e: float, f: float,
                 th2: float, A: float, B: float, Cc: float) -> tuple:
    """The first three rows (3 tuples of 4) of ``exp([X])`` for ``X = (a, b, c, d, e, f)``:
    ``R = I + A W + B W^2``, ``p = (I + B W + C W^2) v`` (W = [omega]x, ``th2 = |omega|^2``,
    ``A, B, Cc``: :func:`so3_coefficients` of ``th2``).  Plain scalar Python calling nothing:
    :mod:`~pkm_dynamics.core.spatial.se3_kernels` compiles this same function."""
    wv = a * d + b * e + c * f
    x1, x2, x3 = b * f - c * e, c * d - a * f, a * e - b * d          # omega x v
    return ((1.0 + B * (a * a - th2), B * a * b - A * c, B * a * c + A * b, d + B * x1 + Cc * (a * wv - th2 * d)),
            (B * a * b + A * c, 1.0 + B * (b * b - th2), B * b * c - A * a, e + B * x2 + Cc * (b * wv - th2 * e)),
            (B * a * c - A * b, B * b * c + A * a, 1.0 + B * (c * c - th2), f + B * x3 + Cc * (c * wv - th2 * f)))


def Ad_inv_rows(r00: float, r01: float, r02: float, x: float, r10: float, r11: float, r12: float, y: float,
                r20: float, r21: float, r22: float, z: float) -> tuple:
    """The six rows (tuples of 6) of :func:`.se3.Ad_inv` of the pose with rotation ``r..`` and
    translation ``(x, y, z)`` (its first three rows, row by row).  Plain scalar Python:
    :mod:`~pkm_dynamics.core.spatial.se3_kernels` compiles this same function."""
    u0 = -(r00 * x + r10 * y + r20 * z)
    u1 = -(r01 * x + r11 * y + r21 * z)
    u2 = -(r02 * x + r12 * y + r22 * z)
    # column j of [u]x R^T is u x (row j of R)
    return ((r00, r10, r20, 0.0, 0.0, 0.0),
            (r01, r11, r21, 0.0, 0.0, 0.0),
            (r02, r12, r22, 0.0, 0.0, 0.0),
            (u1 * r02 - u2 * r01, u1 * r12 - u2 * r11, u1 * r22 - u2 * r21, r00, r10, r20),
            (u2 * r00 - u0 * r02, u2 * r10 - u0 * r12, u2 * r20 - u0 * r22, r01, r11, r21),
            (u0 * r01 - u1 * r00, u0 * r11 - u1 * r10, u0 * r21 - u1 * r20, r02, r12, r22))


def ad_inv_pose_entries(c: float, s: float, px: float, py: float, pz: float) -> tuple:
    """The entries of ``Ad_inv`` of the pose ``T(p) Rz(theta)`` (``c, s = cos, sin theta``) that
    are not 0 or 1, in the order of :data:`AD_POSE_FLAT`; the matrix is
    ``[[R^T, 0], [-R^T [p]x, R^T]]``::

        [[c,     s,     0,             0,  0, 0],
         [-s,    c,     0,             0,  0, 0],
         [0,     0,     1,             0,  0, 0],
         [-s pz, c pz,  -c py + s px,  c,  s, 0],
         [-c pz, -s pz, s py + c px,   -s, c, 0],
         [py,    -px,   0,             0,  0, 1]]

    (same as :func:`.se3.Ad_inv`, without the generic path; the pose of a 4-bar module's bodies).
    Plain scalar Python: :mod:`~pkm_dynamics.core.spatial.se3_kernels` compiles this same function."""
    return (c, s, -s, c, -s * pz, c * pz, -c * py + s * px, c, s, -c * pz, -s * pz, s * py + c * px,
            -s, c, py, -px)


#: flat indices (row * 6 + column) of the entries of :func:`ad_inv_pose_entries` in a 6x6
AD_POSE_FLAT = (0, 1, 6, 7, 18, 19, 20, 21, 22, 24, 25, 26, 27, 28, 30, 31)


def bracket_list(X, Y) -> tuple:
    """:func:`.se3.bracket` on 6 floats each (lists, tuples or arrays; for per-body loops where a
    numpy call per small vector costs more than the arithmetic), a tuple of 6.  Plain scalar
    Python: :mod:`~pkm_dynamics.core.spatial.se3_kernels` compiles this same function."""
    a, b, c, d, e, f = X[0], X[1], X[2], X[3], X[4], X[5]
    p, q, r, s, t, u = Y[0], Y[1], Y[2], Y[3], Y[4], Y[5]
    return (b * r - c * q, c * p - a * r, a * q - b * p,
            e * r - f * q + b * u - c * t, f * p - d * r + c * s - a * u, d * q - e * p + a * t - b * s)


def wrench_bias_list(nu, h) -> tuple:
    """``-ad*(nu) h = (w x h_m + v x h_f, w x h_f)`` on 6 floats each (lists, tuples or arrays),
    a tuple of 6: the bias wrench ``-ad*(nu) M nu`` of a body with momentum ``h = M nu``
    (Newton-Euler).  Plain scalar Python: :mod:`~pkm_dynamics.core.spatial.se3_kernels` compiles this same
    function."""
    a, b, c, d, e, f = nu[0], nu[1], nu[2], nu[3], nu[4], nu[5]
    hm0, hm1, hm2, hf0, hf1, hf2 = h[0], h[1], h[2], h[3], h[4], h[5]
    return (
        b * hm2 - c * hm1 + e * hf2 - f * hf1,
        c * hm0 - a * hm2 + f * hf0 - d * hf2,
        a * hm1 - b * hm0 + d * hf1 - e * hf0,
        b * hf2 - c * hf1,
        c * hf0 - a * hf2,
        a * hf1 - b * hf0,
    )
