#!/usr/bin/env bash
# Control-plane scale benchmark (docs/benchmarks.md): start SERVERS strata
# servers on loopback, run `strata nodesim` with NODES nodes for HOLD
# seconds after they registered, then report registration time, false node
# downs (the servers' "node down" log lines while every simulated node was
# alive), heartbeat figures, and each server's peak RSS and CPU seconds.
#
# usage: test/bench/nodesim-hold.sh NODES SERVERS HOLD_SECONDS [nodesim flags...]
# env:   STRATA (binary, default strata), KEEP=1 keeps the work dir,
#        RAFT_MULTIPLIER (servers' --raft-multiplier, default 1).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
nodes=$1 servers=$2 hold=$3
shift 3
bin=${STRATA:-strata}
dir=$(mktemp -d /tmp/nodesim-bench.XXXXXX)
ulimit -n "$(ulimit -Hn)"
# A loopback benchmark cell: plaintext without ACLs (anonymous callers
# allowed), and one join token for servers and the simulated nodes
# (docs/security.md).
export STRATA_INSECURE_PLAINTEXT=1 STRATA_INSECURE_ALLOW_ANONYMOUS=1
STRATA_JOIN_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
export STRATA_JOIN_TOKEN
pids=()
cleanup() {
	for p in "${pids[@]}" ${sim:+"$sim"} ${sampler:+"$sampler"}; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ "${KEEP:-}" = 1 ] || rm -rf "$dir"
}
trap cleanup EXIT

addrs=()
for i in $(seq 1 "$servers"); do
	http=127.0.0.1:$((15680 + i)) raft=127.0.0.1:$((15780 + i))
	args=(server --data-dir "$dir/s$i" --http-addr "$http" --log-level warn --http-max-conns-per-client -1)
	if [ "$servers" -gt 1 ]; then
		args+=(--raft-addr "$raft" --bootstrap-expect "$servers" --join 127.0.0.1:15781 --raft-multiplier "${RAFT_MULTIPLIER:-1}")
	fi
	"$bin" "${args[@]}" >"$dir/s$i.log" 2>&1 &
	pids+=($!)
	addrs+=("$http")
done
for a in "${addrs[@]}"; do
	until curl -sf "http://$a/v1/status/ready" >/dev/null; do sleep 0.5; done
done
echo "servers ready: ${addrs[*]}; load: $(uptime)"

# Sample every server's RSS (peak) while nodesim runs.
(
	while :; do
		for idx in "${!pids[@]}"; do
			echo "$idx $(ps -o rss= -p "${pids[$idx]}" 2>/dev/null || echo 0)"
		done
		sleep 2
	done
) >"$dir/rss" &
sampler=$!

start=$(date +%s)
"$bin" nodesim --servers "$(IFS=,; echo "${addrs[*]}")" --count "$nodes" --duration 0 --progress-every 30s -o json "$@" \
	>"$dir/nodesim.json" 2>"$dir/nodesim.err" &
sim=$!
until grep -q "all .* nodes registered" "$dir/nodesim.err" 2>/dev/null; do
	if ! kill -0 "$sim" 2>/dev/null; then cat "$dir/nodesim.err"; exit 1; fi
	sleep 0.5
done
grep "all .* nodes registered" "$dir/nodesim.err"
echo "holding ${hold}s; load: $(uptime)"
sleep "$hold"
downs=$(count_node_downs "$dir"/s*.log)
echo "load at the end of the hold: $(uptime)"
kill -INT "$sim"
wait "$sim" || true
kill "$sampler"
sampler=
grep -v '^{' "$dir/nodesim.err" | tail -3
cat "$dir/nodesim.json"
echo "false node downs during the hold (server log): $downs"
for idx in "${!pids[@]}"; do
	p=${pids[$idx]}
	peak=$(awk -v i="$idx" '$1 == i && $2 > m { m = $2 } END { print m + 0 }' "$dir/rss")
	ticks=$(awk '{ print $14 + $15 }' "/proc/$p/stat")
	echo "server $((idx + 1)): peak RSS $((peak / 1024)) MiB, CPU $((ticks / $(getconf CLK_TCK))) s over $(($(date +%s) - start)) s"
done
