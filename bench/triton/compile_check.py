#!/usr/bin/env python3
"""Compiles every kernel of bench/triton/kernels.py ahead of time for sm_90 (the H100/H200), with no
GPU: Triton's own compiler and its bundled ptxas, the argument types and constants of the puzzle's
[perf] launch, and the specialisation Triton makes at run time there (pointers and integer sizes
that are multiples of 16 are marked divisible by 16). Prints, per kernel, whether it compiled,
its registers and spills (ptxas -v), its shared memory, and the widest global load and store in its
PTX (v4 of b32 = 16 bytes, the width the CUDA solutions use).

  python3 bench/triton/compile_check.py [--arch 90] [--only 19,26]
Exits 1 if a kernel fails to compile."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels as K  # noqa: E402

P32, P16, PBF16, PI32, PI8, PU8, PF8 = "*fp32", "*fp16", "*bf16", "*i32", "*i8", "*u8", "*fp8e4nv"
# kernel, [(arg, type, value for a size: divisible by 16 or not)], constexprs, num_warps, num_stages
# (sizes are those of the puzzle's [perf] case; "D" marks an argument Triton sees as a multiple of 16)
KERNELS = [
    ("01", K.vector_add_kernel, [("a", P32), ("b", P32), ("c", P32), ("n", "i32", 1 << 26)], {"BLOCK": 2048}, 8, 3),
    ("02", K.row_sum_kernel, [("x", P32), ("y", P32), ("cols", "i32", 8192)], {"BLOCK": 8192}, 16, 3),
    ("03", K.softmax_kernel, [("x", P32), ("y", P32), ("cols", "i32", 8192)], {"BLOCK": 8192}, 16, 3),
    ("04", K.matrix_add_kernel, [("a", P32), ("b", P32), ("c", P32), ("rows", "i32", 8192), ("cols", "i32", 8192)],
     {"BR": 8, "BC": 256}, 4, 3),
    ("05", K.outer_add_kernel, [("x", P32), ("y", P32), ("out", P32), ("rows", "i32", 16384), ("cols", "i32", 16384)],
     {"BR": 8, "BC": 512}, 4, 3),
    ("06", K.gelu_kernel, [("x", P16), ("y", P16), ("n", "i32", 1 << 28)], {"BLOCK": 4096}, 8, 3),
    ("07", K.transpose_kernel, [("inp", P32), ("out", P32), ("rows", "i32", 8192), ("cols", "i32", 8192)], {"T": 64}, 8, 3),
    ("08", K.dot_partial_kernel, [("a", P32), ("b", P32), ("partial", P32), ("n", "i32", 1 << 27)], {"BLOCK": 4096}, 8, 3),
    ("08", K.dot_final_kernel, [("partial", P32), ("out", P32), ("parts", "i32", 528)], {"BLOCK": 1024}, 4, 3),
    ("09", K.argmax_rows_kernel, [("x", P32), ("idx", PI32), ("cols", "i32", 8192)], {"BLOCK": 8192}, 16, 3),
    ("10", K.histogram_kernel, [("data", PU8), ("bins", PI32), ("n", "i32", 1 << 30)], {"BLOCK": 4096}, 8, 3),
    ("11", K.scan_reduce_kernel, [("x", P32), ("sums", P32), ("n", "i32", 1 << 27)], {"TILE": 4096}, 8, 3),
    ("11", K.scan_sums_kernel, [("sums", P32), ("tiles", "i32", 32768)], {"BLOCK": 1024}, 4, 3),
    ("11", K.scan_final_kernel, [("x", P32), ("y", P32), ("sums", P32), ("n", "i32", 1 << 27)], {"TILE": 4096}, 8, 3),
    ("12", K.online_softmax_kernel, [("x", P32), ("y", P32), ("cols", "i32", 8192)], {"PER": 32, "LANES": 256}, 8, 3),
    ("13", K.layernorm_kernel, [("x", P32), ("w", P32), ("b", P32), ("y", P32), ("cols", "i32", 4096), ("eps", "fp32")],
     {"BLOCK": 4096}, 8, 3),
    ("14", K.rmsnorm_residual_kernel, [("x", P32), ("res", P32), ("w", P32), ("h", P32), ("y", P32), ("cols", "i32", 4096),
                                       ("eps", "fp32")], {"BLOCK": 4096}, 8, 3),
    ("15", K.swiglu_kernel, [("gu", P32), ("y", P32), ("cols", "i32", 14336)], {"BLOCK": 2048}, 8, 3),
    ("16", K.conv1d_kernel, [("x", P32), ("w", P32), ("y", P32), ("length", "i32", 16384)], {"K": 4, "BLOCK": 2048}, 8, 3),
    ("17", K.sgemm_kernel, [("A", P32), ("B", P32), ("C", P32), ("M", "i32", 4096), ("N", "i32", 4096), ("K", "i32", 4096)],
     {"BM": 128, "BN": 128, "BK": 32, "GROUP": 8}, 8, 3),
    ("18", K.gemv_kernel, [("A", P32), ("x", P32), ("y", P32), ("M", "i32", 16384), ("K", "i32", 8192)],
     {"BM": 8, "BK": 512}, 4, 3),
    ("19", K.f16_gemm_kernel, [("A", P16), ("B", P16), ("C", P32), ("M", "i32", 4096), ("N", "i32", 4096), ("K", "i32", 4096)],
     {"BM": 128, "BN": 256, "BK": 64, "GROUP": 8}, 8, 3),
    ("24", K.decode_split_kernel, [("q_ptr", PBF16), ("k_ptr", PBF16), ("v_ptr", PBF16), ("lens_ptr", PI32), ("acc_ptr", P32), ("ml_ptr", P32),
                                   ("L", "i32", 8192), ("Hq", "i32", 32), ("Hkv", "i32", 8), ("S", "i32", 16),
                                   ("qscale", "fp32")], {"G": 4, "D": 128, "CHUNK": 512, "BLOCK_N": 32}, 4, 3),
    ("24", K.decode_combine_kernel, [("acc_ptr", P32), ("ml_ptr", P32), ("lens_ptr", PI32), ("out_ptr", PBF16), ("Hq", "i32", 32),
                                     ("S", "i32", 16)], {"D": 128, "CHUNK": 512, "SMAX": 16}, 4, 3),
    ("25", K.paged_decode_split_kernel, [("q_ptr", PBF16), ("k_ptr", PBF16), ("v_ptr", PBF16), ("table_ptr", PI32), ("lens_ptr", PI32),
                                         ("acc_ptr", P32), ("ml_ptr", P32), ("max_blocks", "i32", 512), ("Hq", "i32", 32),
                                         ("Hkv", "i32", 8), ("S", "i32", 16), ("qscale", "fp32")],
     {"G": 4, "D": 128, "CHUNK": 512, "BLOCK_N": 32}, 4, 3),
    ("26", K.rope_kernel, [("x", PBF16), ("pos", PI32), ("inv_freq", P32), ("y", PBF16), ("heads", "i32", 32)],
     {"DIM": 128, "PAIRS": 64, "HEADS": 32, "INTERLEAVED": False}, 4, 3),
    ("27", K.cross_entropy_kernel, [("logits", P32), ("target", PI32), ("loss", P32), ("V", "i32", 128256)],
     {"BLOCK": 4096}, 16, 3),
    ("28", K.topk_rows_kernel, [("x", P32), ("vals", P32), ("idx", PI32), ("V", "i32", 128256), ("k", "i32", 50)],
     {"BLOCK": 4096, "KP": 64}, 8, 3),
    ("29", K.int8_absmax_kernel, [("x", P32), ("q", PI8), ("scale", P32), ("y", P32), ("cols", "i32", 8192)],
     {"BLOCK": 8192}, 16, 3),
    ("30", K.fp8_quantize_kernel, [("x", P32), ("static_scale", P32), ("q", PF8), ("scale", P32), ("cols", "i32", 8192)],
     {"BLOCK": 8192}, 16, 3),
    ("31", K.nf4_dequantize_kernel, [("packed", PU8), ("absmax", P32), ("lut", P32), ("y", PBF16), ("n", "i32", 1 << 30)],
     {"BLOCK": 4096}, 8, 3),
    ("32", K.w4a16_gemv_kernel, [("W", PU8), ("x", P16), ("y", P16), ("M", "i32", 57344), ("K", "i32", 8192)],
     {"BM": 16, "BB": 8}, 4, 3),
    ("34", K.moe_gemm_kernel, [("X", PBF16), ("W", PBF16), ("part", P32), ("sorted_ids", PI32), ("tile_expert", PI32),
                               ("k", "i32", 8), ("E", "i32", 64), ("N", "i32", 2048), ("H", "i32", 4096), ("TK", "i32", 65536)],
     {"BM": 128, "BN": 128, "BK": 64}, 8, 3),
    ("34", K.moe_combine_kernel, [("part", P32), ("weights", P32), ("Y", PBF16), ("k", "i32", 8), ("N", "i32", 2048)],
     {"BLOCK": 1024}, 4, 3),
    ("36", K.cross_entropy_fwd_bwd_kernel, [("z", PBF16), ("y", PI32), ("row_loss", P32), ("n_valid", PI32),
                                            ("V", "i32", 128256)], {"BLOCK": 32768}, 32, 3),
]


def widest(ptx, op):
    """The widest global access of kind op ('ld' or 'st') in the PTX, as bytes per thread."""
    best = 0
    for m in re.finditer(rf"\b{op}\.global(?:\.[a-z0-9_:]+)*?(?:\.v(\d))?\.(b|f|u|s)(8|16|32|64)\b", ptx):
        best = max(best, int(m.group(1) or 1) * int(m.group(3)) // 8)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", type=int, default=90)
    ap.add_argument("--only", default="", help="comma-separated puzzle numbers")
    a = ap.parse_args()
    only = {int(x) for x in a.only.split(",") if x.strip()}
    target = GPUTarget("cuda", a.arch, 32)
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    failed = 0
    print(f"triton {triton.__version__}, sm_{a.arch}")
    kernels = [k for k in KERNELS if not only or int(k[0]) in only]
    for pid, fn, args, consts, warps, stages in kernels:
        sig, attrs = {}, {}
        for i, arg in enumerate(args):
            sig[arg[0]] = arg[1]
            if arg[1].startswith("*") or (len(arg) > 2 and arg[2] % 16 == 0):
                attrs[(i,)] = [["tt.divisibility", 16]]
        for name in consts:
            sig[name] = "constexpr"
        name = fn.fn.__name__ if hasattr(fn, "fn") else str(fn)
        try:
            k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs), target=target,
                               options={"num_warps": warps, "num_stages": stages})
            ptx = k.asm["ptx"]
            regs = ""
            with tempfile.TemporaryDirectory() as d:
                p = os.path.join(d, "k.ptx")
                open(p, "w").write(ptx)
                r = subprocess.run([ptxas, "-v", f"-arch=sm_{a.arch}a" if a.arch == 90 else f"-arch=sm_{a.arch}", p,
                                    "-o", os.path.join(d, "k.cubin")], capture_output=True, text=True)
                m = re.search(r"Used (\d+) registers", r.stderr)
                s = re.search(r"(\d+) bytes spill stores", r.stderr)
                regs = f"{m.group(1) if m else '?'} regs, {s.group(1) if s else '?'} B spilled"
            print(f"ok   {pid} {name:26s} warps {warps:2d}: {regs}, shared {k.metadata.shared} B, "
                  f"widest load {widest(ptx, 'ld')} B, store {widest(ptx, 'st')} B", flush=True)
        except Exception as e:
            failed += 1
            print(f"FAIL {pid} {name}: {type(e).__name__}: {str(e)[:2000]}", flush=True)
    print(f"{len(kernels) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
