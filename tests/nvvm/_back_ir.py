"""Hand-written NVVM IR modules that follow the kernel ABI (docs/interfaces.md), for testing
the back end before/independently of the front end."""

DATALAYOUT = ("e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-f32:32:32-f64:64:64-"
              "v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64")

HEADER = f'''target triple = "nvptx64-nvidia-cuda"
target datalayout = "{DATALAYOUT}"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare void @llvm.nvvm.barrier0()
'''

VERSION = '''!nvvmir.version = !{!99}
!99 = !{i32 2, i32 0, i32 3, i32 2}
'''


def scale_kernel(name="scale", use_sin=False):
    """``name(float* data, i64 n, i64 stride, float a)``: data[i] = (sin?)(data[i]) * a."""
    val = "%s = call float @__nv_sinf(float %v)" if use_sin else "%s = fadd float %v, 0.0"
    decl = "declare float @__nv_sinf(float)\n" if use_sin else ""
    return HEADER + decl + f'''
define void @{name}(float* %data, i64 %n, i64 %s0, float %a) {{
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = mul i32 %bid, %bdim
  %t32 = add i32 %b, %tid
  %t = sext i32 %t32 to i64
  %c = icmp slt i64 %t, %n
  br i1 %c, label %body, label %done
body:
  %p = getelementptr float, float* %data, i64 %t
  %v = load float, float* %p
  {val}
  %r = fmul float %s, %a
  store float %r, float* %p
  br label %done
done:
  ret void
}}

!nvvm.annotations = !{{!0}}
!0 = !{{void (float*, i64, i64, float)* @{name}, !"kernel", i32 1}}
''' + VERSION


def shared_kernel(name="smem", nbytes=1024):
    """``name(float* out, i64 n, i64 s)``: a static shared array of ``nbytes``, a barrier,
    then out[tid] = smem[tid]."""
    n = nbytes // 4
    return HEADER + f'''
@{name}_buf = internal addrspace(3) global [{n} x float] zeroinitializer, align 4

define void @{name}(float* %out, i64 %len, i64 %s0) {{
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t = sext i32 %tid to i64
  %sp = getelementptr [{n} x float], [{n} x float] addrspace(3)* @{name}_buf, i64 0, i64 %t
  %f = sitofp i32 %tid to float
  store float %f, float addrspace(3)* %sp
  call void @llvm.nvvm.barrier0()
  %v = load float, float addrspace(3)* %sp
  %p = getelementptr float, float* %out, i64 %t
  store float %v, float* %p
  ret void
}}

!nvvm.annotations = !{{!0}}
!0 = !{{void (float*, i64, i64)* @{name}, !"kernel", i32 1}}
''' + VERSION
