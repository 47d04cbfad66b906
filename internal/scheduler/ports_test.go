package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

// port asks for a port: static when static > 0, dynamic otherwise.
func (b *groupBuilder) port(name string, static int) *groupBuilder {
	b.g.Ports = append(b.g.Ports, api.PortRequest{Name: name, Static: static})
	return b
}

// dynamicPorts gives the node its own dynamic port range.
func (b *nodeBuilder) dynamicPorts(lo, hi int) *nodeBuilder {
	b.n.DynamicPorts = &api.PortRange{Min: lo, Max: hi}
	return b
}

// holding adds a running allocation of workload wl on nodeID that holds
// the given ports.
func holding(f *fakeState, id, nodeID, wl string, prio int, ports ...int) *api.Allocation {
	a := runningOn(id, nodeID, api.Resources{CPUMilli: 100, MemoryBytes: 1 << 20}, api.Assignment{NUMANode: -1})
	a.Workload, a.Group, a.Priority = wl, "g", prio
	a.TaskGroup = &api.TaskGroup{Name: "g"}
	for k, p := range ports {
		a.Assignment.Ports = append(a.Assignment.Ports, api.AssignedPort{Name: fmt.Sprint("p", k), Port: p})
		a.TaskGroup.Ports = append(a.TaskGroup.Ports, api.PortRequest{Name: fmt.Sprint("p", k), Static: p})
	}
	f.putAlloc(a)
	return a
}

func portsOf(a *api.Allocation) string {
	var out []string
	for _, p := range a.Assignment.Ports {
		out = append(out, fmt.Sprintf("%s=%d", p.Name, p.Port))
	}
	return strings.Join(out, " ")
}

func TestPortPlacement(t *testing.T) {
	big := func(id string) *nodeBuilder { return node(id).cpu(16000).mem("32Gi") }
	tests := []struct {
		name   string
		nodes  []*nodeBuilder
		setup  func(f *fakeState)
		group  *groupBuilder
		prio   int
		want   []string // "node: ports" per placed replica, by index
		reason string   // a failure reason, when some replica is not placed
	}{
		{"dynamic ports are the lowest free of the range, never shared",
			[]*nodeBuilder{big("n1")}, func(f *fakeState) { holding(f, "x", "n1", "other", 50, 20000) },
			taskGroup("web").replicas(2).port("http", 0).port("admin", 0), 50,
			[]string{"n1: http=20001 admin=20002", "n1: http=20003 admin=20004"}, ""},
		{"a static port inside the range is skipped by the group's dynamic ones",
			[]*nodeBuilder{big("n1")}, nil,
			taskGroup("web").port("http", 0).port("fixed", 20000), 50,
			[]string{"n1: http=20001 fixed=20000"}, ""},
		{"a static port goes once per node",
			[]*nodeBuilder{big("n1"), big("n2")}, nil,
			taskGroup("web").replicas(3).port("http", 8080), 50,
			[]string{"n1: http=8080", "n2: http=8080"}, "port 8080 already in use"},
		{"a static port held by another workload does not fit",
			[]*nodeBuilder{big("n1"), big("n2")}, func(f *fakeState) { holding(f, "x", "n1", "other", 90, 8080) },
			taskGroup("web").port("http", 8080), 50,
			[]string{"n2: http=8080"}, ""},
		{"a static port held by lower-priority work is preempted",
			[]*nodeBuilder{big("n1")}, func(f *fakeState) { holding(f, "x", "n1", "other", 10, 8080) },
			taskGroup("web").port("http", 8080), 50,
			[]string{"n1: http=8080"}, ""},
		{"a full dynamic range does not fit",
			[]*nodeBuilder{big("n1")}, func(f *fakeState) {
				var all []int
				for p := api.DynamicPortMin; p <= api.DynamicPortMax; p++ {
					all = append(all, p)
				}
				holding(f, "x", "n1", "other", 90, all...)
			},
			taskGroup("web").port("http", 0), 50,
			nil, reasonNoDynamicPort(api.PortRange{Min: api.DynamicPortMin, Max: api.DynamicPortMax})},
		{"a node's own range gives its dynamic ports; two nodes of one host never share one",
			[]*nodeBuilder{big("n1").dynamicPorts(21000, 21999), big("n2").dynamicPorts(22000, 22999)}, nil,
			taskGroup("web").replicas(2).port("http", 0).spread(api.LabelNode, 1, api.ModeHard), 50,
			[]string{"n1: http=21000", "n2: http=22000"}, ""},
		{"a node's own range that is full does not fit, and says which range",
			[]*nodeBuilder{big("n1").dynamicPorts(21000, 21001)}, nil,
			taskGroup("web").replicas(3).port("http", 0), 50,
			[]string{"n1: http=21000", "n1: http=21001"}, "no free port in the dynamic range 21000-21001"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(tc.nodes...)
			if tc.setup != nil {
				tc.setup(f)
			}
			w := workload("w", tc.group)
			w.Priority = tc.prio
			f.putWorkload(w)
			plan := schedule(f, "w", 1)
			checkPlan(t, f, plan)
			var got []string
			for _, a := range planAllocs(plan) {
				got = append(got, a.NodeID+": "+portsOf(a))
			}
			slices.Sort(got)
			if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Fatalf("placed %q, want %q", got, tc.want)
			}
			var reasons []string
			for _, fl := range plan.Failures {
				for r := range fl.Reasons {
					reasons = append(reasons, r)
				}
			}
			if tc.reason == "" && len(reasons) > 0 || tc.reason != "" && !slices.Contains(reasons, tc.reason) {
				t.Fatalf("failure reasons %q, want %q", reasons, tc.reason)
			}
			f.apply(plan, true)
			checkState(t, f)
		})
	}
}

func TestCheckNodePorts(t *testing.T) {
	n := node("n1").cpu(8000).mem("8Gi").n
	existing := []*api.Allocation{runningOn("x", "n1", api.Resources{CPUMilli: 100}, api.Assignment{NUMANode: -1, Ports: []api.AssignedPort{{Name: "a", Port: 8080}}})}
	place := func(req []api.PortRequest, got ...api.AssignedPort) *api.Allocation {
		a := runningOn("new", "n1", api.Resources{CPUMilli: 100}, api.Assignment{NUMANode: -1, Ports: got})
		a.TaskGroup = &api.TaskGroup{Name: "g", Ports: req}
		return a
	}
	tests := []struct {
		name     string
		stopping map[string]bool
		a        *api.Allocation
		reason   string
	}{
		{"free static port", nil, place([]api.PortRequest{{Name: "h", Static: 9090}}, api.AssignedPort{Name: "h", Port: 9090}), ""},
		{"taken static port", nil, place([]api.PortRequest{{Name: "h", Static: 8080}}, api.AssignedPort{Name: "h", Port: 8080}), "port 8080 assigned twice"},
		{"taken port of an allocation being stopped", map[string]bool{"x": true}, place([]api.PortRequest{{Name: "h", Static: 8080}}, api.AssignedPort{Name: "h", Port: 8080}), ""},
		{"a dynamic port outside the range", nil, place([]api.PortRequest{{Name: "h"}}, api.AssignedPort{Name: "h", Port: 80}), "outside"},
		{"a dynamic port outside the node's own range", nil, place([]api.PortRequest{{Name: "h"}}, api.AssignedPort{Name: "h", Port: 20000}), "outside 21000-21999"},
		{"a port missing", nil, place([]api.PortRequest{{Name: "h"}, {Name: "i"}}, api.AssignedPort{Name: "h", Port: 20000}), "assigned 1 ports, want 2"},
		{"a port of another name", nil, place([]api.PortRequest{{Name: "h"}}, api.AssignedPort{Name: "i", Port: 20000}), `named "i"`},
		{"the same port twice in one allocation", nil, place([]api.PortRequest{{Name: "h"}, {Name: "i"}}, api.AssignedPort{Name: "h", Port: 20000}, api.AssignedPort{Name: "i", Port: 20000}), "port 20000 assigned twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := n
			if strings.Contains(tc.name, "own range") {
				n = node("n1").cpu(8000).mem("8Gi").dynamicPorts(21000, 21999).n
			}
			ok, reason := CheckNode(n, existing, tc.stopping, []*api.Allocation{tc.a})
			if ok != (tc.reason == "") || !strings.Contains(reason, tc.reason) {
				t.Fatalf("CheckNode = %v %q, want reason %q", ok, reason, tc.reason)
			}
		})
	}
}

// TestDynamicPortsAvoidPortsBeingStopped: the ports of allocations the plan
// stops are free, but their tasks may still listen for a shutdown delay,
// so a dynamic port is drawn from them only when nothing else is free.
func TestDynamicPortsAvoidPortsBeingStopped(t *testing.T) {
	stopping := runningOn("old", "n1", api.Resources{CPUMilli: 100}, api.Assignment{NUMANode: -1, Ports: []api.AssignedPort{{Name: "http", Port: 21000}}})
	tests := []struct {
		name   string
		lo, hi int
		want   []int
	}{
		{"another free port first", 21000, 21999, []int{21001, 21002}},
		{"the stopping one when nothing else is free", 21000, 21001, []int{21001, 21000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newNodeDetail(node("n1").cpu(8000).mem("8Gi").dynamicPorts(tc.lo, tc.hi).n)
			d.linger(stopping)
			got := d.freeDynamicPorts([]api.PortRequest{{Name: "a"}, {Name: "b"}}, 2)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("free dynamic ports %v, want %v", got, tc.want)
			}
		})
	}
}
