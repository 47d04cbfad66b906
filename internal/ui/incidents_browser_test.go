package ui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
	"github.com/strata-dev/strata/internal/ui/uitest"
)

const spreadSpec = `apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: web
spec:
  schedulingPolicy: spread
  groups:
    - name: frontend
      replicas: 40
      reschedule: {attempts: 0}
      tasks:
        - name: web
          driver: mock
          command: ["serve"]
          resources: {cpu: 100m, memory: 64Mi}
`

// TestIncidentsInTheUI: the allocations of one rack fail; the leader makes
// an incident of that rack of them, the incidents view lists it with its
// cause, its page shows the evidence and history, and its events are one
// click away, each naming it.
func TestIncidentsInTheUI(t *testing.T) {
	c := servertest.Start(t, 1, func(_ int, cfg *server.Config) {
		cfg.HeartbeatTTL = time.Hour
		cfg.IncidentInterval = 200 * time.Millisecond
	})
	c.WaitReady(0)
	ctx := context.Background()
	agents := map[string]*api.Client{}
	for i := range 160 { // racks rack-000 to rack-003
		n := uitest.Node(i)
		agents[n.ID] = c.AgentClient(n.ID)
		if err := agents[n.ID].RegisterNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	user := c.Client()
	if _, err := user.RegisterWorkload(ctx, []byte(spreadSpec)); err != nil {
		t.Fatal(err)
	}
	report := func(status func(a *api.Allocation) string) int {
		allocs, _, err := user.Allocations(ctx, "web", nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range allocs {
			if st := status(a); st != "" {
				if err := agents[a.NodeID].UpdateAllocations(ctx, []*api.AllocUpdate{{ID: a.ID, ClientStatus: st, ClientReason: "task web: exit 1"}}); err != nil {
					t.Fatal(err)
				}
				n++
			}
		}
		return n
	}
	running := 0
	for deadline := time.Now().Add(20 * time.Second); running < 40 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		report(func(a *api.Allocation) string {
			if a.ClientStatus == api.AllocPending {
				return api.AllocRunning
			}
			return ""
		})
		allocs, _, _ := user.Allocations(ctx, "web", nil)
		running = 0
		for _, a := range allocs {
			if a.ClientStatus == api.AllocRunning {
				running++
			}
		}
	}
	if running < 40 {
		t.Fatalf("%d of 40 running", running)
	}
	// The rack with the most copies loses its network: its copies fail.
	allocs, _, err := user.Allocations(ctx, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	perRack := map[string]int{}
	for _, a := range allocs {
		perRack[uitest.Node(nodeIndex(a.NodeID)).Labels["rack"]]++
	}
	rack := ""
	for r, n := range perRack {
		if rack == "" || n > perRack[rack] || (n == perRack[rack] && r < rack) {
			rack = r
		}
	}
	failed := report(func(a *api.Allocation) string {
		if uitest.Node(nodeIndex(a.NodeID)).Labels["rack"] == rack {
			return api.AllocFailed
		}
		return ""
	})
	if failed < 8 {
		t.Fatalf("only %d allocations on %s: the spread put them elsewhere (%v)", failed, rack, perRack)
	}
	b := uitest.New(t, 1400, 900)
	b.Open(c.Addr(0) + "/#/incidents")
	b.WaitText("#incident-list", "rack "+rack, 30*time.Second)
	b.WaitText("#incident-list", fmt.Sprintf("%d allocations on", failed), 5*time.Second)
	b.Shot("incidents")
	b.Click(`#incident-list a`)
	b.WaitText("#incident", "troubled allocations", 10*time.Second)
	b.WaitText("#incident-history", "opened", 5*time.Second)
	b.Shot("incident")
	b.Click(`#incident a[href^="#/events/"]`)
	b.WaitFor(20*time.Second, "the incident's events in the events view", func() (bool, string) {
		var cells []string
		b.Eval(`[...document.querySelectorAll('#event-list .vrow')].filter(r => !r.hidden).map(r => r.lastElementChild.textContent)`, &cells)
		named := 0
		for _, c := range cells {
			if strings.Contains(c, "rack-"+rack) {
				named++
			}
		}
		return named >= failed, fmt.Sprintf("%d rows, %d naming the incident", len(cells), named)
	})
}

// nodeIndex is i of uitest.Node(i)'s id.
func nodeIndex(id string) int {
	var i int
	fmt.Sscanf(id, "node-%05d", &i)
	return i
}
