"""C-ordered views of a flat buffer inside a compiled kernel, built in the caller's own code.

A kernel that packs many arrays into one flat buffer (:mod:`..pkm.robot_kernels`) takes them
out as views.  numba's ``reshape`` checks the shape in a helper call (~40 ns a view);
``as_strided`` returns layout ``'A'`` arrays (every index multiplies a stride read from the
array) through a compiled function that a kernel without numba's memory manager
(:func:`.cache.scratch_kernel`) cannot call.  :func:`c_view` is an intrinsic: the view is
filled in the caller's code (offset, shape, C strides; no check, the caller's header gives
sizes that fit), typed C-ordered, and takes a reference only where the caller counts them.
"""
from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array


@intrinsic
def c_view(typingctx, base, offset, shape):
    """``base[offset:offset + prod(shape)]`` as a C-ordered array of ``shape`` (a tuple of
    ints) sharing ``base``'s memory (a 1-d C-ordered array); no bounds check."""
    if not (isinstance(base, types.Array) and base.ndim == 1 and base.layout == "C"
            and isinstance(offset, types.Integer) and isinstance(shape, types.BaseTuple)
            and all(isinstance(t, types.Integer) for t in shape)):
        return None
    nd = len(shape)
    sig = base.copy(ndim=nd, layout="C")(base, offset, shape)

    def codegen(context, builder, sig, args):
        aryty, offty, shty = sig.args
        ary = make_array(aryty)(context, builder, args[0])
        out = make_array(sig.return_type)(context, builder)
        off = context.cast(builder, args[1], offty, types.intp)
        dims = [context.cast(builder, builder.extract_value(args[2], i), shty[i], types.intp) for i in range(nd)]
        strides, step = [None] * nd, ary.itemsize
        for i in reversed(range(nd)):
            strides[i] = step
            step = builder.mul(step, dims[i])
        populate_array(out, data=builder.gep(ary.data, [off]), shape=cgutils.pack_array(builder, dims),
                       strides=cgutils.pack_array(builder, strides), itemsize=ary.itemsize, meminfo=ary.meminfo,
                       parent=ary.parent)
        return impl_ret_borrowed(context, builder, sig.return_type, out._getvalue())

    return sig, codegen
