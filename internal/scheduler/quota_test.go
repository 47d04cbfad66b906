package scheduler

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

// quotaFake is a fakeState whose namespaces have quotas; usage is summed
// from the allocations, as the store keeps it incrementally.
type quotaFake struct {
	*fakeState
	quotas map[string]*api.Quota
}

var _ QuotaState = quotaFake{}

func (q quotaFake) NamespaceQuota(ns string) *api.Quota { return q.quotas[api.NamespaceOf(ns)] }

func (q quotaFake) NamespaceUsage(ns string) api.QuotaUsage {
	var u api.QuotaUsage
	for _, a := range q.allocs {
		if api.CountsAgainstQuota(a) && api.NamespaceOf(a.Namespace) == api.NamespaceOf(ns) {
			u = u.Add(api.UsageOf(a.Resources))
		}
	}
	return u
}

func limit(v int64) *int64 { return &v }

func inNamespace(w *api.Workload, ns string) *api.Workload { w.Namespace = ns; return w }

func scheduleIn(st State, ns, name string, seed int64) *api.Plan {
	return Schedule(st, &api.Evaluation{ID: "eval-" + name, Namespace: ns, Workload: name}, Options{Seed: seed})
}

// TestQuotaKeepsGroupPending: a group whose next replica would exceed its
// namespace's quota places what fits and stays pending with the quota as
// the reason on every node; another namespace is not held back by it.
func TestQuotaKeepsGroupPending(t *testing.T) {
	tests := []struct {
		name       string
		quota      *api.Quota
		replicas   int
		wantPlaced int
		wantReason string // in the failure's summary; "" for none
	}{
		{"unbounded", nil, 4, 4, ""},
		{"cpu", &api.Quota{CPUMilli: limit(2500)}, 4, 2, "quota.cpuMilli: 3000 needed, 2500 allowed"},
		{"memory", &api.Quota{MemoryBytes: limit(3 << 30)}, 4, 3, "quota.memoryBytes"},
		{"allocations", &api.Quota{Allocations: limit(1)}, 4, 1, "quota.allocations: 2 needed, 1 allowed"},
		{"room for all", &api.Quota{CPUMilli: limit(4000), Allocations: limit(4)}, 4, 4, ""},
		{"none at all", &api.Quota{Allocations: limit(0)}, 2, 0, "quota.allocations: 1 needed, 0 allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := quotaFake{newFake(nodesN(4, nil)...), map[string]*api.Quota{"team-a": tt.quota}}
			f.putWorkload(inNamespace(workload("w", taskGroup("g").replicas(tt.replicas).cpu(1000).mem("1Gi")), "team-a"))
			plan := scheduleIn(f, "team-a", "w", 1)
			mustEqual(t, "placed", len(planAllocs(plan)), tt.wantPlaced)
			for _, a := range planAllocs(plan) {
				mustEqual(t, "namespace of "+a.ID, a.Namespace, "team-a")
			}
			if tt.wantReason == "" {
				mustEqual(t, "failures", len(plan.Failures), 0)
				return
			}
			mustEqual(t, "failures", len(plan.Failures), 1)
			fl := plan.Failures[0]
			if !strings.Contains(fl.Summary, "namespace team-a over "+tt.wantReason) || !strings.HasPrefix(fl.Summary, "4 nodes") {
				t.Fatalf("summary %q: want every node refused for %q", fl.Summary, tt.wantReason)
			}
			mustEqual(t, "missing", fl.Missing, tt.replicas-tt.wantPlaced)
		})
	}
}

// TestQuotaNeverPreemptsBeyondIt: a high-priority group of a namespace at
// its quota does not evict another tenant's lower-priority work; within
// its quota it may, by the ordinary rules.
func TestQuotaNeverPreemptsBeyondIt(t *testing.T) {
	for _, tt := range []struct {
		name    string
		quota   int64
		evicted int
	}{{"beyond its quota", 1000, 0}, {"within its quota", 8000, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			f := quotaFake{newFake(nodesN(1, nil)...), map[string]*api.Quota{"team-a": {CPUMilli: limit(tt.quota)}}}
			low := running(f.fakeState, "b1", "n000", "low", 10, 4000)
			low.Namespace = "team-b"
			f.refreshAllocated()
			hi := inNamespace(workload("hi", taskGroup("g").replicas(2).cpu(1000).mem("1Gi")), "team-a")
			hi.Priority = 90
			f.putWorkload(hi)
			mine := running(f.fakeState, "a1", "n000", "hi", 90, 0)
			mine.Namespace, mine.Resources = "team-a", api.Resources{CPUMilli: 1000}
			mine.Group, mine.TaskGroup, mine.WorkloadVersion = "g", hi.Groups[0], hi.Version
			f.refreshAllocated()
			plan := scheduleIn(f, "team-a", "hi", 1)
			mustEqual(t, "preemptions", plan.Preemptions, tt.evicted)
		})
	}
}

// TestPropertyQuotaNeverExceeded: over random tenants, quotas, workloads,
// priorities and preemptions, committing every plan as the scheduler made
// it never takes a namespace's usage beyond its quota (the plan applier's
// rule re-checks the same against the newest state: planapply's tests).
func TestPropertyQuotaNeverExceeded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := quotaFake{newFake(nodesN(rapid.IntRange(1, 5).Draw(t, "nodes"), nil)...), map[string]*api.Quota{}}
		namespaces := []string{"default", "a", "b"}
		for _, ns := range namespaces {
			if rapid.Bool().Draw(t, "quota "+ns) {
				f.quotas[ns] = &api.Quota{
					CPUMilli:    limit(rapid.Int64Range(0, 12000).Draw(t, "cpu "+ns)),
					Allocations: limit(rapid.Int64Range(0, 8).Draw(t, "allocs "+ns)),
				}
			}
		}
		for step := range rapid.IntRange(1, 12).Draw(t, "steps") {
			ns := rapid.SampledFrom(namespaces).Draw(t, "ns")
			name := fmt.Sprintf("w%d", step)
			tg := taskGroup("g").replicas(rapid.IntRange(1, 6).Draw(t, "replicas")).cpu(rapid.Int64Range(100, 3000).Draw(t, "cpu")).mem("256Mi")
			if rapid.Bool().Draw(t, "gang") {
				tg.gang(tg.g.Replicas, "")
			}
			w := inNamespace(workload(name, tg), ns)
			w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
			f.putWorkload(w)
			plan := scheduleIn(f, ns, name, int64(step))
			f.apply(plan, rapid.Bool().Draw(t, "finish"))
			f.refreshAllocated()
			for _, ns := range namespaces {
				if why := f.quotas[ns].Exceeded(f.NamespaceUsage(ns)); why != "" {
					t.Fatalf("step %d: namespace %s over its quota: %s", step, ns, why)
				}
			}
		}
	})
}
