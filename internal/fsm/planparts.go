package fsm

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/strata-dev/strata/api"
)

// A committed plan goes to raft in parts (apply-plan-part) of about
// MaxPlanPartBytes each, in a compact form: what a part's allocations share
// (the group spec, workload, version, resources, statuses, time) is written
// once per part as a template, and each allocation adds only its id,
// replica index, node and, where it differs, its hardware assignment. A
// plan of 100,000 replicas was one 102 MB entry; it is now a few entries of
// about a MiB, some 50 bytes per allocation.
//
// Parts are cut between units that must commit together:
//   - a node's placements and the stops on that node (the plan applier
//     checked the placements counting those stops as freed);
//   - every placement of a gang group (invariant 4: never a partial gang);
//   - a preemptor and its victims, wherever they run;
//   - every stop of one gang's members (evicting a gang evicts it whole).
//
// Each part is one FSM transaction. The evaluation's outcome rides in the
// last part, so a leader that fails between parts leaves the evaluation
// pending with whole units committed; the next leader re-runs it on the
// state it finds, as it re-runs any plan the applier committed in part.
// A unit larger than MaxPlanPartBytes (a gang of many thousands) is one
// part of its own.

// MaxPlanPartBytes is the size the plan applier aims its entries at.
const MaxPlanPartBytes = 1 << 20

// partOverhead bounds what an entry holds besides its records: the type
// byte, part numbers, time and JSON framing.
const partOverhead = 128

// planPartEntry is the wire form of one part. The encoder fills the raw
// fields with JSON it made once per record; planPartWire reads the same
// shape.
type planPartEntry struct {
	Part  int `json:"part"`  // 1..Parts
	Parts int `json:"parts"` // entries the plan was written in
	// Templates are the shared parts of this entry's allocations, by the
	// plan's template number.
	Templates map[int]json.RawMessage `json:"templates,omitempty"`
	Nodes     []json.RawMessage       `json:"nodes,omitempty"` // nodePlacements
	Stop      []json.RawMessage       `json:"stop,omitempty"`  // api.StopRequest
	Eval      *api.Evaluation         `json:"eval,omitempty"`
	Evals     []*api.Evaluation       `json:"evals,omitempty"`
	Time      time.Time               `json:"time"`
	// Deployment and InPlace ride with the outcome, in the last part.
	Deployment *api.DeploymentProgress `json:"deployment,omitempty"`
	InPlace    []api.InPlaceUpdate     `json:"inPlace,omitempty"`
}

type planPartWire struct {
	Part      int                     `json:"part"`
	Parts     int                     `json:"parts"`
	Templates map[int]*api.Allocation `json:"templates"`
	Nodes     []nodePlacements        `json:"nodes"`
	Stop      []api.StopRequest       `json:"stop"`
	Eval      *api.Evaluation         `json:"eval"`
	Evals     []*api.Evaluation       `json:"evals"`
	Time      time.Time               `json:"time"`

	Deployment *api.DeploymentProgress `json:"deployment"`
	InPlace    []api.InPlaceUpdate     `json:"inPlace"`
}

// nodePlacements are one node's placements of a part.
type nodePlacements struct {
	Node   string        `json:"n"`
	Name   string        `json:"nn,omitempty"`
	Allocs []placedAlloc `json:"a"`
}

// placedAlloc is what one allocation adds to its template.
type placedAlloc struct {
	Template   int             `json:"t"`
	ID         string          `json:"id"`
	Index      int             `json:"i,omitempty"`
	Assignment *api.Assignment `json:"as,omitempty"` // nil: the template's
	Previous   string          `json:"p,omitempty"`
}

// templateKey is what allocations sharing a template have in common:
// every field except the per-instance ones.
type templateKey struct {
	namespace              string
	workload, group        string
	version                uint64
	priority               int
	spec                   *api.TaskGroup
	resources              api.Resources
	desired, desiredReason string
	client, clientReason   string
	preemptedBy            string
	created                time.Time
	// own makes an allocation with task states its own template (never
	// in a plan the scheduler makes, but the encoding stays lossless).
	own *api.Allocation
}

func keyOf(a *api.Allocation) templateKey {
	k := templateKey{namespace: a.Namespace, workload: a.Workload, group: a.Group, version: a.WorkloadVersion, priority: a.Priority,
		spec: a.TaskGroup, resources: a.Resources, desired: a.DesiredStatus, desiredReason: a.DesiredReason,
		client: a.ClientStatus, clientReason: a.ClientReason, preemptedBy: a.PreemptedBy, created: a.CreateTime}
	if a.TaskStates != nil || a.CreateIndex != 0 || a.ModifyIndex != 0 {
		k.own = a
	}
	return k
}

// planUnit is a set of records that must commit in one entry.
type planUnit struct {
	first     string // its smallest key, for a stable order
	nodes     []json.RawMessage
	stops     []json.RawMessage
	templates []int             // template numbers its placements use
	victims   []string          // workloads it evicts allocations of
	evals     []*api.Evaluation // the re-evaluations of victims it carries
	bytes     int
}

// StoppedAlloc is what PlanParts needs to know of a stopped allocation,
// read from the state the plan was checked against.
type StoppedAlloc struct {
	Workload, Node string
	// Gang is the allocation's gang (GangKey), empty for none.
	Gang string
}

// GangKey names the gang an allocation of group belongs to, or "".
func GangKey(workload string, tg *api.TaskGroup) string {
	if tg == nil || tg.Gang == nil {
		return ""
	}
	return "gang\x00" + workload + "\x00" + tg.Name
}

// PlanParts encodes the committed part of a plan (cmd) as entries of about
// limit bytes each, cut between units (see the top of this file). stopped
// describes a stopped allocation. Every entry is an apply-plan-part; the
// evaluation's outcome is in the last. Proposer.ProposePlan commits them.
func PlanParts(cmd *ApplyPlan, limit int, stopped func(allocID string) StoppedAlloc) ([][]byte, error) {
	// Units are the classes of a union-find over keys: node ids, gangs,
	// and stops of allocations the state no longer knows.
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		p, ok := parent[x]
		if !ok {
			parent[x] = x
			return x
		}
		if p == x {
			return x
		}
		r := find(p)
		parent[x] = r
		return r
	}
	union := func(a, b string) {
		ra, rb := find(a), find(b)
		switch {
		case ra < rb:
			parent[rb] = ra
		case rb < ra:
			parent[ra] = rb
		}
	}
	byNode := map[string][]*api.Allocation{}
	allocNode := make(map[string]string, len(cmd.Place))
	for _, a := range cmd.Place {
		byNode[a.NodeID] = append(byNode[a.NodeID], a)
		allocNode[a.ID] = a.NodeID
		find(a.NodeID)
		if g := GangKey(a.Workload, a.TaskGroup); g != "" {
			union(a.NodeID, g)
		}
	}
	stopKey := make([]string, len(cmd.Stop))
	victims := make([]StoppedAlloc, len(cmd.Stop))
	for i, st := range cmd.Stop {
		v := stopped(st.AllocID)
		victims[i] = v
		key := v.Node
		if key == "" {
			key = "\x00stop\x00" + st.AllocID
		}
		stopKey[i] = key
		find(key)
		if node, ok := allocNode[st.PreemptedBy]; ok && st.PreemptedBy != "" {
			union(key, node)
		}
		if v.Gang != "" {
			union(key, v.Gang)
		}
	}

	units := map[string]*planUnit{}
	unitOf := func(key string) *planUnit {
		root := find(key)
		u := units[root]
		if u == nil {
			u = &planUnit{first: root}
			units[root] = u
		}
		return u
	}
	// Templates, numbered in order of first use.
	var templates []json.RawMessage
	var templateOf []*api.Allocation
	numbers := map[templateKey]int{}
	nodeIDs := make([]string, 0, len(byNode))
	for id := range byNode {
		nodeIDs = append(nodeIDs, id)
	}
	sort.Strings(nodeIDs)
	for _, id := range nodeIDs {
		allocs := byNode[id]
		np := nodePlacements{Node: id, Name: allocs[0].NodeName, Allocs: make([]placedAlloc, len(allocs))}
		u := unitOf(id)
		for j, a := range allocs {
			k := keyOf(a)
			n, ok := numbers[k]
			if !ok {
				n = len(templates)
				numbers[k] = n
				t := *a
				t.ID, t.Index, t.NodeID, t.NodeName, t.PreviousAlloc = "", 0, "", "", ""
				raw, err := json.Marshal(&t)
				if err != nil {
					return nil, fmt.Errorf("encode plan template: %w", err)
				}
				templates = append(templates, raw)
				templateOf = append(templateOf, &t)
			}
			pa := placedAlloc{Template: n, ID: a.ID, Index: a.Index, Previous: a.PreviousAlloc}
			if !sameAssignment(a.Assignment, templateOf[n].Assignment) {
				as := a.Assignment
				pa.Assignment = &as
			}
			np.Allocs[j] = pa
			if !slices.Contains(u.templates, n) {
				u.templates = append(u.templates, n)
			}
		}
		raw, err := json.Marshal(&np)
		if err != nil {
			return nil, fmt.Errorf("encode placements on %s: %w", id, err)
		}
		u.nodes = append(u.nodes, raw)
		u.bytes += len(raw) + 1
	}
	for i, st := range cmd.Stop {
		raw, err := json.Marshal(&st)
		if err != nil {
			return nil, fmt.Errorf("encode stop of %s: %w", st.AllocID, err)
		}
		u := unitOf(stopKey[i])
		u.stops = append(u.stops, raw)
		u.bytes += len(raw) + 1
		if st.PreemptedBy != "" && victims[i].Workload != "" && !slices.Contains(u.victims, victims[i].Workload) {
			u.victims = append(u.victims, victims[i].Workload)
		}
	}
	ordered := make([]*planUnit, 0, len(units))
	for _, u := range units {
		ordered = append(ordered, u)
	}
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].first < ordered[j].first })

	// Pack the units greedily into parts.
	var parts []*planPartEntry
	var cur *planPartEntry
	size := 0
	cost := func(u *planUnit) int {
		c := u.bytes
		for _, n := range u.templates {
			if cur == nil || cur.Templates[n] == nil {
				c += len(templates[n]) + 8
			}
		}
		return c
	}
	evalBytes := func(e *api.Evaluation) int {
		if e == nil {
			return 0
		}
		b, _ := json.Marshal(e)
		return len(b) + 1
	}
	// A victim's workload is re-evaluated by the entry that evicts it (the
	// first to, in order), so a leader that fails between parts strands
	// no victim.
	assigned := map[*api.Evaluation]bool{}
	for _, u := range ordered {
		for _, e := range cmd.Evals {
			if !assigned[e] && slices.Contains(u.victims, e.Workload) {
				u.evals = append(u.evals, e)
				u.bytes += evalBytes(e)
				assigned[e] = true
			}
		}
	}
	newPart := func() {
		cur = &planPartEntry{Templates: map[int]json.RawMessage{}, Time: cmd.Time}
		parts = append(parts, cur)
		size = partOverhead
	}
	for _, u := range ordered {
		c := cost(u)
		if cur == nil || (size > partOverhead && size+c > limit) {
			newPart()
			c = cost(u)
		}
		for _, n := range u.templates {
			cur.Templates[n] = templates[n]
		}
		cur.Nodes = append(cur.Nodes, u.nodes...)
		cur.Stop = append(cur.Stop, u.stops...)
		cur.Evals = append(cur.Evals, u.evals...)
		size += c
	}
	// The outcome (and any evaluation no unit claimed) goes last, in an
	// entry of its own if it would push the last one over the limit.
	tail := evalBytes(cmd.Eval)
	for _, e := range cmd.Evals {
		if !assigned[e] {
			tail += evalBytes(e)
		}
	}
	if cur == nil || (size > partOverhead && size+tail > limit) {
		newPart()
	}
	cur.Eval = cmd.Eval
	cur.Deployment = cmd.Deployment
	cur.InPlace = cmd.InPlace
	for _, e := range cmd.Evals {
		if !assigned[e] {
			cur.Evals = append(cur.Evals, e)
		}
	}
	out := make([][]byte, len(parts))
	for i, p := range parts {
		p.Part, p.Parts = i+1, len(parts)
		if len(p.Templates) == 0 {
			p.Templates = nil
		}
		buf, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", Commands.Name(planPartValue), err)
		}
		out[i] = append([]byte{byte(planPartValue)}, buf...)
	}
	return out, nil
}

func sameAssignment(a, b api.Assignment) bool {
	return a.NUMANode == b.NUMANode && a.GPUMilli == b.GPUMilli && slices.Equal(a.CPUs, b.CPUs) && slices.Equal(a.GPUs, b.GPUs) &&
		slices.Equal(a.Ports, b.Ports) && slices.Equal(a.Devices, b.Devices)
}

// decodePlanPart reads one apply-plan-part entry back into the plan
// command the FSM applies. Allocations of one template share its decoded
// group spec; the FSM then shares it with the store's (state.ShareGroups).
func decodePlanPart(data []byte) (*ApplyPlan, error) {
	var p planPartWire
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	cmd := &ApplyPlan{Stop: p.Stop, Eval: p.Eval, Evals: p.Evals, Time: p.Time, Part: p.Part, Parts: p.Parts, Deployment: p.Deployment, InPlace: p.InPlace}
	count := 0
	for _, np := range p.Nodes {
		count += len(np.Allocs)
	}
	cmd.Place = make([]*api.Allocation, 0, count)
	for _, np := range p.Nodes {
		for _, pa := range np.Allocs {
			t := p.Templates[pa.Template]
			if t == nil {
				return nil, fmt.Errorf("allocation %s names template %d, which the entry lacks", pa.ID, pa.Template)
			}
			a := *t
			a.ID, a.Index, a.NodeID, a.NodeName, a.PreviousAlloc = pa.ID, pa.Index, np.Node, np.Name, pa.Previous
			if pa.Assignment != nil {
				a.Assignment = *pa.Assignment
			}
			cmd.Place = append(cmd.Place, &a)
		}
	}
	return cmd, nil
}
