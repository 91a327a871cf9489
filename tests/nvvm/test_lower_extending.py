"""The NVVM lowering of the extension API's calls (cujit/nvvm/lower_extending.py,
lower_calls): an intrinsic's codegen emits its instruction into the kernel's PTX, an
overload's implementation is a device function; codegen errors are CompileErrors."""
import numpy as np
import pytest
from llvmlite import ir

import cujit as cuda
from cujit import extending, types
from cujit.frontend.errors import CompileError

pytestmark = pytest.mark.compile


@extending.intrinsic(sim=lambda a, b: (a * b) >> 32)
def umulhi_asm(typingctx, a, b):
    sig = types.uint32(types.uint32, types.uint32)

    def codegen(context, builder, signature, args):
        i32 = context.get_value_type(types.uint32)
        asm = ir.InlineAsm(ir.FunctionType(i32, [i32, i32]), "mul.hi.u32 $0, $1, $2;",
                           "=r,r,r")
        return builder.call(asm, args)
    return sig, codegen


@extending.intrinsic
def store_nothing(typingctx, a):
    return types.void(types.int32), lambda context, builder, signature, args: None


@extending.intrinsic
def forgets_result(typingctx, a):
    return types.int32(types.int32), lambda context, builder, signature, args: None


@extending.intrinsic
def wrong_width(typingctx, a):
    def codegen(context, builder, signature, args):
        return context.cast(builder, args[0], types.int32, types.int64)
    return types.int32(types.int32), codegen


@extending.intrinsic
def codegen_raises(typingctx, a):
    def codegen(context, builder, signature, args):
        raise RuntimeError("no such instruction")
    return types.int32(types.int32), codegen


def triple(x):
    raise NotImplementedError


@extending.overload(triple)
def _triple(x):
    def triple_impl(x):
        return x * 3
    return triple_impl


@extending.register_jitable(inline="always")
def halve_inline(x):
    return x // 2


@extending.register_jitable
def halve(x):
    return x // 2


def k_uses(out, a):
    i = cuda.grid(1)
    out[i] = umulhi_asm(a[i], np.uint32(7)) + triple(a[i])
    store_nothing(np.int32(1))
    out[i] += halve_inline(a[i]) + halve(a[i])


def test_intrinsic_instruction_is_in_the_ptx():
    ptx, resty = cuda.compile_ptx(k_uses, (types.uint32[::1], types.uint32[::1]))
    assert resty is types.void
    assert "mul.hi.u32" in ptx


def test_overload_implementation_is_a_device_function_in_the_ir():
    from cujit.nvvm.lowering import compile_to_llvm
    text = compile_to_llvm(k_uses, (types.uint32[::1], types.uint32[::1])).llvm_ir
    defs = {ln.split("@")[1].split("(")[0].strip('"'): ln for ln in text.splitlines()
            if ln.startswith("define internal")}
    assert any("triple_impl" in name for name in defs)
    # register_jitable(inline="always") lowers the implementation into its caller, as
    # numba-cuda inlines it before LLVM: no definition of its own
    assert not [name for name in defs if "halve_inline" in name]
    (plain,) = [ln for name, ln in defs.items() if "halve_" in name and "inline" not in name]
    assert "alwaysinline" not in plain


@pytest.mark.parametrize("intr, match", [
    (forgets_result, r"codegen of intrinsic forgets_result\(\) returned None for its "
                     r"non-void signature int32\(int32\)"),
    (wrong_width, r"returned a value of LLVM type i64 .* \(expected an LLVM i32\)"),
    (codegen_raises, r"codegen of intrinsic codegen_raises\(\) raised RuntimeError: no such "
                     r"instruction"),
])
def test_bad_codegen_is_a_compile_error(intr, match):
    def k(out):
        out[0] = intr(np.int32(1))
    with pytest.raises(CompileError, match=match):
        cuda.compile_ptx(k, (types.int32[::1],))
