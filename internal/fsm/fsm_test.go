package fsm

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// fsmTime stamps every command of these tests.
var fsmTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fsmRig is an FSM fed raft log entries directly, one index after another.
type fsmRig struct {
	t     *testing.T
	f     *FSM
	index uint64
}

func newFSMRig(t *testing.T) *fsmRig {
	return &fsmRig{t: t, f: New(slog.New(slog.NewTextHandler(io.Discard, nil)))}
}

// encodeEntry frames body as its command's entry; a whole ApplyPlan as the
// apply-plan entry old logs hold.
func encodeEntry(t testing.TB, body any) []byte {
	t.Helper()
	var data []byte
	var err error
	if p, ok := body.(*ApplyPlan); ok {
		data, err = Commands.Lookup(legacyPlanValue).Encode(p)
	} else {
		data, err = Commands.Encode(body)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// legacyPlanValue is apply-plan's value.
const legacyPlanValue Type = 6

// apply encodes body as its command, applies it at the next index and
// returns the FSM's answer.
func (r *fsmRig) apply(body any) any {
	r.t.Helper()
	return r.applyData(encodeEntry(r.t, body))
}

func (r *fsmRig) applyData(data []byte) any {
	r.index++
	return r.f.Apply(r.index, data)
}

func (r *fsmRig) must(body any) {
	r.t.Helper()
	if err, ok := r.apply(body).(error); ok && err != nil {
		r.t.Fatalf("apply %T: %v", body, err)
	}
}

func (r *fsmRig) snap() *state.Snapshot { return r.f.State().Snapshot() }

// events lists the store's events as "type: message".
func (r *fsmRig) events() []string {
	var out []string
	for _, e := range r.snap().Events(nil, "", "") {
		out = append(out, e.Type+": "+e.Message)
	}
	return out
}

func fsmWorkload(name string, prio int) *api.Workload {
	return &api.Workload{Name: name, Priority: prio, SubmitTime: fsmTime, Groups: []*api.TaskGroup{{
		Name: "g", Replicas: 1,
		Tasks: []*api.Task{{Name: "t", Driver: "mock", Command: []string{"sleep"}, Resources: api.Resources{CPUMilli: 1000, MemoryBytes: 1 << 20}}},
	}}}
}

func fsmNode(id string) *api.Node {
	return &api.Node{ID: id, Name: "node-" + id, Status: api.NodeReady, Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 1 << 30}}
}

func fsmEval(id, workload string) *api.Evaluation {
	return &api.Evaluation{ID: id, Workload: workload, Status: api.EvalPending, TriggeredBy: "test"}
}

func fsmAlloc(id, node, workload string, prio int) *api.Allocation {
	return &api.Allocation{ID: id, NodeID: node, NodeName: "node-" + node, Workload: workload, Group: "g", Priority: prio,
		DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning, Resources: api.Resources{CPUMilli: 1000, MemoryBytes: 1 << 20},
		Assignment: api.Assignment{NUMANode: -1}}
}

// baseCell is the state most cases start from: a node, a low-priority
// workload running one allocation on it, and an evaluation of it that
// failed.
func baseCell(r *fsmRig) {
	r.must(&UpsertNode{Node: fsmNode("n1"), Time: fsmTime})
	r.must(&UpsertWorkload{Workload: fsmWorkload("low", 10), Eval: fsmEval("e0", "low")})
	failed := fsmEval("e-failed", "low")
	failed.Status, failed.StatusDescription = api.EvalFailed, "the scheduler panicked: boom\ngoroutine 7 [running]:"
	r.must(&UpsertEvals{Evals: []*api.Evaluation{failed}})
	r.must(&ApplyPlan{Place: []*api.Allocation{fsmAlloc("a1", "n1", "low", 10)}, Time: fsmTime})
}

// TestFSMCommands applies each command type to a small cell and checks
// what it wrote, what it answered and the events it derived (events are
// derived from the state before the change, so they can say what it did).
func TestFSMCommands(t *testing.T) {
	tests := []struct {
		name   string
		body   any
		answer any      // nil: none
		events []string // the events this command added, in order
		check  func(t *testing.T, s *state.Snapshot)
	}{
		{
			name:   "upsert-workload gives the next version",
			body:   &UpsertWorkload{Workload: fsmWorkload("low", 10), Eval: fsmEval("e1", "low")},
			answer: Registered{Version: 2},
			events: []string{"workload-registered: version 2 submitted"},
			check: func(t *testing.T, s *state.Snapshot) {
				if w := s.Workload("", "low"); w.Version != 2 {
					t.Fatalf("version %d, want 2", w.Version)
				}
				if s.Eval("e1") == nil {
					t.Fatal("evaluation not stored")
				}
			},
		},
		{
			name:   "stop-workload",
			body:   &StopWorkload{Name: "low", Eval: fsmEval("e1", "low"), Time: fsmTime},
			answer: Stopped{Found: true},
			events: []string{"workload-stopped: stopped"},
			check: func(t *testing.T, s *state.Snapshot) {
				if !s.Workload("", "low").Stopped {
					t.Fatal("workload not stopped")
				}
			},
		},
		{
			name:   "stop-workload with purge",
			body:   &StopWorkload{Name: "low", Purge: true, Eval: fsmEval("e1", "low"), Time: fsmTime},
			answer: Stopped{Found: true},
			events: []string{"workload-purged: stopped and purged"},
			check: func(t *testing.T, s *state.Snapshot) {
				if s.Workload("", "low") != nil {
					t.Fatal("workload not purged")
				}
			},
		},
		{
			name:   "stop-workload of an unknown workload still stores its evaluation",
			body:   &StopWorkload{Name: "gone", Eval: fsmEval("e1", "gone"), Time: fsmTime},
			answer: Stopped{Found: false},
			events: []string{"workload-stopped: stopped"},
			check: func(t *testing.T, s *state.Snapshot) {
				if s.Eval("e1") == nil {
					t.Fatal("evaluation not stored")
				}
			},
		},
		{
			name:   "upsert-node of a new node",
			body:   &UpsertNode{Node: fsmNode("n2"), Evals: []*api.Evaluation{fsmEval("e1", "low")}, Time: fsmTime},
			events: []string{"node-registered: node node-n2 registered"},
			check: func(t *testing.T, s *state.Snapshot) {
				if s.Node("n2") == nil || s.Eval("e1") == nil {
					t.Fatal("node or its evaluation not stored")
				}
			},
		},
		{
			name: "upsert-node of a known ready node says nothing",
			body: &UpsertNode{Node: fsmNode("n1"), Time: fsmTime},
			check: func(t *testing.T, s *state.Snapshot) {
				if got := s.Node("n1").Allocated.CPUMilli; got != 1000 {
					t.Fatalf("re-registering lost Allocated: %d", got)
				}
			},
		},
		{
			name:   "node-status down",
			body:   &NodeStatus{NodeID: "n1", Status: api.NodeDown, Reason: "missed heartbeats", Evals: []*api.Evaluation{fsmEval("e1", "low")}, Time: fsmTime},
			events: []string{"node-down: node node-n1 down: missed heartbeats"},
			check: func(t *testing.T, s *state.Snapshot) {
				if s.Node("n1").Status != api.NodeDown || s.Eval("e1") == nil {
					t.Fatal("status or evaluation not stored")
				}
			},
		},
		{
			name: "upsert-evals",
			body: &UpsertEvals{Evals: []*api.Evaluation{fsmEval("e1", "low"), fsmEval("e2", "low")}},
			check: func(t *testing.T, s *state.Snapshot) {
				if s.Eval("e1") == nil || s.Eval("e2") == nil {
					t.Fatal("evaluations not stored")
				}
			},
		},
		{
			name: "apply-plan places, preempts and stops",
			body: &ApplyPlan{
				Place: []*api.Allocation{fsmAlloc("b1", "n1", "high", 90), fsmAlloc("b2", "n1", "high", 90)},
				Stop:  []api.StopRequest{{AllocID: "a1", Reason: "preempted by high", PreemptedBy: "b1"}},
				Eval:  &api.Evaluation{ID: "e1", Workload: "high", Status: api.EvalComplete},
				Evals: []*api.Evaluation{fsmEval("e2", "low")},
				Time:  fsmTime,
			},
			events: []string{
				"placed: placed 2 allocation(s) on 1 node(s)",
				"preempted: g[0] (priority 10) on node-n1 preempted by high",
			},
			check: func(t *testing.T, s *state.Snapshot) {
				if a := s.Alloc("a1"); a.DesiredStatus != api.DesiredStop || a.PreemptedBy != "b1" {
					t.Fatalf("victim %s preempted by %q", a.DesiredStatus, a.PreemptedBy)
				}
				if got := s.Node("n1").Allocated.CPUMilli; got != 2000 {
					t.Fatalf("Allocated cpu %d, want the two placements' 2000", got)
				}
				if s.Eval("e1").Status != api.EvalComplete || s.Eval("e2") == nil {
					t.Fatal("evaluations not stored")
				}
			},
		},
		{
			name: "apply-plan of a blocked evaluation says what did not fit",
			body: &ApplyPlan{
				Stop: []api.StopRequest{{AllocID: "a1", Reason: "scaled down"}},
				Eval: &api.Evaluation{ID: "e1", Workload: "low", Status: api.EvalBlocked,
					Failures: []api.GroupFailure{{Group: "g", Missing: 2, Summary: "1 node: insufficient cpu"}}},
				Time: fsmTime,
			},
			events: []string{
				"stopped: stopping 1 allocation(s): scaled down",
				"unplaceable: group g: 2 not placed: 1 node: insufficient cpu",
			},
		},
		{
			name:   "alloc-client-update to failed",
			body:   &AllocClientUpdate{Updates: []*api.AllocUpdate{{ID: "a1", ClientStatus: api.AllocFailed, ClientReason: "exit 1"}}, Time: fsmTime},
			events: []string{"allocation-failed: g[0] on node-n1 failed: exit 1"},
			check: func(t *testing.T, s *state.Snapshot) {
				if a := s.Alloc("a1"); a.ClientStatus != api.AllocFailed {
					t.Fatalf("client status %s", a.ClientStatus)
				}
				if got := s.Node("n1").Allocated.CPUMilli; got != 0 {
					t.Fatalf("a failed allocation still holds %d millicores", got)
				}
			},
		},
		{
			name: "alloc-client-update to running says nothing",
			body: &AllocClientUpdate{Updates: []*api.AllocUpdate{{ID: "a1", ClientStatus: api.AllocRunning}}, Time: fsmTime},
		},
		{
			name:   "set-cell-config",
			body:   &SetCellConfig{Config: &api.CellConfig{SchedulingPolicy: api.PolicySpread}, Time: fsmTime},
			events: []string{"cell-config: " + describeConfig(&api.CellConfig{SchedulingPolicy: api.PolicySpread})},
			check: func(t *testing.T, s *state.Snapshot) {
				if c := s.CellConfig(); c == nil || c.SchedulingPolicy != api.PolicySpread {
					t.Fatalf("cell config %+v", c)
				}
			},
		},
		{
			name: "record-events writes the leader's events as they are",
			body: &RecordEvents{Events: []api.Event{
				{Time: fsmTime, Type: api.EventIncident, Message: "incident 20250105T120000-rack-r3 opened: 12 allocations on 3 nodes of rack r3 failed within 40 s: rack r3"},
				{Time: fsmTime, Type: api.EventAnomaly, Message: "raft commit latency is anomalous"},
			}},
			events: []string{
				"incident: incident 20250105T120000-rack-r3 opened: 12 allocations on 3 nodes of rack r3 failed within 40 s: rack r3",
				"anomaly: raft commit latency is anomalous",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFSMRig(t)
			baseCell(r)
			before := len(r.events())
			answer := r.apply(tt.body)
			if err, ok := answer.(error); ok {
				t.Fatalf("apply: %v", err)
			}
			if answer != tt.answer {
				t.Fatalf("answer %#v, want %#v", answer, tt.answer)
			}
			got := r.events()[before:]
			if strings.Join(got, "\n") != strings.Join(tt.events, "\n") {
				t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.events, "\n"))
			}
			if tt.check != nil {
				tt.check(t, r.snap())
			}
			if got := r.f.AppliedIndex(); got != r.index {
				t.Fatalf("applied index %d, want %d", got, r.index)
			}
		})
	}
}

// TestFSMPlanPartsApplyAsOnePlan: a plan written in parts (the plan
// applier's form) leaves the state the whole plan leaves, and each part's
// events say which part they belong to.
func TestFSMPlanPartsApplyAsOnePlan(t *testing.T) {
	nodes := []string{"n1", "n2", "n3", "n4"}
	var place []*api.Allocation
	for i := range 40 {
		place = append(place, fsmAlloc(fmt.Sprintf("p%02d", i), nodes[i%len(nodes)], "high", 90))
		place[i].Resources = api.Resources{CPUMilli: 10, MemoryBytes: 1 << 10}
	}
	cmd := &ApplyPlan{Place: place, Eval: &api.Evaluation{ID: "e1", Workload: "high", Status: api.EvalComplete}, Time: fsmTime}
	parts, err := PlanParts(cmd, 256, func(string) StoppedAlloc { return StoppedAlloc{} })
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) < 2 {
		t.Fatalf("%d parts: the test needs a plan in several", len(parts))
	}
	whole, inParts := newFSMRig(t), newFSMRig(t)
	for _, r := range []*fsmRig{whole, inParts} {
		baseCell(r)
		for _, id := range nodes[1:] {
			r.must(&UpsertNode{Node: fsmNode(id), Time: fsmTime})
		}
	}
	whole.must(cmd)
	before := len(inParts.events())
	for _, p := range parts {
		if err, ok := inParts.applyData(p).(error); ok {
			t.Fatal(err)
		}
	}
	a, b := whole.snap(), inParts.snap()
	for _, id := range nodes {
		if a.Node(id).Allocated != b.Node(id).Allocated || len(a.AllocsByNode(id)) != len(b.AllocsByNode(id)) {
			t.Fatalf("%s: parts left %+v (%d allocations), the whole plan %+v (%d)", id, b.Node(id).Allocated, len(b.AllocsByNode(id)),
				a.Node(id).Allocated, len(a.AllocsByNode(id)))
		}
	}
	if b.Eval("e1") == nil {
		t.Fatal("the last part did not store the evaluation")
	}
	placed := 0
	for _, e := range inParts.events()[before:] {
		var n, nodes, part, of int
		if _, err := fmt.Sscanf(e, "placed: placed %d allocation(s) on %d node(s) (plan part %d of %d)", &n, &nodes, &part, &of); err != nil ||
			of != len(parts) || part < 1 || part > of {
			t.Fatalf("event %q does not name its part of %d (%v)", e, len(parts), err)
		}
		placed += n
	}
	if placed != len(place) {
		t.Fatalf("the parts' events count %d placements, want %d", placed, len(place))
	}
}

// TestFSMRejectsBadEntries: an entry of an unknown type or with a body
// that does not decode is refused with an error and changes nothing.
func TestFSMRejectsBadEntries(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"unknown type", []byte{0xee, '{', '}'}, "unknown command type"},
		{"undecodable body", append([]byte{byte(Commands.Lookup(3).Value)}, "{not json"...), "decode upsert-node"},
		{"undecodable plan part", append([]byte{byte(planPartValue)}, 0xff, 0x00), "decode apply-plan-part"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFSMRig(t)
			baseCell(r)
			before := r.snap().Index()
			err, _ := r.applyData(tt.data).(error)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if r.snap().Index() != before {
				t.Fatal("a refused entry changed the store")
			}
		})
	}
}

// TestFSMRetriesOnlyFailedEvaluations: a retry of an evaluation that did
// not fail (or is gone) is refused whole: nothing changes, no event.
func TestFSMRetriesOnlyFailedEvaluations(t *testing.T) {
	for _, id := range []string{"e0", "gone"} {
		r := newFSMRig(t)
		baseCell(r)
		before := r.snap().Index()
		err, _ := r.apply(&RetryEval{Eval: fsmEval(id, "low"), Time: fsmTime}).(error)
		if !errors.Is(err, ErrNotFailed) {
			t.Fatalf("retry of %s: %v, want ErrNotFailed", id, err)
		}
		if r.snap().Index() != before {
			t.Fatalf("a refused retry of %s changed the store", id)
		}
	}
}

// TestRecordEventsRefusesOthers: record-events carries only the leader's
// own kinds of event, with a time, a bounded number at once; anything else
// is refused whole and writes nothing.
func TestRecordEventsRefusesOthers(t *testing.T) {
	many := make([]api.Event, MaxRecordedEvents+1)
	for i := range many {
		many[i] = api.Event{Time: fsmTime, Type: api.EventAnomaly, Message: "x"}
	}
	tests := []struct {
		name   string
		events []api.Event
		want   string
	}{
		{"a node's event", []api.Event{{Time: fsmTime, Type: api.EventNodeDown, Message: "forged"}}, `type "node-down" is not recordable`},
		{"no time", []api.Event{{Type: api.EventIncident, Message: "x"}}, "events[0]: no time"},
		{"too many", many, "at most 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFSMRig(t)
			baseCell(r)
			before := len(r.events())
			err, _ := r.apply(&RecordEvents{Events: tt.events}).(error)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if got := len(r.events()); got != before {
				t.Fatalf("%d events written by a refused entry", got-before)
			}
		})
	}
}
