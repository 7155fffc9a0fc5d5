#!/usr/bin/env python3
"""Whether two builds predict the same: `warpbook predict --json` of every puzzle's solution, for
each GPU, saved with the model's own timings left out, then compared bit for bit.

    python3 bench/sim_loop/predict_same.py save build/warpbook before/   [--gpus h200,h100-sxm]
    python3 bench/sim_loop/predict_same.py save build/warpbook after/
    python3 bench/sim_loop/predict_same.py compare before/ after/

A change that only makes the simulator or the model faster must leave every file the same; one
that moves a prediction is re-validated with bench/perfmodel/validate.py instead.
"""
import argparse, json, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMINGS = {"model_ms", "sim_ms"}  # how long the model took: not part of what it predicts


def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in TIMINGS}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def save(exe, out, gpus, only):
    out.mkdir(parents=True, exist_ok=True)
    for sol in sorted((ROOT / "solutions").glob("*.cu")):
        pid = sol.stem
        if only and not any(pid.startswith(o) for o in only):
            continue
        for gpu in gpus:
            r = subprocess.run([exe, "predict", pid, str(sol.relative_to(ROOT)), "--json", "--gpu",
                                gpu], capture_output=True, text=True, cwd=ROOT)
            try:
                body = strip(json.loads(r.stdout))
            except json.JSONDecodeError:
                body = {"no_json": r.returncode, "stderr": r.stderr[-2000:]}
            (out / f"{pid}.{gpu}.json").write_text(json.dumps(body, indent=1, sort_keys=True))
            print(f"{pid} {gpu}: {body.get('us', body.get('error', 'no prediction'))}", flush=True)


def compare(a, b):
    names = sorted({p.name for p in a.glob("*.json")} | {p.name for p in b.glob("*.json")})
    differ = 0
    for n in names:
        pa, pb = a / n, b / n
        if not pa.exists() or not pb.exists():
            print(f"{n}: only in {'the first' if pa.exists() else 'the second'}")
            differ += 1
        elif pa.read_text() != pb.read_text():
            ja, jb = json.loads(pa.read_text()), json.loads(pb.read_text())
            print(f"{n}: differs (us {ja.get('us')} -> {jb.get('us')})")
            differ += 1
    print(f"{len(names) - differ} of {len(names)} the same")
    return 1 if differ else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("save")
    s.add_argument("exe")
    s.add_argument("out")
    s.add_argument("--gpus", default="h200,h100-sxm")
    s.add_argument("--puzzles", default="", help="comma-separated id prefixes")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    a = ap.parse_args()
    if a.cmd == "save":
        save(str(Path(a.exe).resolve()), Path(a.out), a.gpus.split(","),
             [p for p in a.puzzles.split(",") if p])
    else:
        sys.exit(compare(Path(a.a), Path(a.b)))


if __name__ == "__main__":
    main()
