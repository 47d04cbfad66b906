package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
)

// TestEventsFollowTheReadersCapabilities reproduces issue 18's defect 13
// (part): a token limited to one namespace read the cell's own events
// (nodes registering, going down, the cell's configuration), and health
// events of another namespace's allocations showed in the default
// namespace (they carried no namespace). Every event is now in the
// namespace of its workload, and an event of no workload is the cell's:
// served only to a caller with read on the cell.
func TestEventsFollowTheReadersCapabilities(t *testing.T) {
	s, management, _ := aclServer(t)
	admin := api.NewClient(s.Addr())
	admin.Token = management
	ctx := context.Background()
	if _, err := admin.ApplyNamespace(ctx, &api.Namespace{Name: "other"}); err != nil {
		t.Fatal(err)
	}
	addNode(t, s, "node-1") // a cell event: node-registered
	if _, err := admin.SetCellConfig(ctx, []byte("apiVersion: strata.dev/v1\nkind: CellConfig\nschedulingPolicy: spread\n")); err != nil {
		t.Fatal(err)
	}
	other := tokenWith(t, s, management, &api.ACLPolicy{Name: "other-read",
		Namespaces: map[string][]string{"other": {api.CapRead, api.CapSubmit}}}, "")
	defaults := tokenWith(t, s, management, &api.ACLPolicy{Name: "default-read",
		Namespaces: map[string][]string{"default": {api.CapRead}}}, "")
	cellReader := tokenWith(t, s, management, &api.ACLPolicy{Name: "cell-read", Cell: []string{api.CapRead},
		Namespaces: map[string][]string{"other": {api.CapRead}}}, "")

	if got := send(t, s, other.SecretID, "POST", "/v1/workloads?namespace=other", fmt.Sprintf(oneReplica, "w")); got.status != http.StatusOK {
		t.Fatalf("register in other: %+v", got)
	}
	var alloc *api.Allocation
	waitFor(t, 10*time.Second, "the allocation", func() error {
		if as := s.State().Snapshot().AllocsByWorkload("other", "w"); len(as) == 1 {
			alloc = as[0]
			return nil
		}
		return fmt.Errorf("not placed yet")
	})
	// Its agent reports it running and healthy, with a check: health events.
	if _, err := s.propose(&fsm.AllocClientUpdate{Time: time.Now(), Updates: []*api.AllocUpdate{{ID: alloc.ID, ClientStatus: api.AllocRunning,
		Health: &api.AllocHealth{Status: api.HealthHealthy, Checks: []api.CheckResult{{Task: "t", Name: "alive", Status: api.CheckPassing, Output: "secret-ish output"}}}}}}); err != nil {
		t.Fatal(err)
	}
	events := func(token, ns string) []*api.Event {
		t.Helper()
		req, _ := http.NewRequest("GET", s.Addr()+"/v1/events?namespace="+ns, nil)
		req.Header.Set(api.HeaderToken, token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("events of %s: %s", ns, resp.Status)
		}
		var out []*api.Event
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	waitFor(t, 10*time.Second, "the health events", func() error {
		for _, e := range s.State().Snapshot().Events(nil, "", "") {
			if e.Type == api.EventCheck {
				return nil
			}
		}
		return fmt.Errorf("no check event yet")
	})

	kinds := func(list []*api.Event) (cell, mine, foreign int) {
		for _, e := range list {
			switch {
			case e.Workload == "":
				cell++
			case e.Namespace == "other":
				mine++
			default:
				foreign++
			}
		}
		return
	}
	if cell, mine, foreign := kinds(events(other.SecretID, "other")); cell != 0 || mine == 0 || foreign != 0 {
		t.Errorf("a token of namespace other: %d cell events, %d of other, %d of other namespaces; want only other's", cell, mine, foreign)
	}
	for _, e := range events(defaults.SecretID, "default") {
		t.Errorf("a token of namespace default sees %s event %q (namespace %q, workload %q)", e.Type, e.Message, e.Namespace, e.Workload)
	}
	if cell, mine, _ := kinds(events(cellReader.SecretID, "other")); cell < 2 || mine == 0 {
		t.Errorf("a token with read on the cell: %d cell events, %d of other; want the node's and the configuration's too", cell, mine)
	}
}
