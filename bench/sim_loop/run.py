#!/usr/bin/env python3
"""The learner's loop on the simulator: how long `warpbook check --backend sim` takes for every
puzzle's solution and starter, on this machine.

    python3 bench/sim_loop/run.py build/warpbook [--puzzles 22,24] [--seed 1] [--md out.md] [--edited]

For each file it prints the verdict, the time to the first failing case (a wrong kernel: what
the learner waits to hear that it is wrong), the time to the full verdict (every case and, for a
passing kernel, the prediction), and the CPU time the check used. The check streams a JSON line
per case (`--json-lines`); the first failing case's line is timed as it arrives.

--edited times the loop a learner lives in: each file is checked once untimed (its reference's
compile is then cached, as it is from the second Run on), then a copy of it with one line added
that changes its PTX (a `__device__` variable with a fresh value), so that its own compile, front
end and ptxas, is paid in full, as after an edit.
"""
import argparse, json, os, resource, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_one(exe, puzzle, path, seed, stream=True):
    if not stream:
        return run_whole(exe, puzzle, path, seed)
    t0 = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen([exe, "check", puzzle, str(path), "--backend", "sim", "--json-lines",
                             "--seed", str(seed)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    first_fail = None
    final = None
    for line in proc.stdout:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        case = ev.get("case") if isinstance(ev.get("case"), dict) else None
        if case and case.get("verdict") not in (None, "passed") and first_fail is None:
            first_fail = time.monotonic() - t0
        if "verdict" in ev and "cases" in ev:
            final = ev
        elif isinstance(ev.get("report"), dict):
            final = ev["report"]
    err = proc.stderr.read()
    proc.wait()
    if final is None and "json-lines" in err:  # a build without streaming
        return run_whole(exe, puzzle, path, seed)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    verdict = final.get("verdict") if final else f"exit {proc.returncode}"
    if first_fail is None and final and final.get("verdict") not in ("passed", None):
        first_fail = wall  # the failure came with the final report only
    return verdict, first_fail, wall, cpu


def run_whole(exe, puzzle, path, seed):
    t0 = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([exe, "check", puzzle, str(path), "--backend", "sim", "--json", "--seed",
                          str(seed)], capture_output=True, text=True, cwd=ROOT).stdout
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        rep = json.loads(out)
    except json.JSONDecodeError:
        return "no report", None, wall, cpu
    v = rep.get("verdict")
    return v, (wall if v != "passed" else None), wall, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("--puzzles", default="")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--md", default="")
    ap.add_argument("--edited", action="store_true")
    a = ap.parse_args()
    exe = str(Path(a.exe).resolve())
    only = [p for p in a.puzzles.split(",") if p]
    rows = []
    for d in sorted((ROOT / "puzzles").iterdir()):
        if not (d / "puzzle.toml").exists():
            continue
        if only and not any(d.name.startswith(p) for p in only):
            continue
        files = [("solution", ROOT / "solutions" / f"{d.name}.cu"), ("starter", d / "starter.cu")]
        for kind, path in files:
            if not path.exists():
                continue
            if a.edited:
                run_one(exe, d.name, path, a.seed)  # the reference's compile, cached
                edited = Path(tempfile.mkdtemp()) / path.name
                edited.write_text(path.read_text() +
                                  f"\n__device__ int warpbook_edit_{time.time_ns()} = 1;\n")
                path = edited
            v, ff, wall, cpu = run_one(exe, d.name, path, a.seed)
            row = (d.name, kind, v, ff, wall, cpu)
            rows.append(row)
            print(f"{d.name:34} {kind:8} {v:14} first failure {'-' if ff is None else f'{ff:5.2f} s':>7}"
                  f"  verdict {wall:6.2f} s  cpu {cpu:6.2f} s", flush=True)
    if a.md:
        with open(a.md, "w") as f:
            f.write("| puzzle | file | verdict | first failing case | full verdict | CPU time |\n")
            f.write("|---|---|---|---:|---:|---:|\n")
            for n, k, v, ff, wall, cpu in rows:
                f.write(f"| {n} | {k} | {v} | {'' if ff is None else f'{ff:.2f} s'} | {wall:.2f} s | {cpu:.2f} s |\n")
    worst = max((r[4] for r in rows), default=0)
    print(f"{len(rows)} files; slowest full verdict {worst:.2f} s")


if __name__ == "__main__":
    main()
