package server

import (
	"flag"
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
)

// labelledWorkload is bigWorkload confined to nodes labelled check=<check>,
// so the checks of one property run share a server but not capacity.
const labelledWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s}
spec:
  groups:
    - name: web
      replicas: %d
      placement:
        require: ["check=%s"]
      tasks:
        - name: t
          driver: mock
          command: ["x"]
          resources: {cpu: 20, memory: 1Gi}
`

// fataler is what test helpers need of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// allocIdentity is what an allocation id names; it must never change.
type allocIdentity struct {
	workload, group string
	index           int
	node            string
	createIndex     uint64
}

// TestPropertyAllocationIDsAreNeverReused drives the real control plane
// (broker, workers, plan applier, raft) through random node joins, new and
// grown workloads, retried (unblocked), superseded and re-queued
// evaluations. Whatever the order: an allocation id always names the same
// replica on the same node, a running replica is never stopped (nothing in
// the run asks for that), and no replica index has two live allocations.
//
// Every check runs tens of raft commits, so the property runs 20 checks
// unless -rapid.checks says otherwise.
func TestPropertyAllocationIDsAreNeverReused(t *testing.T) {
	defer fewerRapidChecks(20)()
	s := quietServer(t)
	checkNo := 0
	rapid.Check(t, func(rt *rapid.T) {
		checkNo++
		check := fmt.Sprintf("c%d", checkNo)
		seen := map[string]allocIdentity{}
		wasRunning := map[string]bool{}
		replicas := map[string]int{} // workload → replicas asked for
		var workloads []string
		nodes := 0

		settle := func() { settleServer(rt, s) }
		rt.Repeat(map[string]func(*rapid.T){
			"add node": func(rt *rapid.T) {
				nodes++
				cpu := rapid.SampledFrom([]int64{32000, 48000}).Draw(rt, "cpu") // room for 1 or 2 replicas
				n := &api.Node{ID: fmt.Sprintf("%s-n%d", check, nodes), Name: fmt.Sprintf("%s-n%d", check, nodes), Status: api.NodeReady,
					Labels:   map[string]string{"check": check},
					Capacity: api.Resources{CPUMilli: cpu, MemoryBytes: 128 << 30, DiskBytes: 1 << 40, NetMbps: 10000}}
				if _, err := s.propose(&fsm.UpsertNode{Node: n}); err != nil {
					rt.Fatal(err)
				}
				if rapid.Bool().Draw(rt, "unblock") {
					s.leader.Unblock() // as a node registration through the API does
				}
				settle()
			},
			"submit": func(rt *rapid.T) {
				name := fmt.Sprintf("%s-w%d", check, len(workloads))
				workloads = append(workloads, name)
				replicas[name] = rapid.IntRange(1, 3).Draw(rt, "replicas")
				submit(rt, s, fmt.Sprintf(labelledWorkload, name, replicas[name], check))
				settle()
			},
			"grow twice quickly (supersede)": func(rt *rapid.T) {
				if len(workloads) == 0 {
					rt.Skip("no workload yet")
				}
				name := rapid.SampledFrom(workloads).Draw(rt, "workload")
				for range 2 {
					replicas[name]++
					submit(rt, s, fmt.Sprintf(labelledWorkload, name, replicas[name], check))
				}
				settle()
			},
			"re-queue an old evaluation": func(rt *rapid.T) {
				if len(workloads) == 0 {
					rt.Skip("no workload yet")
				}
				name := rapid.SampledFrom(workloads).Draw(rt, "workload")
				evals := s.State().Snapshot().EvalsByWorkload(nil, "", name)
				sort.Slice(evals, func(i, j int) bool { return evals[i].CreateIndex < evals[j].CreateIndex })
				e := *rapid.SampledFrom(evals).Draw(rt, "eval")
				e.Status = api.EvalPending // as a failed plan's 1s retry or a new leader re-runs it
				s.leader.Enqueue(&e)
				settle()
			},
			"unblock": func(rt *rapid.T) {
				s.leader.Unblock()
				settle()
			},
			"agents report running": func(rt *rapid.T) {
				for _, name := range workloads {
					markRunning(rt, s, name)
				}
				settle()
			},
			"": func(rt *rapid.T) {
				snap := s.State().Snapshot()
				live := map[string]string{}
				for _, name := range workloads {
					count := 0
					for _, a := range snap.AllocsByWorkload("", name) {
						id := allocIdentity{a.Workload, a.Group, a.Index, a.NodeID, a.CreateIndex}
						if old, ok := seen[a.ID]; ok && old != id {
							rt.Fatalf("allocation id %s reused: was %+v, now %+v", a.ID, old, id)
						}
						seen[a.ID] = id
						if wasRunning[a.ID] && a.DesiredStatus != api.DesiredRun {
							rt.Fatalf("running allocation %s (%s[%d]) stopped: %q", a.ID, a.Workload, a.Index, a.DesiredReason)
						}
						if a.ClientStatus == api.AllocRunning {
							wasRunning[a.ID] = true
						}
						if a.DesiredStatus == api.DesiredRun && !a.Terminal() {
							count++
							slot := fmt.Sprintf("%s/%s[%d]", a.Workload, a.Group, a.Index)
							if other, dup := live[slot]; dup {
								rt.Fatalf("replica %s has two live allocations: %s and %s", slot, other, a.ID)
							}
							live[slot] = a.ID
						}
					}
					if count > replicas[name] {
						rt.Fatalf("workload %s: %d live allocations for %d replicas", name, count, replicas[name])
					}
				}
			},
		})
	})
}

// fewerRapidChecks lowers rapid's number of checks to n unless the
// command line set -rapid.checks; the returned func restores it.
func fewerRapidChecks(n int) func() {
	f := flag.Lookup("rapid.checks")
	explicit := false
	flag.Visit(func(v *flag.Flag) { explicit = explicit || v.Name == "rapid.checks" })
	if f == nil || explicit {
		return func() {}
	}
	old := f.Value.String()
	f.Value.Set(strconv.Itoa(n))
	return func() { f.Value.Set(old) }
}

// settleServer waits until the broker has nothing queued or in flight and
// the state stopped moving, so each step sees its consequences.
func settleServer(tb fataler, s *Server) {
	tb.Helper()
	stableFor := 0
	last := s.State().Index()
	deadline := time.Now().Add(20 * time.Second)
	for stableFor < 2 {
		if time.Now().After(deadline) {
			ready, inflight, blocked := s.leader.BrokerStats()
			tb.Fatalf("server did not settle: ready %d, in flight %d, blocked %d", ready, inflight, blocked)
		}
		time.Sleep(2 * time.Millisecond) // the poll interval
		ready, inflight, _ := s.leader.BrokerStats()
		idx := s.State().Index()
		if ready == 0 && inflight == 0 && idx == last {
			stableFor++
		} else {
			stableFor = 0
		}
		last = idx
	}
}
