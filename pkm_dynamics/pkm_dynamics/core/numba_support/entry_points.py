"""Calls of compiled kernels without numba's type dispatch.

A numba dispatcher matches the types of every argument on each call (a few microseconds for the
dozen arrays of a public call).  Once a kernel has exactly one compiled signature and a call has
gone through the dispatcher with the arguments a caller always passes (their one layout), the
machine code of that signature (:func:`entry_point`) takes the same arguments directly.
:class:`EntryPoints` keeps what one thread has learned for one model: it lives in that thread's
scratch (the Data of a model, never shared), so nothing is cached at module level.
"""
from __future__ import annotations


def entry_point(kernel):
    """The machine code of ``kernel``'s one compiled signature (numba's
    ``overloads[signature].entry_point``), called without the dispatcher's per-argument type
    matching; ``kernel`` itself while it has no or several signatures.  Only for arguments of
    that signature."""
    sigs = kernel.signatures
    return kernel.overloads[sigs[0]].entry_point if len(sigs) == 1 else kernel


class EntryPoints:
    """The entry points of the kernels one thread has called for one model: :meth:`run` calls a
    kernel through its dispatcher the first time (which compiles or loads the signature of the
    arguments given) and through :func:`entry_point` after; :meth:`known` the entry point, or
    None before that first call."""

    __slots__ = ("_known",)

    def __init__(self):
        self._known = {}

    def known(self, kernel):
        """The entry point of ``kernel`` once this thread has called it, else None."""
        run = self._known.get(kernel)
        return None if run is kernel else run

    def run(self, kernel, *args):
        """``kernel(*args)``, through its entry point once known (see the class)."""
        run = self._known.get(kernel)
        if run is not None:
            return run(*args)
        code = kernel(*args)
        self._known[kernel] = entry_point(kernel)
        return code
