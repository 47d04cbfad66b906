package resources_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/resources"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// Every dimension of api.Dimensions goes the whole way round: written in
// a workload document it parses to its value, its value formats to text
// that parses back, an allocation holding it is charged to its node and
// given back when stopped, and the scheduler fits a request of it on a
// node that has exactly that much and refuses one a unit larger, with the
// dimension's own reason. A new dimension is held to all of it by its
// entry alone.
func TestEveryDimensionGoesRoundTrip(t *testing.T) {
	for k, d := range api.Dimensions {
		t.Run(d.Name, func(t *testing.T) {
			v := exampleValue(d)
			t.Run("format", func(t *testing.T) {
				for _, x := range []int64{0, v, d.Max} {
					if d.Spec.Form == api.FormHugePages && x%d.Spec.PageSize != 0 {
						continue
					}
					text := resources.Format(d.Unit, x)
					got, err := resources.Parse(d.Unit, text)
					if err != nil || got != x {
						t.Fatalf("Format(%d) = %q, parsed back as %d, %v", x, text, got, err)
					}
				}
				if got := resources.Limits[k].Check(d.Max + 1); !strings.Contains(got, "must be at most") {
					t.Fatalf("Check(Max+1) = %q", got)
				}
			})
			t.Run("spec", func(t *testing.T) {
				w, err := spec.Parse([]byte(workloadAsking(d, v)))
				if err != nil {
					t.Fatalf("parse: %v\n%s", err, workloadAsking(d, v))
				}
				res := w.Groups[0].Tasks[0].Resources
				if got := res.Get(k); got != v {
					t.Fatalf("parsed %s = %d, want %d (%+v)", d.Name, got, v, res)
				}
			})
			t.Run("accounting", func(t *testing.T) {
				s := state.New()
				n := nodeOffering(d, k, v)
				write(t, s, 1, func(w *state.WriteTxn) error { return w.UpsertNode(n) })
				a := &api.Allocation{ID: "a1", NodeID: n.ID, Workload: "w", Group: "g", DesiredStatus: api.DesiredRun,
					ClientStatus: api.AllocPending, Resources: request(k, v)}
				write(t, s, 2, func(w *state.WriteTxn) error { return w.UpsertAlloc(a) })
				if got := s.Snapshot().Node(n.ID).Allocated.Get(k); got != v {
					t.Fatalf("allocated %s = %d, want %d", d.Name, got, v)
				}
				write(t, s, 3, func(w *state.WriteTxn) error { return w.StopAlloc("a1", "done", false) })
				a2 := s.Snapshot().Alloc("a1").Copy()
				a2.ClientStatus = api.AllocComplete
				write(t, s, 4, func(w *state.WriteTxn) error { return w.UpsertAlloc(a2) })
				if got := s.Snapshot().Node(n.ID).Allocated.Get(k); got != 0 {
					t.Fatalf("allocated %s = %d after the allocation completed, want 0", d.Name, got)
				}
			})
			t.Run("fit", func(t *testing.T) {
				if got := fits(t, d, k, v, v); got != "" {
					t.Fatalf("a request of %d on a node with %d: %s", v, v, got)
				}
				over := v + 1
				if d.Spec.Form == api.FormHugePages {
					over = v + d.Spec.PageSize
				}
				want := "insufficient " + d.Noun
				if got := fits(t, d, k, v, over); !strings.Contains(got, want) {
					t.Fatalf("a request of %d on a node with %d: %q, want %q", over, v, got, want)
				}
			})
		})
	}
}

// exampleValue is a value of d a task may ask for and a node may hold.
func exampleValue(d api.Dimension) int64 {
	switch {
	case d.Spec.Form == api.FormHugePages:
		return 4 * d.Spec.PageSize
	case d.Fit == api.FitPerDevice:
		return d.Share.Parts / 2
	case d.Unit == api.UnitCount:
		return 2
	}
	return min(d.Max, 3000)
}

// workloadAsking is a workload whose one task asks for v of d, written as
// a document writes d.
func workloadAsking(d api.Dimension, v int64) string {
	var res string
	switch d.Spec.Form {
	case api.FormQuantity:
		res = fmt.Sprintf("%s: %q", d.Spec.Key, resources.Format(d.Unit, v))
	case api.FormGPU:
		res = fmt.Sprintf("%s: %q", d.Spec.Key, resources.Format(d.Unit, v))
	case api.FormHugePages:
		res = fmt.Sprintf("%s: {%s: %q}", d.Spec.Key, strings.TrimSuffix(resources.FormatBytes(d.Spec.PageSize), "B"), resources.FormatBytes(v))
	}
	extra := ""
	if d.Spec.Key != "cpu" {
		extra += ", cpu: 100m"
	}
	if d.Spec.Key != "memory" {
		extra += ", memory: 64Mi"
	}
	return fmt.Sprintf(`apiVersion: strata.dev/v1
kind: Workload
metadata: {name: w}
spec:
  groups:
    - name: g
      replicas: 1
      tasks:
        - {name: t, driver: mock, command: ["x"], resources: {%s%s}}
`, res, extra)
}

// request is a request of v in dimension k (and a little cpu and memory
// where k is neither, as every task asks for them).
func request(k int, v int64) api.Resources {
	r := api.Resources{CPUMilli: 100, MemoryBytes: 64 << 20}
	*r.Of(k) = v
	return r
}

// nodeOffering is a ready node with v of dimension k (a per-device
// dimension: one device it divides), and plenty of cpu and memory.
func nodeOffering(d api.Dimension, k int, v int64) *api.Node {
	n := &api.Node{ID: "n1", Name: "n1", Status: api.NodeReady, Capacity: api.Resources{CPUMilli: 64000, MemoryBytes: 1 << 40}}
	switch {
	case d.Fit == api.FitPerDevice:
		*n.Capacity.Of(api.DimensionIndex(d.Share.Of)) = 1
		n.GPUs = []api.GPU{{ID: "0", Model: "A100", NUMA: -1}}
	case d.Name == "gpu":
		*n.Capacity.Of(k) = v
		for g := range v {
			n.GPUs = append(n.GPUs, api.GPU{ID: fmt.Sprint(g), Model: "A100", NUMA: -1})
		}
	default:
		*n.Capacity.Of(k) = v
	}
	return n
}

// fits schedules one replica asking want of dimension k on a node
// offering have, and returns "" when it was placed, else the failure.
func fits(t *testing.T, d api.Dimension, k int, have, want int64) string {
	t.Helper()
	s := state.New()
	n := nodeOffering(d, k, have)
	if d.Fit == api.FitPerDevice {
		// The device is shared already by the rest of its parts.
		write(t, s, 1, func(w *state.WriteTxn) error { return w.UpsertNode(n) })
		busy := &api.Allocation{ID: "busy", NodeID: n.ID, Workload: "other", Group: "g", DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning,
			Resources: request(k, d.Share.Parts-have), Assignment: api.Assignment{NUMANode: -1, GPUs: []string{"0"}, GPUMilli: d.Share.Parts - have}}
		write(t, s, 2, func(w *state.WriteTxn) error { return w.UpsertAlloc(busy) })
	} else {
		write(t, s, 2, func(w *state.WriteTxn) error { return w.UpsertNode(n) })
	}
	task := &api.Task{Name: "t", Driver: "mock", Command: []string{"x"}, Resources: request(k, want)}
	w := &api.Workload{Name: "w", Version: 1, Groups: []*api.TaskGroup{{Name: "g", Replicas: 1, Tasks: []*api.Task{task}}}}
	write(t, s, 3, func(wt *state.WriteTxn) error { return wt.RegisterWorkload(w, nil, time.Unix(0, 0)) })
	plan := scheduler.Schedule(s.Snapshot(), &api.Evaluation{ID: "e", Workload: "w"}, scheduler.Options{Seed: 1})
	if len(plan.Failures) > 0 {
		return plan.Failures[0].Summary
	}
	if len(plan.Place) == 0 {
		return "nothing placed"
	}
	return ""
}

func write(t *testing.T, s *state.Store, index uint64, fn func(w *state.WriteTxn) error) {
	t.Helper()
	if err := s.Write(index, fn); err != nil {
		t.Fatalf("write %d: %v", index, err)
	}
}

// TestEveryUnitParsesAndFormats: each unit a dimension uses has a syntax
// both ways.
func TestEveryUnitParsesAndFormats(t *testing.T) {
	for _, d := range api.Dimensions {
		if _, err := resources.Parse(d.Unit, resources.Format(d.Unit, 1)); err != nil {
			t.Errorf("%s: unit %d: %v", d.Name, d.Unit, err)
		}
	}
}
