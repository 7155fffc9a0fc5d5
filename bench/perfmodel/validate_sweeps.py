#!/usr/bin/env python3
"""The performance model across sizes: `warpbook sweep` measured on a GPU beside the same sweep
predicted here, without one (docs/perf-model.md, "Across sizes").

    python3 bench/perfmodel/validate_sweeps.py DATA_DIR --local BUILD_DIR [--md OUT.md]

DATA_DIR holds one `warpbook sweep PUZZLE SOLUTION --json` per puzzle, run on the GPU and named
after the puzzle (01-vector-add.json). Each is predicted again with `BUILD_DIR/warpbook sweep
--backend sim --json` over the same sizes, and every point (series x size) gets a row: measured,
predicted, their ratio. The summary gives the share within 1.5x and 2x, the worst ratio and
Spearman's rank correlation, over all points and by regime (launch-bound: under 10 us measured).
The sizes span launch-bound to DRAM-bound, a regime the corpus (one perf size per kernel) does not
test, and nothing in the model was fitted on them.
"""
import json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import spearman  # noqa: E402  (one rank correlation for both tables)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def summary(rows, what):
    if not rows:
        return f"{what}: no points"
    ratios = [r["predicted"] / r["measured"] for r in rows]
    off = [max(x, 1 / x) for x in ratios]
    worst = max(range(len(rows)), key=lambda i: off[i])
    w = rows[worst]
    return (f"{what}: {len(rows)} points: {100 * sum(o <= 1.5 for o in off) / len(off):.0f}% within "
            f"1.5x, {100 * sum(o <= 2 for o in off) / len(off):.0f}% within 2x, worst "
            f"{ratios[worst]:.2f} ({w['puzzle']} {w['series']} {w['var']}={w['size']}), Spearman "
            f"{spearman([r['measured'] for r in rows], [r['predicted'] for r in rows]):.3f}")


def main():
    args = sys.argv[1:]
    if not args or "--local" not in args:
        print(__doc__)
        return 2
    data = args[0]
    build = args[args.index("--local") + 1]
    md = args[args.index("--md") + 1] if "--md" in args else None
    exe = os.path.join(build, "warpbook")
    rows = []
    for name in sorted(os.listdir(data)):
        if not name.endswith(".json"):
            continue
        measured = json.load(open(os.path.join(data, name)))
        puzzle = measured["puzzle"]
        sizes = [p["size"] for p in measured["series"][0]["points"]]
        var = measured["var"]
        words = [f"{var}={','.join(str(s) for s in sizes)}"]
        words += [f"{k}={v}" for k, v in measured["fixed"].items()]
        solution = os.path.join(ROOT, "solutions", puzzle + ".cu")
        cmd = [exe, "sweep", puzzle, solution, "--backend", "sim", "--json", "--seed", "1"]
        for w in words:
            cmd += ["--size", w]
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        predicted = json.loads(out.stdout)
        for sm, sp in zip(measured["series"], predicted["series"]):
            for a, b in zip(sm["points"], sp["points"]):
                if a["time_us"] > 0 and b["time_us"] > 0:
                    rows.append({"puzzle": puzzle, "series": sm["name"], "var": var,
                                 "size": a["size"], "measured": a["time_us"],
                                 "predicted": b["time_us"]})
    lines = ["| puzzle | series | size | measured | predicted | ratio |", "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['puzzle']} | {r['series']} | {r['var']}={r['size']} | "
                     f"{r['measured']:.1f} us | {r['predicted']:.1f} us | "
                     f"{r['predicted'] / r['measured']:.2f} |")
    lines.append("")
    lines.append(summary(rows, "All"))
    lines.append(summary([r for r in rows if r["measured"] < 10], "Launch-bound (under 10 us)"))
    lines.append(summary([r for r in rows if r["measured"] >= 10], "10 us and over"))
    text = "\n".join(lines) + "\n"
    print(text)
    if md:
        open(md, "w").write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
