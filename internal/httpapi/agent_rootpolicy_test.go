package httpapi

import (
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// TestAgentsLearnTheNamespacesRootPolicy: the copies of allocations sent
// to agents carry their namespace's root policy (issue 18 defect 3: the
// node could not refuse what only it resolves to root, such as an image
// without a user); the stored allocation is untouched.
func TestAgentsLearnTheNamespacesRootPolicy(t *testing.T) {
	st := state.New()
	if err := st.Write(1, func(w *state.WriteTxn) error {
		if err := w.UpsertNamespace(&api.Namespace{Name: "locked"}); err != nil {
			return err
		}
		return w.UpsertNamespace(&api.Namespace{Name: "trusted", AllowRootTasks: true})
	}); err != nil {
		t.Fatal(err)
	}
	snap := st.Snapshot()
	for _, tt := range []struct {
		ns   string
		want bool
	}{{"locked", false}, {"trusted", true}, {"", true}, {api.DefaultNamespace, true}, {"gone", false}} {
		stored := &api.Allocation{ID: "a", Namespace: tt.ns, AllowRootTasks: !tt.want}
		got := withRootPolicy(snap, stored)
		if got.AllowRootTasks != tt.want {
			t.Errorf("namespace %q: AllowRootTasks %v, want %v", tt.ns, got.AllowRootTasks, tt.want)
		}
		if stored.AllowRootTasks == tt.want {
			t.Errorf("namespace %q: the stored allocation was changed", tt.ns)
		}
	}
	// A record for the default namespace takes its policy from the record.
	if err := st.Write(2, func(w *state.WriteTxn) error {
		return w.UpsertNamespace(&api.Namespace{Name: api.DefaultNamespace})
	}); err != nil {
		t.Fatal(err)
	}
	if withRootPolicy(st.Snapshot(), &api.Allocation{ID: "a"}).AllowRootTasks {
		t.Error("the default namespace's record without allowRootTasks still allows root")
	}
}
