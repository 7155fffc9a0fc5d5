#!/usr/bin/env python3
"""Measures the performance model's corpus on a GPU (bench/perfmodel/README.md).

    python3 bench/perfmodel/measure.py BUILD_DIR OUT_DIR [--ncu] [--only ID,ID...] [--skip-probe]
                                       [--no-checks] [--part K/N] [--set NAME]

1. `warpbook probe` into a fresh data folder: the ceilings every check scores against and the
   machine parameters the performance model reads (latencies, atomics, launches, sectors).
2. `warpbook check PUZZLE FILE --json` for every kernel of bench/perfmodel/corpus.toml and
   heldout.toml (or, with --set NAME, of bench/perfmodel/NAME.toml, its `tune` and `define` applied
   as validate.py applies them): the measured time at the puzzle's [perf] size and, beside it, the
   model's prediction.
3. With --ncu: Nsight Compute's counters for each kernel's perf launches (perf_launch), for
   looking into where the model and the GPU part ways (DRAM bytes, L2 sectors, occupancy, stalls).

Writes OUT_DIR/probe.json, OUT_DIR/checks.jsonl (one line per kernel, the essentials of the
report) and OUT_DIR/ncu.jsonl, and prints a table.
"""
import csv, io, json, os, subprocess, sys, tempfile, time, tomllib

from validate import kernel_source  # a manifest entry's file, with its `tune` and `define` applied

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

NCU_METRICS = [
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum",
    "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum",
    "lts__t_sector_hit_rate.pct",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__registers_per_thread", "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_blocks", "launch__occupancy_limit_warps",
    "launch__grid_size", "launch__block_size", "launch__waves_per_multiprocessor",
    "smsp__inst_executed.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_membar_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio",
]


def corpus(names):
    # The manifests' kernels, in order.
    out = []
    for name in names:
        with open(os.path.join(ROOT, "bench/perfmodel", name), "rb") as f:
            out += tomllib.load(f)["kernel"]
    return out


def essentials(rep):
    """The parts of a check report the validation needs."""
    out = {k: rep.get(k) for k in ("puzzle", "file", "verdict", "summary", "tunables", "resources", "total_ms")}
    out["device"] = rep.get("device", {}).get("name")
    perf = rep.get("perf") or {}
    t = perf.get("timing") or {}
    out["perf"] = {k: perf.get(k) for k in ("sizes", "bytes", "flops", "gbps", "gflops", "speed_of_light",
                                           "medal", "dram_ceiling_gbps", "compute_ceiling_gflops")}
    out["timing"] = {k: t.get(k) for k in ("ok", "median_us", "min_us", "max_us", "p10_us", "p90_us", "method")}
    out["timing"]["samples"] = len(t.get("samples_us") or [])
    if "prediction" in rep:
        out["prediction"] = rep["prediction"]
    return out


def run(cmd, timeout):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.time() - t0
    except subprocess.TimeoutExpired as e:
        return 124, e.stdout or "", e.stderr or "", time.time() - t0


def parse_ncu(text):
    """ncu --csv --print-units base: one row per (launch, metric) -> [{kernel, metrics}]."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    h = rows[0]
    ii, ki, mi, vi = h.index("ID"), h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value")
    launches = {}
    for r in rows[1:]:
        if len(r) <= vi:
            continue
        d = launches.setdefault(r[ii], {"kernel": r[ki], "metrics": {}})
        v = r[vi].replace(",", "")
        try:
            d["metrics"][r[mi]] = float(v)
        except ValueError:
            d["metrics"][r[mi]] = v
    return [launches[k] for k in sorted(launches, key=int)]


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__)
        return 4
    build, out = os.path.abspath(args[0]), os.path.abspath(args[1])
    want_ncu = "--ncu" in args
    only = None
    if "--only" in args:
        only = set(args[args.index("--only") + 1].split(","))
    os.makedirs(out, exist_ok=True)
    exe = os.path.join(build, "warpbook")
    data = tempfile.mkdtemp(prefix="warpbook-measure-")
    # --set NAME: that manifest; else the corpus the model was built against and the held-out kernels.
    names = [args[args.index("--set") + 1] + ".toml"] if "--set" in args else ["corpus.toml", "heldout.toml"]
    entries = [e for e in corpus(names) if not only or e["id"] in only]
    if "--part" in args:  # the K-th of N slices of the corpus (for runs that must stay short)
        k, n = map(int, args[args.index("--part") + 1].split("/"))
        entries = entries[(k - 1) * len(entries) // n: k * len(entries) // n]
    # Each entry's source once (a temporary copy where the manifest sets `tune` or `define`).
    sources = {e["id"]: kernel_source(e) for e in entries}

    if "--skip-probe" not in args:
        rc, so, se, dt = run([exe, "probe", "--json", "--data-dir", data], 600)
        with open(os.path.join(out, "probe.json"), "w") as f:
            f.write(so if rc == 0 else json.dumps({"error": se[-4000:], "rc": rc}))
        print(f"probe: rc {rc}, {dt:.1f} s", flush=True)

    table = []
    with open(os.path.join(out, "checks.jsonl"), "w") as f:
        for e in ([] if "--no-checks" in args else entries):
            cmd = [exe, "check", e["puzzle"], sources[e["id"]], "--json", "--data-dir", data]
            rc, so, se, dt = run(cmd, 300)
            try:
                rep = essentials(json.loads(so))
            except Exception:
                rep = {"error": (se or so)[-2000:]}
            rep.update({"id": e["id"], "rc": rc, "wall_s": round(dt, 2), "limiter": e.get("limiter", "")})
            f.write(json.dumps(rep) + "\n")
            f.flush()
            t = (rep.get("timing") or {}).get("median_us") or 0
            sol = ((rep.get("perf") or {}).get("speed_of_light") or 0) * 100
            table.append((e["id"], rep.get("verdict", "error"), t, sol, dt))
            print(f"{e['id']:<34} {rep.get('verdict', 'error'):<13} {t:11.1f} us {sol:6.1f}% SOL  ({dt:.1f} s)", flush=True)

    if want_ncu:
        launcher = os.path.join(build, "bench/perfmodel/perf_launch")
        metrics = ",".join(NCU_METRICS)
        with open(os.path.join(out, "ncu.jsonl"), "w") as f:
            for e in entries:
                cmd = ["ncu", "--clock-control", "none", "--csv", "--print-units", "base",
                       "--metrics", metrics, launcher, e["puzzle"], sources[e["id"]]]
                rc, so, se, dt = run(cmd, 240)
                rec = {"id": e["id"], "rc": rc, "wall_s": round(dt, 1), "launches": parse_ncu(so)}
                if rc != 0:
                    rec["error"] = (se or so)[-2000:]
                f.write(json.dumps(rec) + "\n")
                f.flush()
                print(f"ncu {e['id']:<34} rc {rc} {len(rec['launches'])} launches ({dt:.1f} s)", flush=True)
    for e in entries:
        if sources[e["id"]] != os.path.join(ROOT, e["file"]):
            os.unlink(sources[e["id"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
