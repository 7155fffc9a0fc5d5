cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
rm -rf puzzles/99-skinny-ws-gemm && cp -r puzzles/43-tma-warp-specialized-gemm puzzles/99-skinny-ws-gemm
python3 - <<'PY'
p='puzzles/99-skinny-ws-gemm/puzzle.toml'
s=open(p).read(); i=s.index('[perf]'); j=s.index('[sim_perf]')
s=s[:i]+s[i:j].replace('M = 4096','M = 16384').replace('N = 4096','N = 1024')+s[j:]
s=s.replace('id = "43-tma-warp-specialized-gemm"','id = "99-skinny-ws-gemm"')
open(p,'w').write(s)
PY
for f in solutions/43-tma-warp-specialized-gemm.cu; do
  printf '%s skinny: ' $f; ${WB:-build-dev/warpbook} check 99-skinny-ws-gemm $f --json $WBARGS 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); p=j.get('perf') or {}; t=p.get('timing') or {}
print(j.get('verdict'), '%.2f us'%t.get('median_us',0), p.get('medal'), (j.get('summary') or '')[:120])"
done
rm -rf puzzles/99-skinny-ws-gemm
