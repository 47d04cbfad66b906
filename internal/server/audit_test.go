package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/state"
)

// TestAuditLog: every write, allowed or refused, by a token, a node or
// nobody, is in the audit log with who, what, when, from where and the
// result; reads are not; ?who and ?since select entries.
func TestAuditLog(t *testing.T) {
	s, management, _ := aclServer(t)
	start := time.Now().Add(-time.Second)
	deployer := tokenWith(t, s, management, &api.ACLPolicy{Name: "deployer", Namespaces: map[string][]string{"default": {api.CapSubmit, api.CapRead}}}, "")
	send(t, s, "", "POST", "/v1/workloads", fmt.Sprintf(oneReplica, "anon"))                 // refused: no token
	send(t, s, deployer.SecretID, "POST", "/v1/workloads", fmt.Sprintf(oneReplica, "w"))     // allowed
	send(t, s, deployer.SecretID, "PUT", "/v1/cell/config", "kind: CellConfig")              // refused: no cell-manage
	send(t, s, deployer.SecretID, "GET", "/v1/workloads", "")                                // a read: not audited
	agentRequest(t, s, "POST", "/v1/agent/allocations", `{"updates":[]}`, map[string]string{ // refused: forged node
		api.HeaderNodeID: "n1", api.HeaderNodeSecret: nodeauth.NewSecret()})

	admin := api.NewClient(s.Addr())
	admin.Token = management
	want := []struct{ who, method, path, result string }{
		{"anonymous", "POST", "/v1/workloads", "acl-no-token"},
		{"token " + deployer.AccessorID + " (holder of deployer)", "POST", "/v1/workloads", "ok"},
		{"token " + deployer.AccessorID + " (holder of deployer)", "PUT", "/v1/cell/config", "acl-denied"},
		{"anonymous (claims node n1)", "POST", "/v1/agent/allocations", "node-unknown"},
	}
	var got []*api.AuditEntry
	deadline := time.Now().Add(10 * time.Second)
	for {
		all, err := admin.Audit(context.Background(), start, "")
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, e := range all {
			if e.Path != "/v1/acl/policies" && e.Path != "/v1/acl/tokens" && e.Path != "/v1/acl/bootstrap" {
				got = append(got, e)
			}
		}
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(got) != len(want) {
		for _, e := range got {
			t.Logf("%+v", e)
		}
		t.Fatalf("%d audit entries, want %d", len(got), len(want))
	}
	for i, w := range want {
		e := got[i]
		if e.Who != w.who || e.Method != w.method || e.Path != w.path || e.Result != w.result || e.From != "127.0.0.1" || e.Time.Before(start) || e.Index == 0 {
			t.Errorf("entry %d: %+v, want %+v from 127.0.0.1", i, e, w)
		}
	}
	mine, err := admin.Audit(context.Background(), time.Time{}, deployer.AccessorID)
	if err != nil || len(mine) != 2 {
		t.Fatalf("?who=%s: %d entries, %v; want 2", deployer.AccessorID, len(mine), err)
	}
	later, err := admin.Audit(context.Background(), time.Now().Add(time.Hour), "")
	if err != nil || len(later) != 0 {
		t.Fatalf("?since an hour ahead: %d entries, %v", len(later), err)
	}
	// Reading the audit log needs acl-admin.
	if got := send(t, s, deployer.SecretID, "GET", "/v1/audit", ""); got.status != http.StatusForbidden || !strings.Contains(got.msg, "acl-admin") {
		t.Fatalf("audit as a deployer: %+v", got)
	}
}

// TestAuditLogIsBounded: the store keeps the newest MaxAudit entries.
func TestAuditLogIsBounded(t *testing.T) {
	st := state.New()
	for i := range 3 {
		batch := make([]*api.AuditEntry, state.MaxAudit/2+1)
		for j := range batch {
			batch[j] = &api.AuditEntry{Who: fmt.Sprintf("b%d-%d", i, j)}
		}
		if err := st.Write(uint64(i+1), func(w *state.WriteTxn) error { return w.AppendAudit(batch) }); err != nil {
			t.Fatal(err)
		}
	}
	log := st.Snapshot().Audit(nil)
	if len(log) != state.MaxAudit || log[len(log)-1].Who != fmt.Sprintf("b2-%d", state.MaxAudit/2) {
		t.Fatalf("%d entries kept (last %+v), want the newest %d", len(log), log[len(log)-1], state.MaxAudit)
	}
	restored, err := state.Restore(st.Snapshot().Dump())
	if err != nil || len(restored.Snapshot().Audit(nil)) != state.MaxAudit {
		t.Fatalf("restored audit log: %v", err)
	}
}
