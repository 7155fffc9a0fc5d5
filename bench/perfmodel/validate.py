#!/usr/bin/env python3
"""The performance model against the GPU: measured times beside predicted ones (docs/perf-model.md).

    python3 bench/perfmodel/validate.py DATA_DIR [--local BUILD_DIR [--gpu KEY] [--ceilings]]
                                        [--md OUT.md]
                                        [--heldout | --set corpus|heldout|curriculum2|first_attempts]

DATA_DIR holds checks.jsonl from bench/perfmodel/measure.py (one `warpbook check --json` per corpus
kernel, run on the GPU: its measured median time and, beside it, the model's prediction made in the
same check). With --local the predictions are made again here, without a GPU, by
`BUILD_DIR/warpbook predict` for the GPU profile KEY (default h200): what a learner on a laptop sees.
With --ceilings as well, each prediction takes the figures DATA_DIR/probe.json measured on that GPU
in the same session (`predict --ceilings`): what a check on that GPU predicts with.

Prints one row per kernel (measured, predicted, their ratio, the limiter the model names and the one
the kernel was designed to have) and the summary the issue asks for: the share within 1.5x and 2x,
the worst ratio, Spearman's rank correlation, and whether every designed limiter is named. The
corpus is split into two halves (calibration A, held-out B, by the manifest's order) and each is
summarised on its own as well (a manifest's `heldout = true` marks half B).
"""
import json, math, os, re, subprocess, sys, tempfile, tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Which of the model's factor keys count as naming a designed limiter.
LIMITER_KEYS = {
    "dram": {"dram"},
    "latency": {"latency", "occupancy", "dispatch"},
    "occupancy": {"occupancy", "latency"},
    "tail": {"tail"},
    "sectors": {"sectors"},
    "bank_conflicts": {"bank_conflicts"},
    "atomics": {"atomics"},
    "serial": {"serial", "latency"},
    "fp32": {"fp32", "issue"},
    "fp64": {"fp64"},
    "sfu": {"sfu"},
    "barrier": {"barrier"},
    "divergence": {"divergence"},
    "local_memory": {"local_memory"},
    "lsu": {"lsu", "l1", "shared"},
    "alu": {"alu", "issue"},
    "dispatch": {"dispatch"},
}


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(a, b):
    if len(a) < 3:
        return float("nan")
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = math.sqrt(sum((x - ma) ** 2 for x in ra))
    vb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return cov / (va * vb) if va and vb else float("nan")


def summary(rows):
    ok = [r for r in rows if r["pred"] > 0 and r["meas"] > 0]
    if not ok:
        return "no rows"
    ratios = [r["pred"] / r["meas"] for r in ok]
    err = [max(x, 1 / x) for x in ratios]
    w15 = sum(e <= 1.5 for e in err) / len(err)
    w2 = sum(e <= 2.0 for e in err) / len(err)
    worst = max(range(len(err)), key=lambda i: err[i])
    rho = spearman([r["meas"] for r in ok], [r["pred"] for r in ok])
    designed = [r for r in ok if r["limiter"]]
    named = sum(r["named_ok"] for r in designed)
    return (f"{len(ok)} kernels: {100 * w15:.0f}% within 1.5x, {100 * w2:.0f}% within 2x, worst "
            f"{err[worst]:.2f}x ({ok[worst]['id']}), Spearman {rho:.3f}; designed limiter named for "
            f"{named} of {len(designed)}")


def kernel_source(e):
    """The entry's kernel file, or (with `tune` or `define` in the manifest) a copy of it with those
    `// @tune` lines and those `#define` lines replaced where the file has them, else put first: a
    version of a shared file."""
    path = os.path.join(ROOT, e["file"])
    if "tune" not in e and "define" not in e:
        return path
    src = open(path).read()
    lines = [(rf"^// @tune {k}=.*$", f"// @tune {k}={v}") for k, v in e.get("tune", {}).items()]
    lines += [(rf"^#define {k}\b.*$", f"#define {k} {v}") for k, v in e.get("define", {}).items()]
    for pattern, line in lines:
        src, n = re.subn(pattern, line, src, count=1, flags=re.M)
        if n == 0:
            src = line + "\n" + src
    f = tempfile.NamedTemporaryFile("w", suffix=".cu", prefix=e["id"] + "-", delete=False)
    f.write(src)
    f.close()
    return f.name


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 4
    data = args[0]
    local = args[args.index("--local") + 1] if "--local" in args else None
    gpu = args[args.index("--gpu") + 1] if "--gpu" in args else "h200"
    md = args[args.index("--md") + 1] if "--md" in args else None
    ceilings = ["--ceilings", os.path.join(data, "probe.json")] if "--ceilings" in args else []
    # --heldout: the kernels written apart from the model (bench/perfmodel/heldout.toml); --set NAME:
    # bench/perfmodel/NAME.toml (curriculum2: the solutions of puzzles 19-34 and their versions;
    # first_attempts: kernels of the kinds learners write first).
    manifest = "heldout.toml" if "--heldout" in args else "corpus.toml"
    if "--set" in args:
        manifest = args[args.index("--set") + 1] + ".toml"
    with open(os.path.join(ROOT, "bench/perfmodel", manifest), "rb") as f:
        corpus = tomllib.load(f)["kernel"]
    measured = {}
    for line in open(os.path.join(data, "checks.jsonl")):
        j = json.loads(line)
        measured[j["id"]] = j
    rows = []
    for i, e in enumerate(corpus):
        m = measured.get(e["id"])
        if not m or not (m.get("timing") or {}).get("ok"):
            continue
        if local:
            src = kernel_source(e)
            p = subprocess.run([os.path.join(local, "warpbook"), "predict", e["puzzle"], src, "--json",
                                "--gpu", gpu] + ceilings, capture_output=True, text=True,
                               timeout=600)
            if src != os.path.join(ROOT, e["file"]):
                os.unlink(src)
            try:
                pred = json.loads(p.stdout)
            except Exception:
                pred = {"ok": False, "error": p.stderr[-200:]}
        else:
            pred = m.get("prediction") or {}
        factors = pred.get("factors") or []
        named = factors[0]["key"] if factors else ""
        top2 = {f["key"] for f in factors[:2]}
        lim = e.get("limiter", "")
        rows.append({
            "id": e["id"], "limiter": lim, "half": "B" if e.get("heldout", i % 2 == 1) else "A",
            "meas": m["timing"]["median_us"], "pred": pred.get("us", 0) if pred.get("ok") else 0,
            "sol": (m.get("perf") or {}).get("speed_of_light", 0), "named": named,
            "named_ok": bool(lim) and bool(LIMITER_KEYS.get(lim, {lim}) & top2),
            "factor": factors[0]["text"] if factors else pred.get("error", ""),
            "model_ms": pred.get("model_ms", 0),
        })
    out = []
    if local:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True).stdout.strip()
        out.append(f"Measured: {os.path.relpath(os.path.abspath(data), ROOT)}. Predicted for `{gpu}` "
                   f"by `warpbook predict` built from {rev or 'this tree'} "
                   f"(a machine without a GPU, {os.cpu_count()} cores)"
                   + (", with the GPU's own probe.json" if ceilings else "") + ".")
        out.append("")
    out.append(f"| kernel | designed limiter | measured | predicted | ratio | SOL | model names | |")
    out.append("|---|---|---:|---:|---:|---:|---|---|")
    for r in rows:
        ratio = r["pred"] / r["meas"] if r["pred"] else 0
        mark = "" if not r["limiter"] else ("yes" if r["named_ok"] else "NO")
        out.append(f"| {r['id']} | {r['limiter'] or '-'} | {r['meas']:.1f} us | {r['pred']:.1f} us | "
                   f"{ratio:.2f} | {100 * r['sol']:.1f}% | {r['named']} | {mark} |")
    out.append("")
    out.append("All: " + summary(rows))
    out.append("Half A (calibration): " + summary([r for r in rows if r["half"] == "A"]))
    out.append("Half B (held out): " + summary([r for r in rows if r["half"] == "B"]))
    ms = [r["model_ms"] for r in rows if r["model_ms"]]
    if ms:
        slow = [f"{r['id']} ({r['model_ms'] / 1000:.1f} s)" for r in rows if r["model_ms"] > 2000]
        out.append(f"Model time per kernel (this machine): median {sorted(ms)[len(ms) // 2]:.0f} ms, "
                   f"max {max(ms):.0f} ms; over 2 s: {', '.join(slow) or 'none'}")
    text = "\n".join(out)
    print(text)
    if md:
        with open(md, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
