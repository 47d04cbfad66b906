package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
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

// TestRefusedAnonymousRequestsKeepTheAuditTrail reproduces issue 18's
// defect 8: 10,100 refused anonymous POSTs in 2.6 s pushed every real
// entry out of the 10,000-entry audit log, so anyone could erase it.
// Refusals of callers who proved no identity are aggregated (one entry
// per source, request and result in a window, with a count), bounded
// apart from the rest and rate-limited: the authenticated history stays,
// and the refusals are still all counted.
func TestRefusedAnonymousRequestsKeepTheAuditTrail(t *testing.T) {
	s, management, _ := aclServer(t)
	admin := api.NewClient(s.Addr())
	admin.Token = management
	deployer := tokenWith(t, s, management, &api.ACLPolicy{Name: "deployer", Namespaces: map[string][]string{"default": {api.CapSubmit}}}, "")
	for i := range 3 {
		if got := send(t, s, deployer.SecretID, "POST", "/v1/workloads", fmt.Sprintf(oneReplica, fmt.Sprintf("w%d", i))); got.status != http.StatusOK {
			t.Fatalf("register: %+v", got)
		}
	}
	const flood = state.MaxAudit + 100
	var wg sync.WaitGroup
	next := make(chan int)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				path := "/v1/workloads"
				if i%2 == 1 {
					path = fmt.Sprintf("/v1/nodes/n%d/drain", i) // a path of its own each time
				}
				resp, err := client.Post(s.Addr()+path, "application/yaml", strings.NewReader("x"))
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	for i := range flood {
		next <- i
	}
	close(next)
	wg.Wait()

	// Every refusal is counted; every authenticated write is still there.
	var log []*api.AuditEntry
	waitFor(t, 20*time.Second, "the flood's refusals counted", func() error {
		var err error
		if log, err = admin.Audit(context.Background(), time.Time{}, ""); err != nil {
			return err
		}
		refused := 0
		for _, e := range log {
			if e.Who == "anonymous" && e.Status != http.StatusOK {
				refused += max(e.Count, 1)
			}
		}
		if refused < flood {
			return fmt.Errorf("%d refusals counted of %d", refused, flood)
		}
		return nil
	})
	mine, unproven := 0, 0
	for _, e := range log {
		switch {
		case e.Accessor == deployer.AccessorID:
			mine++
		case e.Who == "anonymous" && e.Status != http.StatusOK:
			unproven++
			if !e.Unproven {
				t.Errorf("an anonymous refusal kept with the authenticated history: %+v", e)
			}
		}
	}
	if mine != 3 {
		t.Errorf("%d of the deployer's 3 writes left in the audit log after %d anonymous refusals", mine, flood)
	}
	if unproven > state.MaxAuditUnproven {
		t.Errorf("%d entries for anonymous refusals, more than their bound %d", unproven, state.MaxAuditUnproven)
	}
	t.Logf("%d anonymous refusals kept as %d entries", flood, unproven)
}
