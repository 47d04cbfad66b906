package scheduler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/strata-dev/strata/api"
	"pgregory.net/rapid"
)

// device adds a device of class on NUMA node numa, with attributes given
// as "key", "value" pairs.
func (b *nodeBuilder) device(id, class string, numa int, attrs ...string) *nodeBuilder {
	d := api.Device{ID: id, Class: class, NUMA: numa}
	for k := 0; k+1 < len(attrs); k += 2 {
		if d.Attributes == nil {
			d.Attributes = map[string]string{}
		}
		d.Attributes[attrs[k]] = attrs[k+1]
	}
	b.n.Devices = append(b.n.Devices, d)
	return b
}

// devices adds a device request to the group's first task.
func (b *groupBuilder) devices(class string, count int, attrs ...string) *groupBuilder {
	r := api.DeviceRequest{Class: class, Count: count}
	for k := 0; k+1 < len(attrs); k += 2 {
		if r.Attributes == nil {
			r.Attributes = map[string]string{}
		}
		r.Attributes[attrs[k]] = attrs[k+1]
	}
	b.task().Devices = append(b.task().Devices, r)
	return b
}

func (b *groupBuilder) numaLocalDevices() *groupBuilder {
	for k := range b.task().Devices {
		b.task().Devices[k].NUMALocal = true
	}
	return b
}

func fpgaNode() *nodeBuilder {
	return node("n1").cpu(8000).mem("16Gi").
		numa(0, "8Gi", cpus(0, 4)...).numa(1, "8Gi", cpus(4, 8)...).
		device("f0", "fpga", 0, "model", "u250").
		device("f1", "fpga", 1, "model", "u280").
		device("v0", "nic-vf", 1)
}

func TestDeviceFilter(t *testing.T) {
	tests := []struct {
		name  string
		group *groupBuilder
		node  *nodeBuilder
		want  string
	}{
		{"one fpga", taskGroup("g").devices("fpga", 1), fpgaNode(), ""},
		{"two fpgas", taskGroup("g").devices("fpga", 2), fpgaNode(), ""},
		{"three fpgas", taskGroup("g").devices("fpga", 3), fpgaNode(), "no 3 free devices of class fpga"},
		{"no device at all", taskGroup("g").devices("fpga", 1), node("n1").cpu(1000).mem("1Gi"), "no 1 free device of class fpga"},
		{"attribute present", taskGroup("g").devices("fpga", 1, "model", "u280"), fpgaNode(), ""},
		{"attribute no node has", taskGroup("g").devices("fpga", 1, "model", "vu9p"), fpgaNode(), "no 1 free device of class fpga with model=vu9p"},
		{"two classes", taskGroup("g").devices("fpga", 2).devices("nic-vf", 1), fpgaNode(), ""},
		// "any fpga" must not take the only u250 a later request needs
		{"specific requests choose first", taskGroup("g").devices("fpga", 1).devices("fpga", 1, "model", "u250"), fpgaNode(), ""},
		{"numa local: vf and fpga on node 1", taskGroup("g").cpu(2000).exclusive().devices("nic-vf", 1).devices("fpga", 1, "model", "u280").numaLocalDevices(), fpgaNode(), ""},
		{"numa local: u250 and vf on different nodes", taskGroup("g").cpu(2000).exclusive().devices("nic-vf", 1).devices("fpga", 1, "model", "u250").numaLocalDevices(), fpgaNode(), "no NUMA node with 2 free cores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCell(newFake(tt.node), 1)
			g := compiled(nil, tt.group)
			_, got := g.firstReject(c, 0)
			mustEqual(t, "reason", got, tt.want)
		})
	}
}

func TestAssignDevices(t *testing.T) {
	tests := []struct {
		name     string
		group    *groupBuilder
		wantNUMA int
		want     []string
	}{
		{"in request order", taskGroup("g").devices("nic-vf", 1).devices("fpga", 1, "model", "u280"), -1, []string{"v0", "f1"}},
		{"local to the pinned cores first", taskGroup("g").cpu(2000).exclusive().devices("fpga", 1), 0, []string{"f0"}},
		{"the vf pulls the cores to its node", taskGroup("g").cpu(2000).exclusive().devices("nic-vf", 1).numaLocalDevices(), 1, []string{"v0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCell(newFake(fpgaNode()), 1)
			g := compiled(nil, tt.group)
			mustEqual(t, "reject", g.check(c, 0), "")
			asg := c.assign(g, 0)
			mustEqual(t, "numa", asg.NUMANode, tt.wantNUMA)
			mustEqual(t, "devices", join(asg.Devices), join(tt.want))
		})
	}
}

// TestScheduleDevicesUntilFull places replicas until the node's fpgas run
// out: each gets its own, and the rest stay pending with the reason.
func TestScheduleDevicesUntilFull(t *testing.T) {
	f := newFake(fpgaNode())
	f.putWorkload(workload("w", taskGroup("g").replicas(3).cpu(100).devices("fpga", 1)))
	plan := Schedule(f, &api.Evaluation{ID: "e1", Workload: "w"}, Options{Seed: 1})
	checkPlan(t, f, plan)
	var got []string
	for _, a := range plan.Place["n1"] {
		got = append(got, a.Assignment.Devices...)
	}
	slices.Sort(got)
	mustEqual(t, "devices", join(got), "f0,f1")
	if len(plan.Failures) != 1 {
		t.Fatalf("failures = %+v, want one", plan.Failures)
	}
	mustEqual(t, "reason", fmt.Sprint(plan.Failures[0].Reasons), "map[no 1 free device of class fpga:1]")
}

func TestCheckNodeDevices(t *testing.T) {
	n := fpgaNode().n
	tg := taskGroup("g").devices("fpga", 1, "model", "u250").g
	held := &api.Allocation{ID: "a1", NodeID: "n1", TaskGroup: tg, ClientStatus: api.AllocRunning, DesiredStatus: api.DesiredRun, Assignment: api.Assignment{NUMANode: -1, Devices: []string{"f0"}}}
	for _, tc := range []struct {
		name    string
		devices []string
		want    string
	}{
		{"free and matching", []string{"f0"}, ""},
		{"taken", []string{"f0"}, "device f0 assigned twice"},
		{"not on node", []string{"zz"}, "alloc b1: device zz not on node"},
		{"wrong model", []string{"f1"}, "alloc b1: device f1 is not a fpga with model=u250"},
		{"too few", nil, "alloc b1: assigned 0 devices, want 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var existing []*api.Allocation
			if tc.name == "taken" {
				existing = []*api.Allocation{held}
			}
			b := &api.Allocation{ID: "b1", NodeID: "n1", TaskGroup: tg, Assignment: api.Assignment{NUMANode: -1, Devices: tc.devices}}
			_, reason := CheckNode(n, existing, nil, []*api.Allocation{b})
			mustEqual(t, "reason", reason, tc.want)
		})
	}
}

// genDevices gives a generated node a few devices of two classes; kept out
// of genNode so that the plan digest's scenarios stay as they were.
func genDevices(t *rapid.T, b *nodeBuilder) *nodeBuilder {
	for k := range rapid.IntRange(0, 4).Draw(t, "devices") {
		class := rapid.SampledFrom([]string{"fpga", "nic-vf"}).Draw(t, "class")
		model := rapid.SampledFrom([]string{"a", "b"}).Draw(t, "devModel")
		b.device(fmt.Sprintf("%s%d", class, k), class, k%2, "model", model)
	}
	return b
}

func genDeviceRequests(t *rapid.T, g *groupBuilder) *groupBuilder {
	for range rapid.IntRange(0, 2).Draw(t, "deviceRequests") {
		class := rapid.SampledFrom([]string{"fpga", "nic-vf"}).Draw(t, "wantClass")
		if slices.ContainsFunc(g.task().Devices, func(r api.DeviceRequest) bool { return r.Class == class }) {
			continue
		}
		var attrs []string
		if rapid.Bool().Draw(t, "wantModel") {
			attrs = []string{"model", rapid.SampledFrom([]string{"a", "b"}).Draw(t, "devModel")}
		}
		g.devices(class, rapid.IntRange(1, 2).Draw(t, "count"), attrs...)
	}
	if g.task().ExclusiveCores && rapid.Bool().Draw(t, "numaLocal") {
		g.numaLocalDevices()
	}
	return g
}

// TestPropertyDevicesNeverShared: random cells with devices, random
// workloads asking for them at random priorities (so they preempt each
// other), nodes failing and allocations failing: every plan passes
// CheckNode and no device is ever held by two live allocations
// (checkState's independent accounting).
func TestPropertyDevicesNeverShared(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 6).Draw(t, "nodes") {
			nodes = append(nodes, genDevices(t, genNode(t, i)))
		}
		f := newFake(nodes...)
		names := []string{"a", "b", "c"}
		for step := range rapid.IntRange(1, 10).Draw(t, "steps") {
			name := rapid.SampledFrom(names).Draw(t, "workload")
			switch rapid.IntRange(0, 3).Draw(t, "action") {
			case 0, 1:
				w := workload(name)
				for gi := range rapid.IntRange(1, 2).Draw(t, "groups") {
					g := genDeviceRequests(t, genGroup(t, fmt.Sprintf("g%d", gi)))
					if rapid.IntRange(0, 3).Draw(t, "gangRoll") == 0 {
						g.gang(0, "rack")
					}
					w.Groups = append(w.Groups, g.g)
				}
				if old := f.Workload("", name); old != nil {
					w.Version = old.Version + 1
				}
				w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
				f.putWorkload(w)
			case 2:
				n := f.nodes[rapid.IntRange(0, len(f.nodes)-1).Draw(t, "node")]
				n.Status = map[bool]string{true: api.NodeReady, false: api.NodeDown}[n.Status != api.NodeReady]
			case 3:
				if len(f.allocs) > 0 {
					a := f.allocs[rapid.IntRange(0, len(f.allocs)-1).Draw(t, "alloc")]
					if !a.Terminal() {
						f.setClient(a.ID, api.AllocFailed)
					}
				}
			}
			plan := Schedule(f, &api.Evaluation{ID: fmt.Sprint("e", step), Workload: name}, Options{Seed: int64(step)})
			checkPlan(t, f, plan)
			f.apply(plan, rapid.Bool().Draw(t, "finishStops"))
			checkState(t, f)
		}
	})
}
