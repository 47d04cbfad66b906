package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestPlacementLanguage runs the placement rules through a real cell of
// three agents on two racks: a hard spread over racks, anti-affinity
// between replicas, affinity to another workload, a windowed avoid rule
// and the cell configuration that defines the window; status explains the
// placement.
func TestPlacementLanguage(t *testing.T) {
	c := newCell(t, 10*time.Second)
	c.startAgent("a1", "--label", "rack=r1", "--label", "powerZone=A")
	c.startAgent("a2", "--label", "rack=r1", "--label", "powerZone=B")
	c.startAgent("b1", "--label", "rack=r2", "--label", "powerZone=B")

	// A window open every day, all day: the avoid rule applies whenever the
	// test runs.
	c.mustStrata("cell", "set", "-f", c.writeSpec("cell", `
apiVersion: strata.dev/v1
kind: CellConfig
schedulingPolicy: spread
timeWindows:
  - {name: always, start: "00:00", end: "00:00"}
`))
	if out := c.mustStrata("cell", "config"); !strings.Contains(out, "spread") || !strings.Contains(out, "always") {
		t.Fatalf("cell config does not show what was set:\n%s", out)
	}

	// Four replicas, never two on one node, racks within one of each
	// other: three placed (one per node), the fourth waits with a reason.
	c.strata("run", "-f", c.writeSpec("spread", `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: spread}
spec:
  groups:
    - name: web
      replicas: 4
      placement:
        spread: [{key: rack, maxSkew: 1}]
        antiAffinity: [{key: node}]
      tasks:
        - name: t
          command: ["sleep", "300"]
          resources: {cpu: 100m, memory: 16Mi}
`), "--wait", "--timeout", "5s")
	c.eventually(30*time.Second, "three replicas run, one per node", func() error {
		running := runningAllocs(c.allocs("spread"))
		nodes := map[string]bool{}
		for _, a := range running {
			nodes[a.NodeName] = true
		}
		if len(running) != 3 || len(nodes) != 3 {
			return fmt.Errorf("%d running on %d nodes", len(running), len(nodes))
		}
		return nil
	})
	st := c.mustStrata("status", "spread")
	for _, want := range []string{"1 not placed", "node already runs a replica of this group (anti-affinity)", "last placement", "nodes examined"} {
		if !strings.Contains(st, want) {
			t.Fatalf("status lacks %q:\n%s", want, st)
		}
	}

	// A cache pinned to b1; a client with affinity to the cache's rack
	// and an avoid rule on power zone B during the window: the only node
	// of rack r2 is in zone B, so the rule costs score but the affinity
	// is hard: the client lands on b1.
	c.mustStrata("run", "-f", c.writeSpec("cache", `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: cache}
spec:
  groups:
    - name: cache
      placement: {require: ["node=b1"]}
      tasks:
        - {name: t, command: ["sleep", "300"], resources: {cpu: 100m, memory: 16Mi}}
`), "--wait", "--timeout", "30s")
	c.mustStrata("run", "-f", c.writeSpec("client", `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: client}
spec:
  groups:
    - name: client
      placement:
        affinity: [{workload: cache, key: rack}]
        avoid: [{key: powerZone, values: [B], weight: 100, window: always}]
      tasks:
        - {name: t, command: ["sleep", "300"], resources: {cpu: 100m, memory: 16Mi}}
`), "--wait", "--timeout", "30s")
	if got := runningAllocs(c.allocs("client"))[0].NodeName; got != "b1" {
		t.Fatalf("client runs on %s, want b1 (the cache's rack)", got)
	}
	// Without the affinity the windowed avoid rule steers a new client
	// to zone A: a1.
	c.mustStrata("run", "-f", c.writeSpec("loner", `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: loner}
spec:
  groups:
    - name: loner
      placement:
        avoid: [{key: powerZone, values: [B], weight: 100, window: always}]
      tasks:
        - {name: t, command: ["sleep", "300"], resources: {cpu: 100m, memory: 16Mi}}
`), "--wait", "--timeout", "30s")
	if got := runningAllocs(c.allocs("loner"))[0].NodeName; got != "a1" {
		t.Fatalf("loner runs on %s, want a1 (the only node outside power zone B)", got)
	}
	if st := c.mustStrata("status", "client"); !strings.Contains(st, "first replica on b1") || !strings.Contains(st, "avoid powerZone in [B] (always) -1") {
		t.Fatalf("status does not show the avoid rule's score component on b1:\n%s", st)
	}

	// The fragmentation-aware policy runs in the server too (no GPUs here:
	// it only breaks ties, but the explanation names it).
	c.mustStrata("run", "-f", c.writeSpec("frag", `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: frag}
spec:
  schedulingPolicy: fgd
  groups:
    - name: g
      tasks:
        - {name: t, command: ["sleep", "300"], resources: {cpu: 100m, memory: 16Mi}}
`), "--wait", "--timeout", "30s")
	if st := c.mustStrata("status", "frag"); !strings.Contains(st, "Policy:    fgd") || !strings.Contains(st, ": fgd +0.5") {
		t.Fatalf("status does not show the fgd policy's score:\n%s", st)
	}
}
