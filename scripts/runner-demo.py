#!/usr/bin/env python3
"""Talks to a Warpbook runner the way the window does (JSON lines, app/core/runner.hpp) and prints
what came back: the devices, a check of a puzzle's starter and solution, optionally the probe
suite, and what happens when the runner is killed in the middle of a request.

    scripts/runner-demo.py                       # ./build/warpbook runner
    scripts/runner-demo.py --probe -- ssh gpu-box warpbook runner
"""
import argparse, json, os, signal, subprocess, sys, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("--exe", default="build/warpbook")
ap.add_argument("--puzzle", default="01-vector-add")
ap.add_argument("--probe", action="store_true", help="also measure the ceilings (a GPU only)")
ap.add_argument("--kill", action="store_true", help="kill -9 the runner during a check")
ap.add_argument("--sticky", action="store_true",
                help="check a kernel that writes through a wild pointer: on a GPU the context is lost "
                     "and the runner must end itself after answering")
ap.add_argument("command", nargs="*", help="the runner command (default: EXE runner)")
a = ap.parse_args()
cmd = a.command or [a.exe, "runner"]


class Runner:
    def __init__(self):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.events, self.cv, self.next_id = [], threading.Condition(), 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            with self.cv:
                self.events.append(json.loads(line))
                self.cv.notify_all()
        with self.cv:
            self.events.append({"event": "eof"})
            self.cv.notify_all()

    def send(self, **req):
        req["id"] = self.next_id
        self.next_id += 1
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        return req["id"]

    def answer(self, rid, timeout=600, on_progress=None):
        end = time.time() + timeout
        with self.cv:
            while True:
                for i, e in enumerate(self.events):
                    if e.get("event") == "eof" or (e.get("id") == rid and e["event"] in ("result", "hello")):
                        return self.events.pop(i)
                    if e.get("id") == rid and e["event"] == "progress" and on_progress:
                        on_progress(self.events.pop(i))
                        break
                else:
                    if not self.cv.wait(max(0.01, end - time.time())):
                        return None


r = Runner()
t = time.time()
hello = r.answer(r.send(op="hello"), 120)
print(f"hello after {time.time() - t:.2f} s: runner {hello['version']}, protocol {hello['protocol']}, pid {hello['pid']}")
for b in hello["backends"]:
    print(f"  {b['kind']:5} {'yes' if b['available'] else 'no ':3} {b['device']['name'] or b['why']}")

rows = []
for label, path in [("starter", f"puzzles/{a.puzzle}/starter.cu"), ("solution", f"solutions/{a.puzzle}.cu")]:
    src = open(path).read()
    t = time.time()
    phases = []
    res = r.answer(r.send(op="check", puzzle=a.puzzle, file=path, source=src, backend="auto"),
                   on_progress=lambda e: phases.append(e["phase"]))
    rep = res.get("report") or {}
    perf = rep.get("perf") or {}
    timing = perf.get("timing") or {}
    rows.append((label, rep.get("verdict", res.get("error")), time.time() - t, timing.get("median_us", 0),
                 perf.get("gbps", 0), 100 * perf.get("speed_of_light", 0), perf.get("medal", ""), len(phases)))

if a.probe:
    t = time.time()
    res = r.answer(r.send(op="probe", backend="cuda"), 300)
    print(f"probe ({time.time() - t:.1f} s): {'ok' if res.get('ok') else res.get('error')}")
    for f in res.get("probe", []):
        if not f["skipped"]:
            print(f"  {f['metric']:22} {f['best']:12.0f} {f['unit']:8} datasheet {f['datasheet']:.0f}")

if a.sticky:
    wild = ('extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n'
            '  float* p = (float*)0xdead00000000ull; /* nothing is mapped there */\n  p[threadIdx.x] = a[0];\n}\n')
    res = r.answer(r.send(op="check", puzzle="01-vector-add", file="wild.cu", source=wild, backend="auto"), 120)
    rep = res.get("report") or {}
    print(f"wild pointer: {rep.get('verdict')}: {rep.get('summary', res.get('error'))}")
    try:
        r.p.wait(timeout=5)
        print(f"  then the runner ended with exit code {r.p.returncode} (75: it ended itself after a sticky fault)")
        r = Runner()  # what the window does at the next request
        print(f"  a fresh runner: {r.answer(r.send(op='hello'), 120)['backends'][0]['device']['name'] or 'no GPU'}")
    except subprocess.TimeoutExpired:
        print("  the runner carries on (nothing sticky on this backend)")

if a.kill:
    src = open(f"solutions/{a.puzzle}.cu").read()
    pid = r.p.pid
    rid = r.send(op="check", puzzle=a.puzzle, file="k.cu", source=src, backend="auto")
    killed = []
    def kill_on_progress(e):
        if not killed and e["phase"] != "compiling":
            os.kill(pid, signal.SIGKILL)
            killed.append(e["phase"])
    res = r.answer(rid, 120, kill_on_progress)
    r.p.wait()
    print(f"kill -9 during '{killed[0] if killed else '?'}': the runner ended with status {r.p.returncode}; "
          f"the stream then said {res}")

print(f"\n{'file':9} {'verdict':14} {'wall s':>7} {'median us':>10} {'GB/s':>8} {'% SOL':>6} medal  progress events")
for row in rows:
    print(f"{row[0]:9} {row[1]:14} {row[2]:7.2f} {row[3]:10.2f} {row[4]:8.0f} {row[5]:6.0f} {row[6]:6} {row[7]}")
