package scheduler

import (
	"time"

	"strconv"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

// bytesOf parses "512Mi", "8Gi" or plain bytes for test builders.
func bytesOf(s string) int64 {
	units := []struct {
		suffix string
		size   int64
	}{{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			n, err := strconv.ParseInt(strings.TrimSuffix(s, u.suffix), 10, 64)
			if err != nil {
				panic(err)
			}
			return n * u.size
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

// nodeBuilder builds a ready node: node("n1").cpu(4000).mem("8Gi").label("rack", "r1").
type nodeBuilder struct{ n *api.Node }

func node(id string) *nodeBuilder {
	return &nodeBuilder{n: &api.Node{ID: id, Name: id, Status: api.NodeReady, Labels: map[string]string{}}}
}

func (b *nodeBuilder) cpu(milli int64) *nodeBuilder   { b.n.Capacity.CPUMilli = milli; return b }
func (b *nodeBuilder) mem(s string) *nodeBuilder      { b.n.Capacity.MemoryBytes = bytesOf(s); return b }
func (b *nodeBuilder) disk(s string) *nodeBuilder     { b.n.Capacity.DiskBytes = bytesOf(s); return b }
func (b *nodeBuilder) net(mbps int64) *nodeBuilder    { b.n.Capacity.NetMbps = mbps; return b }
func (b *nodeBuilder) status(s string) *nodeBuilder   { b.n.Status = s; return b }
func (b *nodeBuilder) label(k, v string) *nodeBuilder { b.n.Labels[k] = v; return b }

// used sets Allocated directly, for filter tests without allocations.
func (b *nodeBuilder) used(r api.Resources) *nodeBuilder { b.n.Allocated = r; return b }

// numa adds a NUMA node with the given cpu ids and memory ("" = unknown).
func (b *nodeBuilder) numa(id int, mem string, cpus ...int) *nodeBuilder {
	nn := api.NUMANode{ID: id, CPUs: cpus}
	if mem != "" {
		nn.MemoryBytes = bytesOf(mem)
	}
	b.n.NUMA = append(b.n.NUMA, nn)
	return b
}

// gpu adds one GPU and counts it in Capacity.GPUs.
func (b *nodeBuilder) gpu(id, model string, numa int) *nodeBuilder {
	b.n.GPUs = append(b.n.GPUs, api.GPU{ID: id, Model: model, NUMA: numa})
	b.n.Capacity.GPUs++
	return b
}

func cpus(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// groupBuilder builds a task group with one task "main".
type groupBuilder struct{ g *api.TaskGroup }

func taskGroup(name string) *groupBuilder {
	return &groupBuilder{g: &api.TaskGroup{Name: name, Replicas: 1, Tasks: []*api.Task{{Name: "main", Driver: "mock"}},
		// Immediate replacements, 3 within the hour: the engine's tests
		// care about placement, not about reschedule delays (reschedule_test.go).
		Reschedule: &api.ReschedulePolicy{Attempts: MaxReschedules, Interval: time.Hour, DelayFunction: api.DelayConstant}}}
}

func (b *groupBuilder) task() *api.Task               { return b.g.Tasks[0] }
func (b *groupBuilder) replicas(n int) *groupBuilder  { b.g.Replicas = n; return b }
func (b *groupBuilder) cpu(milli int64) *groupBuilder { b.task().Resources.CPUMilli = milli; return b }
func (b *groupBuilder) mem(s string) *groupBuilder {
	b.task().Resources.MemoryBytes = bytesOf(s)
	return b
}
func (b *groupBuilder) disk(s string) *groupBuilder {
	b.task().Resources.DiskBytes = bytesOf(s)
	return b
}
func (b *groupBuilder) net(mbps int64) *groupBuilder     { b.task().Resources.NetMbps = mbps; return b }
func (b *groupBuilder) gpus(n int64) *groupBuilder       { b.task().Resources.GPUs = n; return b }
func (b *groupBuilder) gpuMilli(m int64) *groupBuilder   { b.task().Resources.GPUMilli = m; return b }
func (b *groupBuilder) exclusive() *groupBuilder         { b.task().ExclusiveCores = true; return b }
func (b *groupBuilder) models(m ...string) *groupBuilder { b.task().GPUModels = m; return b }
func (b *groupBuilder) command(c ...string) *groupBuilder {
	b.task().Command = c
	return b
}

func (b *groupBuilder) require(key, op string, values ...string) *groupBuilder {
	b.g.Placement.Require = append(b.g.Placement.Require, api.LabelRule{Key: key, Op: op, Values: values})
	return b
}

func (b *groupBuilder) prefer(weight int, key, op string, values ...string) *groupBuilder {
	b.g.Placement.Prefer = append(b.g.Placement.Prefer, api.LabelRule{Key: key, Op: op, Values: values, Weight: weight})
	return b
}

func (b *groupBuilder) avoid(weight int, key, op string, values ...string) *groupBuilder {
	b.g.Placement.Avoid = append(b.g.Placement.Avoid, api.LabelRule{Key: key, Op: op, Values: values, Weight: weight})
	return b
}

// workload builds a workload at version 1 with priority 50.
func workload(name string, groups ...*groupBuilder) *api.Workload {
	w := &api.Workload{Name: name, Priority: 50, Version: 1, SchedulingPolicy: api.SchedulingPolicy{Type: api.PolicyBinpack}}
	for _, g := range groups {
		w.Groups = append(w.Groups, g.g)
	}
	return w
}

// compiled returns g compiled for w (nil: a plain workload around it).
func compiled(w *api.Workload, g *groupBuilder) *group {
	if w == nil {
		w = workload("w", g)
	}
	return compileGroup(w, g.g, Options{})
}

// mustEqual is the one assertion style of this package's tests.
func mustEqual[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func intsToStrings(in []int) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = itoa(v)
	}
	return out
}

func join(s []string) string { return strings.Join(s, ",") }

// cut splits "id:rest" at the first colon.
func cut(s string) (string, string, bool) { return strings.Cut(s, ":") }

// gang makes the group a gang of minMember (0 = every replica) that tries
// topology domains of key first.
func (b *groupBuilder) gang(minMember int, topology string) *groupBuilder {
	b.g.Gang = &api.GangPolicy{MinMember: minMember, Topology: topology}
	return b
}
