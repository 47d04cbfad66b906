package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
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
