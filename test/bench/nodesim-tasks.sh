#!/usr/bin/env bash
# Placement benchmark through the full server (docs/benchmarks.md): one
# strata server, NODES simulated nodes (`strata nodesim`, every node
# watching its allocations), then WORKLOADS workloads of REPLICAS mock
# tasks each submitted one after the other with `strata run`. Reports
# placements/s, submit -> reported running p50/p99 and the server's CPU
# seconds and peak RSS.
#
# usage: test/bench/nodesim-tasks.sh NODES WORKLOADS REPLICAS
# env:   STRATA (binary, default strata), KEEP=1 keeps the work dir.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
nodes=$1 workloads=$2 replicas=$3
total=$((workloads * replicas))
bin=${STRATA:-strata}
dir=$(mktemp -d /tmp/nodesim-tasks.XXXXXX)
ulimit -n "$(ulimit -Hn)"
# A loopback benchmark cell: plaintext without ACLs (anonymous callers
# allowed), and one join token for servers and the simulated nodes
# (docs/security.md).
export STRATA_INSECURE_PLAINTEXT=1 STRATA_INSECURE_ALLOW_ANONYMOUS=1
STRATA_JOIN_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
export STRATA_JOIN_TOKEN
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ "${KEEP:-}" = 1 ] || rm -rf "$dir"
}
trap cleanup EXIT
addr=127.0.0.1:15691
"$bin" server --data-dir "$dir/s1" --http-addr "$addr" --log-level warn --http-max-conns-per-client -1 >"$dir/s1.log" 2>&1 &
server=$!
pids+=($server)
until curl -sf "http://$addr/v1/status/ready" >/dev/null; do sleep 0.5; done
( while :; do ps -o rss= -p "$server" || true; sleep 2; done ) >"$dir/rss" &
pids+=($!)
"$bin" nodesim --servers "$addr" --count "$nodes" --register-workers 256 --workers 128 --progress-every 30s \
	--running-log "$dir/running.csv" >"$dir/nodesim.out" 2>"$dir/nodesim.err" &
pids+=($!)
until grep -q "all .* nodes registered" "$dir/nodesim.err" 2>/dev/null; do sleep 1; done
grep "all .* nodes registered" "$dir/nodesim.err"
cpu0=$(awk '{ print $14 + $15 }' "/proc/$server/stat")
echo "submitting $workloads x $replicas = $total tasks; load: $(uptime)"
for w in $(seq 1 "$workloads"); do
	cat >"$dir/w$w.yaml" <<YAML
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: bench-$w}
spec:
  groups:
    - name: g
      replicas: $replicas
      tasks:
        - {name: t, driver: mock, command: ["x"], resources: {cpu: 100m, memory: 64Mi}}
YAML
	echo "bench-$w $(date +%s.%N)" >>"$dir/submitted"
	STRATA_ADDR=$addr "$bin" run -f "$dir/w$w.yaml" >/dev/null
done
echo "all submitted at $(date +%T); load: $(uptime)"
until [ "$(wc -l <"$dir/running.csv" 2>/dev/null || echo 0)" -ge "$total" ]; do sleep 2; done
cpu1=$(awk '{ print $14 + $15 }' "/proc/$server/stat")
echo "all $total reported running at $(date +%T); load: $(uptime)"
python3 - "$dir" "$total" <<'PY'
import csv, sys, datetime
d, total = sys.argv[1], int(sys.argv[2])
sub = {}
for line in open(d + "/submitted"):
    w, t = line.split(); sub[w] = float(t)
def ts(s): return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
lat, created = [], []
for row in csv.reader(open(d + "/running.csv")):
    alloc, w, node, c, r = row
    lat.append(ts(r) - sub[w]); created.append(ts(c))
lat.sort(); created.sort()
first = min(sub.values())
print(f"placements: {len(created)} in {created[-1]-first:.1f}s from the first submit: {len(created)/(created[-1]-first):.0f}/s")
print(f"submit -> running: p50 {lat[len(lat)//2]:.2f}s p99 {lat[int(len(lat)*0.99)]:.2f}s max {lat[-1]:.2f}s")
PY
echo "server CPU during placement: $(((cpu1 - cpu0) / $(getconf CLK_TCK))) s; peak RSS $(($(sort -n "$dir/rss" | tail -1) / 1024)) MiB"
echo "node downs (server log): $(count_node_downs "$dir/s1.log")"
