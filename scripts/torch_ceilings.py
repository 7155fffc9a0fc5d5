#!/usr/bin/env python3
"""PyTorch's figures for the same ceilings `warpbook probe` measures: a device-to-device copy
(bytes read plus written) and a bf16 8192^3 matmul on random data. Timed with CUDA events after a
warm-up; prints JSON (best and median) for scripts/roofline_h200.sh to compare against.

  torch_ceilings.py                          measure, print JSON
  torch_ceilings.py --compare PROBE TORCH    the probe table: `warpbook probe --json` beside
                                             the datasheet and PyTorch, with the ratios"""
import json
import sys


def rate(v, unit):
    if not v:
        return "-"
    prefix = unit[1:]  # "B/s", "FLOP/s", "OP/s"
    if v >= 1e6:
        return f"{v / 1e6:.3g} P{prefix}"
    return f"{v / 1000:.3g} T{prefix}" if v >= 1000 else f"{v:.3g} {unit}"


def compare(probe_path, torch_path):
    probe = json.load(open(probe_path))
    ref = json.load(open(torch_path))
    dev = probe["device"]
    print(f"{dev['name']} (cc {dev['cc']}, {dev['sm_count']} SMs), driver {dev['driver']}; "
          f"PyTorch {ref.get('torch', '?')}; suite {probe['total_ms']:.0f} ms")
    copy = ref["copy_gbps"]["best"]
    mm = ref["bf16_matmul_gflops"]["best"]
    head = f"{'probe':<48} {'best':>12} {'median':>12} {'datasheet':>12} {'/ds':>5}  {'PyTorch':>22} {'/PyTorch':>8}"
    print(head)
    print("-" * len(head))
    for r in probe["results"]:
        if r["skipped"]:
            print(f"{r['label']:<48} {'-':>12}  {r['skipped']}")
            continue
        u = r["unit"]
        ds = f"{100 * r['best'] / r['datasheet']:.0f}%" if r["datasheet"] else ""
        m = r["metric"]
        if m.startswith("dram"):
            tref, tname = copy, "copy " + rate(copy, "GB/s")
        elif m in ("mma_f16_gflops", "mma_bf16_gflops", "wgmma_f16_gflops", "wgmma_bf16_gflops"):
            tref, tname = mm, "bf16 mm " + rate(mm, "GFLOP/s")
        else:
            tref, tname = 0, ""
        ratio = f"{r['best'] / tref:.2f}" if tref else ""
        print(f"{r['label']:<48} {rate(r['best'], u):>12} {rate(r['median'], u):>12} "
              f"{rate(r['datasheet'], u):>12} {ds:>5}  {tname:>22} {ratio:>8}")
    print(f"PyTorch median: copy {rate(ref['copy_gbps']['median'], 'GB/s')}, "
          f"bf16 8192^3 matmul {rate(ref['bf16_matmul_gflops']['median'], 'GFLOP/s')}")


def bench(fn, warm=5, reps=30):
    import torch

    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))  # milliseconds
    times.sort()
    return times[0], times[len(times) // 2]


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        return compare(sys.argv[2], sys.argv[3])
    import torch

    dev = torch.device("cuda")
    out = {"device": torch.cuda.get_device_name(dev), "torch": torch.__version__}
    # Copy: 1 GiB each way (16x the H200's 60 MiB L2).
    n = 1 << 28
    x = torch.rand(n, device=dev)
    y = torch.empty_like(x)
    best, med = bench(lambda: y.copy_(x))
    bytes_moved = 2 * n * 4
    out["copy_gbps"] = {"best": bytes_moved / best / 1e6, "median": bytes_moved / med / 1e6}
    del x, y
    # Matmul: bf16, random operands (zeros run faster than real data).
    m = 8192
    a = torch.randn(m, m, device=dev, dtype=torch.bfloat16)
    b = torch.randn(m, m, device=dev, dtype=torch.bfloat16)
    c = torch.empty(m, m, device=dev, dtype=torch.bfloat16)
    best, med = bench(lambda: torch.matmul(a, b, out=c), warm=10, reps=30)
    flops = 2 * m ** 3
    out["bf16_matmul_gflops"] = {"best": flops / best / 1e6, "median": flops / med / 1e6}
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
