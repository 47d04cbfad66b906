package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// ptr points at a copy of v (a quota's limits are pointers).
func ptr[T any](v T) *T { return &v }

// tenantWorkload is workload w of ns with one group of replicas × (cpu
// millicores, 64Mi), at priority class class.
func tenantWorkload(ns, class string, replicas int, cpu int64) string {
	return fmt.Sprintf(`{"apiVersion": "strata.dev/v1", "kind": "Workload", "metadata": {"name": "w", "namespace": %q},
		"spec": {"priorityClass": %q, "groups": [{"name": "g", "replicas": %d,
		"tasks": [{"name": "t", "driver": "mock", "command": ["x"], "resources": {"cpu": "%dm", "memory": "64Mi"}}]}]}}`, ns, class, replicas, cpu)
}

// TestAdmitToNamespace: a workload is refused at submission, with the
// field named, when its namespace does not exist, its priority is above
// the quota's maxPriority, or its groups can never fit the quota.
func TestAdmitToNamespace(t *testing.T) {
	st := state.New()
	if err := st.Write(1, func(w *state.WriteTxn) error {
		if err := w.UpsertNamespace(&api.Namespace{Name: "open"}); err != nil {
			return err
		}
		return w.UpsertNamespace(&api.Namespace{Name: "small", Quota: &api.Quota{
			CPUMilli: ptr[int64](2000), Allocations: ptr[int64](3), GPUMilli: ptr[int64](0), MaxPriority: ptr(999)}})
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, ns, class string
		replicas        int
		cpu             int64
		wantPath        string // "" admitted
		wantSays        string
	}{
		{"default namespace always exists", "default", "batch", 10, 1000, "", ""},
		{"unbounded namespace", "open", "production", 10, 1000, "", ""},
		{"within quota", "small", "batch", 2, 1000, "", ""},
		{"unknown namespace", "nope", "batch", 1, 100, "metadata.namespace", `namespace "nope" does not exist`},
		{"priority above the quota", "small", "production", 1, 100, "spec.priority", "priority 1000 (class production) is above namespace \"small\"'s quota.maxPriority 999"},
		{"one replica never fits", "small", "batch", 1, 3000, "spec.groups[0]", "quota.cpuMilli: 3000 needed, 2000 allowed"},
		{"all replicas never fit", "small", "batch", 4, 100, "spec.groups[0].replicas", "quota.allocations: 4 needed, 3 allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wl, err := spec.Parse([]byte(tenantWorkload(tt.ns, tt.class, tt.replicas, tt.cpu)))
			if err != nil {
				t.Fatal(err)
			}
			err = admitToNamespace(st.Snapshot(), wl)
			if tt.wantPath == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var he *route.Error
			if !errors.As(err, &he) || he.Status != http.StatusBadRequest || len(he.Fields) != 1 {
				t.Fatalf("got %v, want a 400 naming %s", err, tt.wantPath)
			}
			if he.Fields[0].Path != tt.wantPath || !strings.Contains(he.Fields[0].Message, tt.wantSays) {
				t.Fatalf("got %s: %s, want %s saying %q", he.Fields[0].Path, he.Fields[0].Message, tt.wantPath, tt.wantSays)
			}
		})
	}
}

// TestRootTasksNeedTheNamespacesConsent: a task asking for root is
// refused at submission, naming its user field, unless its namespace
// allows root tasks; the default namespace allows them until a record
// for it is applied.
func TestRootTasksNeedTheNamespacesConsent(t *testing.T) {
	st := state.New()
	if err := st.Write(1, func(w *state.WriteTxn) error {
		if err := w.UpsertNamespace(&api.Namespace{Name: "locked"}); err != nil {
			return err
		}
		return w.UpsertNamespace(&api.Namespace{Name: "trusted", AllowRootTasks: true})
	}); err != nil {
		t.Fatal(err)
	}
	withUser := func(ns, user string) *api.Workload {
		wl, err := spec.Parse([]byte(tenantWorkload(ns, "batch", 1, 100)))
		if err != nil {
			t.Fatal(err)
		}
		wl.Groups[0].Tasks[0].User = user
		return wl
	}
	tests := []struct {
		ns, user string
		refused  bool
	}{
		{"locked", "root", true},
		{"locked", "0", true},
		{"locked", "root:wheel", true},
		{"locked", "0:0", true},
		{"locked", "nobody", false},
		{"locked", "", false},
		{"locked", "00", true}, // uid 0 to every node that reads it as a number
		{"locked", "+0", true}, // strconv.Atoi's spelling of 0 (exec and containerd parse so)
		{"locked", "000:65534", true},
		{"locked", "65534:0", true}, // gid 0: root's group, refused the same way
		{"locked", "1000:0", true},
		{"locked", "nobody:root", true},
		{"locked", "nobody:00", true},
		{"locked", "65534:65534", false},
		{"locked", "rooty", false},
		{"locked", "nobody:rooty", false},
		{"trusted", "root", false},
		{"default", "root", false},
	}
	for _, tt := range tests {
		err := admitToNamespace(st.Snapshot(), withUser(tt.ns, tt.user))
		if !tt.refused {
			if err != nil {
				t.Errorf("user %q in %s: refused: %v", tt.user, tt.ns, err)
			}
			continue
		}
		var he *route.Error
		if !errors.As(err, &he) || he.Code != "root-not-allowed" || len(he.Fields) != 1 || he.Fields[0].Path != "spec.groups[0].tasks[0].user" {
			t.Errorf("user %q in %s: %v, want root-not-allowed naming spec.groups[0].tasks[0].user", tt.user, tt.ns, err)
		}
	}
	// A record for default withdraws its consent.
	if err := st.Write(2, func(w *state.WriteTxn) error { return w.UpsertNamespace(&api.Namespace{Name: "default"}) }); err != nil {
		t.Fatal(err)
	}
	if err := admitToNamespace(st.Snapshot(), withUser("default", "root")); err == nil {
		t.Error("root admitted in a default namespace applied without allowRootTasks")
	}
}
