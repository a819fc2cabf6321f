"""First derivatives of the forward and inverse dynamics, for model predictive control and
trajectory optimisation: the result type shared by every robot kind and the module-chain route.

Module chains (actuator space): :func:`chain_forward_dynamics_derivatives` and
:func:`chain_inverse_dynamics_derivatives` run the compiled kernel of
:mod:`~pkm_dynamics.core.derivatives.chain_derivatives`, forward-mode tangents of the chain inverse dynamics in all
``3n`` directions in one sweep, exact to round-off (no differencing).  With ``M = dID/dxdd``
(the actuator-space mass matrix) the forward-dynamics derivatives follow from those of the ID at
the FD's accelerations: ``FD(x, xd, ID(x, xd, xdd)) = xdd`` gives ``dFD/df = M^-1`` and
``dFD/d(x, xd) = -M^-1 dID/d(x, xd)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import chain_derivatives as KD
from ..module_chain.chain_model import ChainModel, _batch, _entry_point, _raise
from ..status import OK
from ..module_chain.chain_layout import LOC_SIZE


@dataclass(frozen=True)
class DynamicsDerivatives:
    """The value of a dynamics call and its first derivatives with respect to its three
    arguments ``(x, xd, third)``, each derivative a Jacobian whose row ``i`` is output ``i``
    and column ``j`` input ``j``.  One state: ``value`` (n,), ``d_x``, ``d_xd``, ``d_u`` (n, m);
    a batch: a leading axis (B, ...).

    * forward dynamics ``xdd = FD(x, xd, u)``: ``value = xdd``, ``d_x = dxdd/dx``,
      ``d_xd = dxdd/dxd``, ``d_u = dxdd/du`` (``M^-1`` for a module chain);
    * inverse dynamics ``u = ID(x, xd, xdd)``: ``value = u``, ``d_x = du/dx``, ``d_xd = du/dxd``,
      ``d_u = du/dxdd`` (the mass matrix ``M`` for a module chain)."""

    value: np.ndarray
    d_x: np.ndarray
    d_xd: np.ndarray
    d_u: np.ndarray


@dataclass(frozen=True)
class ChainTangents:
    """Scratch of the derivative kernel for n modules and ``D = 3n`` directions (layouts in
    :mod:`~pkm_dynamics.core.derivatives.chain_derivatives`), allocated per robot and thread."""

    loc: np.ndarray
    dA: np.ndarray
    dnus: np.ndarray
    dxb: np.ndarray
    dps: np.ndarray
    dacc: np.ndarray
    dF: np.ndarray
    dnu: np.ndarray
    dnud: np.ndarray
    dFE: np.ndarray
    J: np.ndarray
    Lw: np.ndarray
    fbuf: np.ndarray

    @classmethod
    def allocate(cls, n: int) -> "ChainTangents":
        D = 3 * n
        return cls(np.zeros((n, LOC_SIZE)), np.zeros((n, 3, 6, 6)), np.zeros((3, D, 6)), np.zeros((3, D, 6)),
                   np.zeros((n, 3, D, 6)), np.zeros((n, 3, D, 6)), np.zeros((3, D, 6)), np.zeros((D, 6)),
                   np.zeros((D, 6)), np.zeros((D, 6)), np.zeros((n, D)), np.zeros((n, n)), np.zeros(n))


#: each derivative kernel, or its entry point once compiled (as :data:`.chain_model._ENTRY`)
_ENTRY = {}


def _head(model: ChainModel) -> tuple:
    """The model, the chain scratch and the tangent scratch of the calling thread, as the
    leading arguments of :func:`.chain_derivatives.chain_dynamics_derivatives`."""
    def make():
        T = ChainTangents.allocate(model.n)
        return model.head() + (T.loc, T.dA, T.dnus, T.dxb, T.dps, T.dacc, T.dF, T.dnu, T.dnud, T.dFE, T.J,
                               T.Lw, T.fbuf)

    return model.thread_scratch("derivative_head", make)


def _call(model: ChainModel, inverse: bool, x, xd, t, wrench) -> DynamicsDerivatives:
    head = _head(model)
    d = model.data()
    n = model.n
    x, xd, t, fe, single = _batch(model, d, x, xd, t, wrench)
    B = x.shape[0]
    value, DX, DXD, DU = np.empty((B, n)), np.empty((B, n, n)), np.empty((B, n, n)), np.empty((B, n, n))
    kernel = KD.chain_dynamics_derivatives
    if _ENTRY.get(kernel, kernel)(inverse, *head, x, xd, t, fe, value, DX, DXD, DU, d.status) != OK:
        from ..module_chain.module_chain_dynamics import chain_inverse_dynamics, parallel_serial_forward_dynamics
        row = int(d.status[1])
        w = fe[row if len(fe) > 1 else 0]
        fn = chain_inverse_dynamics if inverse else parallel_serial_forward_dynamics
        _raise(model, d.status, (x, xd, t), lambda a, b, c: fn(model.chain, a, b, c, w), w,
               ("x", "xd", "xdd" if inverse else "f"))
    elif kernel not in _ENTRY:
        _ENTRY[kernel] = _entry_point(kernel)
    if single:
        return DynamicsDerivatives(value[0], DX[0], DXD[0], DU[0])
    return DynamicsDerivatives(value, DX, DXD, DU)


def chain_forward_dynamics_derivatives(model: ChainModel, x, xd, f, wrench=None) -> DynamicsDerivatives:
    """Forward dynamics of a module chain (Algorithm 1 of paper 000) and its derivatives:
    ``value = xdd``, ``d_x = dxdd/dx``, ``d_xd = dxdd/dxd``, ``d_u = dxdd/df = M^-1``; inputs and
    errors as :func:`~pkm_dynamics.core.module_chain.chain_model.chain_forward_dynamics` (``wrench`` held constant)."""
    return _call(model, False, x, xd, f, wrench)


def chain_inverse_dynamics_derivatives(model: ChainModel, x, xd, xdd, wrench=None) -> DynamicsDerivatives:
    """Inverse dynamics of a module chain and its derivatives: ``value = f``, ``d_x = df/dx``,
    ``d_xd = df/dxd``, ``d_u = df/dxdd = M``; inputs and errors as
    :func:`~pkm_dynamics.core.module_chain.chain_model.chain_inverse_dynamics` (``wrench`` held constant)."""
    return _call(model, True, x, xd, xdd, wrench)
