package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/ui/uitest"
)

// uiSpec is a service of two exec tasks that print, with a canary update
// policy; %s is what they print (a new value is a new version).
const uiSpec = `apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: greeter
spec:
  groups:
    - name: web
      replicas: 2
      update: {canary: 1, maxParallel: 1, minHealthyTime: 1s, healthyDeadline: 30s, progressDeadline: 60s}
      tasks:
        - name: greet
          command: ["/bin/sh", "-c", "while true; do echo %s from $STRATA_ALLOC_ID; sleep 1; done"]
          resources: {cpu: 50m, memory: 32Mi}
`

// TestUIRunsAWorkload is an operator's session in the web UI of a real
// cell (a server and two agents, each a process): the workload is planned
// and run from the browser, starts, its log is read as it is written, a
// new version is rolled out with a canary that is promoted from the
// deployment view, and a node is drained from its view while its work
// moves to the other node. Every view is opened on the way.
func TestUIRunsAWorkload(t *testing.T) {
	// The browser presents no client certificate: the server lets it in.
	c := newAnonymousCell(t, 10*time.Second)
	c.startAgent("ui-a")
	c.startAgent("ui-b")
	// The cell serves HTTPS with its own CA, which the test's browser does
	// not know (TestUIOverTLS covers the UI's TLS).
	b := uitest.New(t, 1400, 1000, "ignore-certificate-errors")
	b.Open(c.addr + "/")
	b.WaitText("#view", "2 ready", 20*time.Second)

	// Plan, then run.
	b.Go("#/run")
	b.SetValue("#spec", fmt.Sprintf(uiSpec, "hello"))
	b.Click("#plan")
	b.WaitText(`#plan-summary tr[data-group="web"]`, "2", 20*time.Second)
	b.Click("#run")
	b.WaitText("#view h2", "greeter", 20*time.Second)

	// It starts: the groups table counts two running.
	b.WaitFor(60*time.Second, "two running copies of greeter", func() (bool, string) {
		var running string
		b.Eval(`(document.querySelector('#view table tbody tr td:nth-child(4)') || {}).textContent || ''`, &running)
		return running == "2", b.Text("#view")
	})
	b.Shot("workload-running")

	// Its log, followed: new lines arrive while the page is open.
	b.Click(".vlist .vrow")
	b.WaitText("#log", "hello from", 30*time.Second)
	first := strings.Count(b.Text("#log"), "hello from")
	b.WaitFor(20*time.Second, "the followed log to grow", func() (bool, string) {
		return strings.Count(b.Text("#log"), "hello from") > first, b.Text("#log")
	})
	if ev := b.Text("#alloc-events"); strings.Contains(ev, "cell-created") || strings.Contains(ev, "node-registered") {
		t.Fatalf("the allocation's events show the cell's: %s", ev)
	}
	b.Shot("allocation")

	// A new version through the plan step: the diff names the command; one
	// canary runs beside the old copies until promoted from the UI.
	b.Go("#/run")
	b.SetValue("#spec", fmt.Sprintf(uiSpec, "howdy"))
	b.Click("#plan")
	b.WaitText("#plan-diff", "command", 20*time.Second)
	b.WaitText("#plan-summary", "canar", 5*time.Second)
	b.Click("#run")
	b.WaitText("#view h2", "greeter", 20*time.Second)
	b.WaitText("#deployment", "paused", 60*time.Second)
	b.WaitFor(60*time.Second, "the canary to be healthy", func() (bool, string) {
		d := b.Text("#deployment")
		return strings.Contains(d, "1/1") && strings.Contains(d, "Promote"), d
	})
	b.Shot("canary")
	b.Click("#promote")
	b.WaitText("#deployment", "successful", 90*time.Second)
	b.WaitText("#versions", "Revert to this", 10*time.Second)

	// Drain a node from its view; its copies move to the other node.
	var onA []string
	for _, a := range c.allocs("greeter") {
		if a.NodeName == "ui-a" && a.DesiredStatus == api.DesiredRun && !a.Terminal() {
			onA = append(onA, a.ID)
		}
	}
	b.Go("#/nodes")
	b.WaitText("#node-list", "ui-a", 20*time.Second)
	b.Go("#/nodes/" + c.node("ui-a").ID)
	b.WaitText("#hardware", "NUMA", 20*time.Second)
	b.Click("#drain")
	b.WaitFor(30*time.Second, "ui-a draining or drained", func() (bool, string) {
		got := b.Text("#view .toolbar")
		return strings.Contains(got, "draining") || strings.Contains(got, "ineligible"), got
	})
	c.eventually(90*time.Second, "greeter runs only on ui-b", func() error {
		for _, a := range c.allocs("greeter") {
			if a.NodeName == "ui-a" && !a.Terminal() {
				return fmt.Errorf("%s still on ui-a (%s/%s)", a.ID, a.DesiredStatus, a.ClientStatus)
			}
		}
		return nil
	})
	b.Go("#/events")
	b.WaitText("#event-list", "node-drain", 20*time.Second)
	b.Shot("events")
	if len(onA) > 0 {
		b.Go("#/allocations/" + onA[0])
		b.WaitText("#view", "stop", 20*time.Second)
	}

	// Every view shows this cell.
	for route, want := range map[string]string{"#/overview": "Capacity", "#/topology": "2 nodes", "#/workloads": "greeter",
		"#/allocations": "greeter", "#/nodes": "ui-b"} {
		b.Go(route)
		b.WaitText("#view", want, 20*time.Second)
	}
	b.Shot("overview")
}
