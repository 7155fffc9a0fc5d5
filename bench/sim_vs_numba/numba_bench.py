#!/usr/bin/env python3
"""The three benchmark kernels on numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), the simulator
GPU-Puzzles runs on without a GPU. Prints one JSON object: seconds per kernel (the best of
--reps runs of the launch itself; array set-up is outside the timing) and a correctness check.

    NUMBA_ENABLE_CUDASIM=1 /usr/bin/python3 numba_bench.py [--reps 3]
"""
import argparse
import json
import os
import time

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np  # noqa: E402
from numba import cuda, float32  # noqa: E402


@cuda.jit
def vector_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]


@cuda.jit
def matmul_naive(A, B, C, M, N, K):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row * K + k] * B[k * N + col]
        C[row * N + col] = acc


@cuda.jit
def block_sum(inp, out, n):
    s = cuda.shared.array(256, dtype=float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    s[t] = inp[i] if i < n else float32(0.0)
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


def best_of(reps, f):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    res = {"numba": __import__("numba").__version__, "cudasim": os.environ.get("NUMBA_ENABLE_CUDASIM")}

    n = 4096
    a = rng.uniform(-1, 1, n).astype(np.float32)
    b = rng.uniform(-1, 1, n).astype(np.float32)
    c = np.zeros(n, np.float32)
    res["vector_add"] = best_of(args.reps, lambda: vector_add[(n + 255) // 256, 256](a, b, c, n))
    res["vector_add_ok"] = bool(np.array_equal(c, a + b))

    m = 32
    A = rng.uniform(-1, 1, m * m).astype(np.float32)
    B = rng.uniform(-1, 1, m * m).astype(np.float32)
    C = np.zeros(m * m, np.float32)
    res["matmul_naive_32"] = best_of(args.reps, lambda: matmul_naive[(2, 2), (16, 16)](A, B, C, m, m, m))
    res["matmul_naive_32_ok"] = bool(np.allclose(C.reshape(m, m), A.reshape(m, m) @ B.reshape(m, m), rtol=1e-4, atol=1e-5))

    x = rng.uniform(-1, 1, n).astype(np.float32)
    out = np.zeros(n // 256, np.float32)
    res["block_sum"] = best_of(max(1, args.reps // 3), lambda: block_sum[n // 256, 256](x, out, n))
    res["block_sum_ok"] = bool(np.allclose(out, x.reshape(-1, 256).sum(axis=1), rtol=1e-4, atol=1e-4))
    print(json.dumps(res))


if __name__ == "__main__":
    main()
