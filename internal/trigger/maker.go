package trigger

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/strata-dev/strata/api"
)

// Maker makes evaluations and the commands that carry them. Its clock and
// id source are the proposer's: every time and id a command holds is
// stamped here, before it is proposed, never in the FSM.
type Maker struct {
	Now   func() time.Time
	NewID func() string
}

// NewMaker is a Maker on the clock now and random ids.
func NewMaker(now func() time.Time) *Maker { return &Maker{Now: now, NewID: NewID} }

// Eval is one pending evaluation of a workload.
func (m *Maker) Eval(ns, workload string, priority int, trigger, nodeID string) *api.Evaluation {
	return &api.Evaluation{ID: m.NewID(), Namespace: api.NamespaceOf(ns), Workload: workload, Priority: priority, TriggeredBy: trigger,
		NodeID: nodeID, Status: api.EvalPending, CreateTime: m.Now()}
}

// workloadKey is a workload's identity.
type workloadKey struct{ ns, name string }

func keyOf(a *api.Allocation) workloadKey {
	return workloadKey{api.NamespaceOf(a.Namespace), a.Workload}
}

// ForAllocs makes one pending evaluation per workload with a live
// allocation among allocs: what a node's allocations need when the node
// goes down, comes back, is drained, quarantined or purged.
func (m *Maker) ForAllocs(allocs []*api.Allocation, trigger, nodeID string) []*api.Evaluation {
	seen := map[workloadKey]bool{}
	var evals []*api.Evaluation
	for _, a := range allocs {
		if a.Terminal() || seen[keyOf(a)] {
			continue
		}
		seen[keyOf(a)] = true
		evals = append(evals, m.Eval(a.Namespace, a.Workload, a.Priority, trigger, nodeID))
	}
	return evals
}

// Preempted makes one evaluation per workload, other than the plan's own
// (ns, workload), whose allocations a plan preempted: each gets a
// replacement when capacity allows (blocked until then).
func (m *Maker) Preempted(ns, workload string, victims []*api.Allocation) []*api.Evaluation {
	own := workloadKey{api.NamespaceOf(ns), workload}
	seen := map[workloadKey]bool{}
	var evals []*api.Evaluation
	for _, a := range victims {
		if k := keyOf(a); k != own && !seen[k] {
			seen[k] = true
			evals = append(evals, m.Eval(a.Namespace, a.Workload, a.Priority, api.TriggerPreemption, ""))
		}
	}
	return evals
}

// NewID returns a random UUID-formatted id. Only proposers call it.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
