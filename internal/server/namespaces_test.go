package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

func limit64(v int64) *int64 { return &v }
func limitInt(v int) *int    { return &v }

// tenantWorkload is a workload of ns with one group of replicas × (cpu
// millicores, 64Mi), at priority class class.
func tenantWorkload(ns, name, class string, replicas int, cpu int64) string {
	return fmt.Sprintf(`
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s, namespace: %s}
spec:
  priorityClass: %s
  groups:
    - name: g
      replicas: %d
      tasks:
        - {name: t, driver: mock, command: ["x"], resources: {cpu: %dm, memory: 64Mi}}
`, name, ns, class, replicas, cpu)
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
			CPUMilli: limit64(2000), Allocations: limit64(3), GPUMilli: limit64(0), MaxPriority: limitInt(999)}})
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
			wl, err := spec.Parse([]byte(tenantWorkload(tt.ns, "w", tt.class, tt.replicas, tt.cpu)))
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
			var he *httpError
			if !errors.As(err, &he) || he.status != http.StatusBadRequest || len(he.fields) != 1 {
				t.Fatalf("got %v, want a 400 naming %s", err, tt.wantPath)
			}
			if he.fields[0].Path != tt.wantPath || !strings.Contains(he.fields[0].Message, tt.wantSays) {
				t.Fatalf("got %s: %s, want %s saying %q", he.fields[0].Path, he.fields[0].Message, tt.wantPath, tt.wantSays)
			}
		})
	}
}

// TestTwoTenants: two namespaces with quotas on one cell with ACLs. A
// token of team-a can submit and read in team-a only; what it submits
// beyond its quota stays pending with the quota as the reason; team-b's
// workload of the same name is its own; a namespace with workloads cannot
// be deleted.
func TestTwoTenants(t *testing.T) {
	s, management, _ := aclServer(t)
	ctx := context.Background()
	admin := api.NewClient(s.Addr())
	admin.Token = management
	for _, ns := range []*api.Namespace{
		{Name: "team-a", Quota: &api.Quota{CPUMilli: limit64(2000), MaxPriority: limitInt(999)}},
		{Name: "team-b"},
	} {
		if _, err := admin.ApplyNamespace(ctx, ns); err != nil {
			t.Fatalf("apply %s: %v", ns.Name, err)
		}
	}
	addNode(t, s, "n1")
	tokA := tokenWith(t, s, management, &api.ACLPolicy{Name: "team-a", Namespaces: map[string][]string{"team-a": api.NamespaceCapabilities}}, "").SecretID

	// team-a's token in team-b: refused, nothing written.
	before := contentIndex(s)
	for _, req := range [][3]string{
		{"POST", "/v1/workloads?namespace=team-b", tenantWorkload("team-b", "web", "batch", 1, 100)},
		{"GET", "/v1/workloads?namespace=team-b", ""},
		{"GET", "/v1/namespaces/team-b", ""},
		{"DELETE", "/v1/namespaces/team-b", ""},
	} {
		if got := send(t, s, tokA, req[0], req[1], req[2]); got.status != http.StatusForbidden || !strings.Contains(got.msg, "team-b") && !strings.Contains(got.msg, "cell") {
			t.Fatalf("%s %s with team-a's token: %+v, want 403", req[0], req[1], got)
		}
	}
	if contentIndex(s) != before {
		t.Fatal("a refused request wrote the state")
	}
	// A spec naming team-b sent in team-a is refused by name.
	if got := send(t, s, tokA, "POST", "/v1/workloads?namespace=team-a", tenantWorkload("team-b", "web", "batch", 1, 100)); got.status != http.StatusBadRequest || got.code != "namespace-mismatch" {
		t.Fatalf("spec of team-b sent to team-a: %+v", got)
	}
	// Above the quota's priority: refused with the field.
	if got := send(t, s, tokA, "POST", "/v1/workloads?namespace=team-a", tenantWorkload("team-a", "web", "production", 1, 100)); got.status != http.StatusBadRequest || !strings.Contains(got.msg, "spec.priority") {
		t.Fatalf("production in team-a: %+v", got)
	}

	// A quota of 2 cores: web's two replicas of 1 core run, then api's one
	// waits for the quota (each fits it alone, so both are admitted).
	a := api.NewClient(s.Addr())
	a.Token, a.Namespace = tokA, "team-a"
	if _, err := a.RegisterWorkload(ctx, []byte(tenantWorkload("team-a", "web", "batch", 2, 1000))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "team-a's web placed", func() error {
		allocs, _, err := a.Allocations(ctx, "web", nil)
		if err == nil && len(allocs) != 2 {
			err = fmt.Errorf("%d allocations, want 2", len(allocs))
		}
		return err
	})
	if _, err := a.RegisterWorkload(ctx, []byte(tenantWorkload("team-a", "api", "batch", 1, 1000))); err != nil {
		t.Fatal(err)
	}
	b := api.NewClient(s.Addr())
	b.Token, b.Namespace = management, "team-b"
	if _, err := b.RegisterWorkload(ctx, []byte(tenantWorkload("team-b", "web", "batch", 3, 1000))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "team-a's api pending on its quota", func() error {
		st, _, err := a.WorkloadStatus(ctx, "api", nil)
		if err != nil {
			return err
		}
		// What `strata status` shows for the group.
		if f := st.Groups[0].Failure; f != nil && f.Missing == 1 && strings.Contains(f.Summary, "namespace team-a over quota.cpuMilli: 3000 needed, 2000 allowed") {
			return nil
		}
		return fmt.Errorf("the group's failure does not name the quota: %+v", st.Groups[0].Failure)
	})
	waitFor(t, 10*time.Second, "team-b's web placed in full", func() error {
		allocs, _, err := b.Allocations(ctx, "web", nil)
		if err != nil {
			return err
		}
		if len(allocs) != 3 {
			return fmt.Errorf("%d allocations, want 3", len(allocs))
		}
		for _, al := range allocs {
			if al.Namespace != "team-b" {
				return fmt.Errorf("allocation %s in %q", al.ID, al.Namespace)
			}
		}
		return nil
	})
	// team-a sees its usage; an allocation of team-b is not found by id in team-a.
	ns, err := a.NamespaceStatus(ctx, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	if ns.Usage.CPUMilli != 2000 || ns.Usage.Allocations != 2 || ns.Workloads != 2 {
		t.Fatalf("team-a usage %+v, %d workloads", ns.Usage, ns.Workloads)
	}
	bAllocs, _, _ := b.Allocations(ctx, "web", nil)
	if _, err := a.Allocation(ctx, bAllocs[0].ID); !api.IsNotFound(err) {
		t.Fatalf("team-b's allocation read in team-a: %v, want not found", err)
	}
	// A namespace with workloads is not deleted.
	if err := admin.DeleteNamespace(ctx, "team-b"); err == nil || !strings.Contains(err.Error(), "holds 1 workload") {
		t.Fatalf("delete team-b with a workload: %v", err)
	}
}

// TestBrokerKeepsNamespacesApart: evaluations of workloads of one name in
// two namespaces neither serialize nor supersede each other.
func TestBrokerKeepsNamespacesApart(t *testing.T) {
	b := newEvalBroker()
	b.SetEnabled(true)
	a, other := ev("a", "web", 100, 1), ev("b", "web", 100, 2)
	a.Namespace, other.Namespace = "team-a", "team-b"
	b.Enqueue(a)
	b.Enqueue(other)
	got := map[string]bool{dequeue(t, b).ID: true, dequeue(t, b).ID: true}
	if !got["a"] || !got["b"] {
		t.Fatalf("dequeued %v, want both a and b", got)
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
		wl, err := spec.Parse([]byte(tenantWorkload(ns, "w", "batch", 1, 100)))
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
		var he *httpError
		if !errors.As(err, &he) || he.code != "root-not-allowed" || len(he.fields) != 1 || he.fields[0].Path != "spec.groups[0].tasks[0].user" {
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
