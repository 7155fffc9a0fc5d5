"""Triton's CPU interpreter (TRITON_INTERPRET=1) converts floats between formats with its own bit
arithmetic (triton/runtime/interpreter.py, _convert_float), which is not what the GPU does:
f32 -> bf16 by `.to(tl.bfloat16)` truncates (the GPU's cvt.rn rounds to nearest even), and its
"round to nearest even" adds the cut-off bit without ties to even, without the carry into the
exponent and without rounding subnormals. Puzzles 26, 30 and 31 are exact (or one ulp) on those
conversions, so under the interpreter this module replaces that one function with torch's
conversions, which round to nearest even like cvt.rn. Nothing changes on a GPU: this is only
installed when TRITON_INTERPRET=1.

  import interpreter_rounding; interpreter_rounding.install()"""
import os

import numpy as np
import torch


def install():
    """Patches the interpreter's float conversion; returns True if it did (TRITON_INTERPRET=1)."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        return False
    import triton.language as tl
    from triton.runtime import interpreter

    original = getattr(interpreter, "_wb_original_convert_float", None) or interpreter._convert_float
    interpreter._wb_original_convert_float = original
    as_torch = {tl.float32: torch.float32, tl.float16: torch.float16, tl.bfloat16: torch.bfloat16,
                tl.float8e4nv: torch.float8_e4m3fn, tl.float8e5: torch.float8_e5m2}
    rtz = getattr(interpreter._ir.ROUNDING_MODE, "RTZ", None)

    def convert(data, src, dst, rounding_mode):
        s, d = as_torch.get(src.scalar), as_torch.get(dst.scalar)
        if s is None or d is None or (rounding_mode is not None and rounding_mode == rtz):
            return original(data, src, dst, rounding_mode)
        bits = np.ascontiguousarray(data).copy()
        if bits.dtype.kind in "ui":  # bf16 and fp8 are held as raw bits
            t = torch.from_numpy(bits.view({1: np.uint8, 2: np.int16, 4: np.int32}[bits.itemsize])).view(s)
        else:
            t = torch.from_numpy(bits)
        if d == torch.float8_e4m3fn and s != torch.float32:
            t = t.float()  # torch converts to fp8 from f32 (exactly: f16 and bf16 fit in f32)
        out = t.to(d)
        u = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[out.element_size()]
        return out.view(u).numpy().view({1: np.uint8, 2: np.uint16, 4: np.uint32}[out.element_size()])

    interpreter._convert_float = convert
    return True
