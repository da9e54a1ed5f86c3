"""Eight bytes at a time: unaligned 64-bit loads and stores on uint8 arrays, and the index of
the lowest set bit, as Numba intrinsics (one machine instruction each).

A kernel that scans text a byte at a time pays a branch per byte; loading eight bytes as one
``uint64`` lets it test them together with SWAR arithmetic. The caller guarantees that
``arr[i:i + 8]`` lies inside the array: these do no bounds checks.
"""
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

_I64 = ir.IntType(64)


def _is_bytes(arr):
    """A C-contiguous 1-d uint8 buffer: a NumPy array or ``bytes``."""
    return isinstance(arr, types.Buffer) and arr.dtype == types.uint8 and arr.ndim == 1 and arr.layout == "C"


def _byte_pointer(context, builder, aryty, ary, idx):
    data = context.make_array(aryty)(context, builder, ary).data
    return builder.bitcast(builder.gep(data, [idx]), _I64.as_pointer())


@intrinsic
def load8(typingctx, arr, idx):
    """``arr[idx:idx + 8]`` as a little-endian uint64."""
    if not (_is_bytes(arr) and isinstance(idx, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        return builder.load(_byte_pointer(context, builder, sig.args[0], args[0], args[1]), align=1)
    return types.uint64(arr, types.intp), codegen


@intrinsic
def store8(typingctx, arr, idx, value):
    """Write the uint64 ``value`` into ``arr[idx:idx + 8]`` (little-endian)."""
    if not (_is_bytes(arr) and isinstance(idx, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        builder.store(args[2], _byte_pointer(context, builder, sig.args[0], args[0], args[1]), align=1)
        return context.get_dummy_value()
    return types.void(arr, types.intp, types.uint64), codegen


@intrinsic
def lowest_bit(typingctx, x):
    """Index of the lowest set bit of the uint64 ``x`` (64 for 0)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))
    return types.uint64(types.uint64), codegen
