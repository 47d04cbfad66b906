package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// The partition test of invariant 8 (docs/reliability.md, "At most
// once"). Two workloads of 3 replicas run on one node: "amo" declares
// atMostOnce, "plain" may be replaced while its node is silent
// (disconnect: lostAfter 1m, replace, keep-replacement). The node's agent
// is frozen (SIGSTOP) past its TTL until both are replaced elsewhere, then
// thawed. Every task appends the host's time to a file of its own every
// 50 ms (bash's $EPOCHREALTIME, no process per tick), so overlap is measured from the tasks themselves: for amo it must
// be 0; for plain, the server's choice (the replacement) must win within
// 1 s of the agent's return. STRATA_PARTITION_TRIALS sets the number of
// trials (default 2; the documented run uses 20).

const partitionTTL = 3 * time.Second

const tickerSpec = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s}
spec:
  groups:
    - name: g
      replicas: 3
%s      tasks:
        - name: ticker
          command: ["/bin/bash", "-c", "trap 'exit 0' TERM; while :; do echo $EPOCHREALTIME >> $STRATA_TASK_DIR/ticks; sleep 0.05; done"]
          killTimeout: 500ms
          resources: {cpu: 50m, memory: 16Mi}
`

// ticks reads the times an allocation's task wrote. A task sees only its
// own directory (docs/security.md, "Task isolation"), so it writes there:
// <root>/agent-<node>/allocs/<alloc>/ticker/local/ticks.
func ticks(t *testing.T, root, allocID string) []float64 {
	files, err := filepath.Glob(filepath.Join(root, "agent-*", "allocs", allocID, "ticker", "local", "ticks"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		return nil
	}
	data, err := os.ReadFile(files[0])
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, line := range strings.Fields(string(data)) {
		if v, err := strconv.ParseFloat(line, 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// overlapSeconds is how long two copies ran at once, from their ticks:
// the intersection of [first, last] of each.
func overlapSeconds(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	lo := max(a[0], b[0])
	hi := min(a[len(a)-1], b[len(b)-1])
	return max(0, hi-lo)
}

func TestOverlapSeconds(t *testing.T) {
	tests := []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2, 3}, []float64{4, 5}, 0},
		{[]float64{1, 2, 3.5}, []float64{3, 5}, 0.5},
		{nil, []float64{1}, 0},
		{[]float64{1, 9}, []float64{2, 3}, 1},
	}
	for _, tt := range tests {
		if got := overlapSeconds(tt.a, tt.b); got != tt.want {
			t.Errorf("overlap(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// partitionRig is what a trial needs from a cell: its allocations, and a
// way to cut a node off and bring it back (SIGSTOP of its agent, or a
// network partition).
type partitionRig struct {
	allocs     func(workload string) []*api.Allocation
	eventually func(d time.Duration, what string, cond func() error)
	cut, heal  func(node string)
}

type trialResult struct {
	amoOverlap, plainOverlap float64 // worst replica, seconds
	resolution               float64 // heal → plain's stopped copy's process gone, worst replica
}

func partitionTrials(t *testing.T) int {
	trials := 2
	if s := os.Getenv("STRATA_PARTITION_TRIALS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("STRATA_PARTITION_TRIALS=%q: want a positive number", s)
		}
		trials = n
	}
	return trials
}

func tickerWorkloads() (amo, plain string) {
	return fmt.Sprintf(tickerSpec, "amo", "      atMostOnce: true\n"),
		fmt.Sprintf(tickerSpec, "plain", "      disconnect: {lostAfter: 1m, replace: true, reconcile: keep-replacement}\n")
}

// TestPartitionAtMostOnce cuts nodes off by freezing their agent
// (SIGSTOP): the tasks run on, only the shim can stop them.
func TestPartitionAtMostOnce(t *testing.T) {
	c := newCell(t, partitionTTL)
	tickDir := c.dir // the agents' data dirs are agent-<name> in it
	c.startAgent("n1")
	amo, plain := tickerWorkloads()
	c.mustStrata("run", "-f", c.writeSpec("amo", amo), "--wait", "--timeout", "60s")
	c.mustStrata("run", "-f", c.writeSpec("plain", plain), "--wait", "--timeout", "60s")
	c.startAgent("n2")
	rig := partitionRig{allocs: c.allocs, eventually: c.eventually,
		cut: func(node string) {
			if err := c.agents[node].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
		},
		heal: func(node string) {
			if err := c.agents[node].cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
		}}
	runPartitionTrials(t, rig, tickDir, "sigstop")
}

func runPartitionTrials(t *testing.T, rig partitionRig, tickDir, how string) {
	trials := partitionTrials(t)
	var results []trialResult
	for i := range trials {
		r := partitionTrial(t, rig, tickDir)
		t.Logf("%s trial %d: amo overlap %.3fs, plain overlap %.3fs, reconnect resolution %.3fs", how, i+1, r.amoOverlap, r.plainOverlap, r.resolution)
		results = append(results, r)
	}
	amo := collect(results, func(r trialResult) float64 { return r.amoOverlap })
	plain := collect(results, func(r trialResult) float64 { return r.plainOverlap })
	res := collect(results, func(r trialResult) float64 { return r.resolution })
	t.Logf("RESULT %s trials=%d amo_overlap p50=%.3f p99=%.3f max=%.3f | plain_overlap p50=%.3f p99=%.3f max=%.3f | reconnect_resolution p50=%.3f p99=%.3f max=%.3f",
		how, trials, pct(amo, 50), pct(amo, 99), amo[len(amo)-1], pct(plain, 50), pct(plain, 99), plain[len(plain)-1], pct(res, 50), pct(res, 99), res[len(res)-1])
	if amo[len(amo)-1] > 0 {
		t.Errorf("an at-most-once replica ran twice for %.3fs", amo[len(amo)-1])
	}
	// The target is 1 s, met by the documented runs; the short CI run,
	// on a machine shared with the whole suite, allows 2 s so that it
	// fails on a regression (it was 9 s) rather than on load.
	limit := 2.0
	if os.Getenv("STRATA_PARTITION_TRIALS") != "" {
		limit = 1
	}
	if res[len(res)-1] > limit {
		t.Errorf("the server's choice took %.3fs to win after a reconnect, want ≤ %gs", res[len(res)-1], limit)
	}
}

func collect(rs []trialResult, f func(trialResult) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	slices.Sort(out)
	return out
}

func pct(sorted []float64, p int) float64 {
	i := (len(sorted)*p+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// liveOn returns the workload's live allocations, and the one node they
// all run on ("" when they are spread or fewer than 3 run).
func liveOn(rig partitionRig, workload string) ([]*api.Allocation, string) {
	run := runningAllocs(rig.allocs(workload))
	node := ""
	for _, a := range run {
		if node != "" && a.NodeName != node {
			return run, ""
		}
		node = a.NodeName
	}
	if len(run) != 3 {
		return run, ""
	}
	return run, node
}

// partitionTrial freezes the agent holding both workloads until both are
// replaced on the other node, thaws it, and measures.
func partitionTrial(t *testing.T, c partitionRig, tickDir string) trialResult {
	t.Helper()
	var amoOld, plainOld []*api.Allocation
	var holder string
	c.eventually(60*time.Second, "both workloads running on one node", func() error {
		var n1, n2 string
		amoOld, n1 = liveOn(c, "amo")
		plainOld, n2 = liveOn(c, "plain")
		if n1 == "" || n1 != n2 {
			return fmt.Errorf("amo on %q, plain on %q", n1, n2)
		}
		holder = n1
		return nil
	})
	c.cut(holder)
	var r trialResult
	thawed := false
	defer func() {
		if !thawed {
			c.heal(holder)
		}
	}()
	replaced := func(workload string) error {
		var run []*api.Allocation // the replacements: plain's originals stay "unknown" meanwhile
		for _, a := range runningAllocs(c.allocs(workload)) {
			if a.NodeName != holder {
				run = append(run, a)
			}
		}
		if len(run) != 3 {
			return fmt.Errorf("%s: %d running off %s", workload, len(run), holder)
		}
		for _, a := range run {
			if len(ticks(t, tickDir, a.ID)) == 0 {
				return fmt.Errorf("%s: replacement %s has not ticked yet", workload, a.ID)
			}
		}
		return nil
	}
	c.eventually(60*time.Second, "replacements running elsewhere", func() error {
		// plain is replaced while unknown (at once); amo only after the lease.
		if err := replaced("plain"); err != nil {
			return err
		}
		return replaced("amo")
	})
	time.Sleep(500 * time.Millisecond) // let both copies of plain run side by side, as a partition would
	// The reconnect starts when the node is whole again: once heal returns
	// (faultnet rewrites every host's rules, which takes a moment on a
	// loaded machine; SIGCONT is instant).
	c.heal(holder)
	thawed = true
	thaw := float64(time.Now().UnixNano()) / 1e9

	// Wait until every old copy's process is gone (the host is shared, so
	// the pids the agent reported can be watched directly); the moment
	// plain's die is when the server's choice won.
	alive := map[int]*api.Allocation{}
	for _, a := range append(slices.Clone(amoOld), plainOld...) {
		for _, ts := range a.TaskStates {
			if ts.PID > 0 {
				alive[ts.PID] = a
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(alive) > 0 {
		for pid, a := range alive {
			if !pidAlive(pid) {
				if a.Workload == "plain" {
					r.resolution = max(r.resolution, float64(time.Now().UnixNano())/1e9-thaw)
				}
				delete(alive, pid)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d copies of the thawed node still run 30s after its return", len(alive))
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, pair := range []struct {
		old []*api.Allocation
		dst *float64
	}{{amoOld, &r.amoOverlap}, {plainOld, &r.plainOverlap}} {
		all := c.allocs(pair.old[0].Workload)
		for _, o := range pair.old {
			oldTicks := ticks(t, tickDir, o.ID)
			for _, a := range all {
				if a.PreviousAlloc == o.ID || (a.Index == o.Index && a.ID != o.ID && a.CreateIndex > o.CreateIndex) {
					*pair.dst = max(*pair.dst, overlapSeconds(oldTicks, ticks(t, tickDir, a.ID)))
				}
			}
		}
	}
	// The server's choice won: plain's replacements still run.
	if run, node := liveOn(c, "plain"); node == holder || len(run) != 3 {
		t.Fatalf("after the thaw plain runs %d on %q, want 3 replacements off %s", len(run), node, holder)
	}
	return r
}
