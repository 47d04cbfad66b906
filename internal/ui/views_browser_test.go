package ui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
	"github.com/strata-dev/strata/internal/ui/uitest"
)

// The views, driven in a real Chromium against a real in-process server
// whose nodes were registered through the API (no agents: allocations stay
// pending; test/e2e runs the UI against agents that start tasks).

// startCell starts a one-server cell with nodes registered.
func startCell(t *testing.T, nodes int, tweak func(*server.Config)) *servertest.Cell {
	t.Helper()
	c := servertest.Start(t, 1, func(_ int, cfg *server.Config) {
		cfg.HeartbeatTTL = time.Hour
		if tweak != nil {
			tweak(cfg)
		}
	})
	c.WaitReady(0)
	uitest.RegisterNodes(t, c, nodes)
	return c
}

const bigSpec = `apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: too-big
spec:
  groups:
    - name: train
      replicas: 4
      tasks:
        - name: train
          driver: mock
          command: ["train"]
          resources:
            cpu: "24"
            memory: 200Gi
`

const webSpec = `apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: web
spec:
  groups:
    - name: frontend
      replicas: 30
      tasks:
        - name: nginx
          driver: mock
          command: ["serve"]
          resources:
            cpu: "6"
            memory: 20Gi
`

// TestViewsOfACell walks every view as an operator would: the overview,
// the topology drill-down, a workload run through the plan step, its
// allocations, why another is pending with what would fit, a node's cores
// and GPUs, a drain from the node view, and the events it made.
func TestViewsOfACell(t *testing.T) {
	c := startCell(t, 160, nil)
	b := uitest.New(t, 1400, 1000)
	b.Open(c.Addr(0) + "/")

	b.WaitText("#view", "160", 20*time.Second)
	b.WaitText("#view", "ready", 10*time.Second)

	// Run through the plan step: nothing is written until Run.
	b.Go("#/run")
	b.SetValue("#spec", webSpec)
	b.Click("#plan")
	b.WaitText("#plan-summary", "frontend", 20*time.Second)
	if got := b.Text(`#plan-summary tr[data-group="frontend"] td:nth-child(2)`); got != "30" {
		t.Fatalf("plan places %q copies of frontend, want 30", got)
	}
	if list, _, err := c.Client().Workloads(context.Background(), nil); err != nil || len(list) != 0 {
		t.Fatalf("a plan registered something: %v %v", list, err)
	}
	var disabled bool
	b.SetValue("#spec", strings.Replace(webSpec, "replicas: 30", "replicas: 31", 1))
	b.Eval(`document.querySelector('#run').disabled`, &disabled)
	if !disabled {
		t.Fatal("Run stays enabled after the spec changed since the plan")
	}
	b.SetValue("#spec", webSpec)
	b.Click("#plan")
	b.WaitFor(10*time.Second, "Run enabled after planning again", func() (bool, string) {
		b.Eval(`document.querySelector('#run').disabled`, &disabled)
		return !disabled, ""
	})
	b.Shot("plan")
	b.Click("#run")
	b.WaitText("#view h2", "web", 20*time.Second)
	b.WaitText("#view", "frontend", 10*time.Second)
	// The allocation list of the workload fills from the live query.
	b.WaitFor(20*time.Second, "30 allocations of web", func() (bool, string) {
		var n int
		b.Eval(`document.querySelectorAll('.vlist .vrow').length`, &n)
		return n >= 10, b.Text(".vlist")
	})
	b.Shot("workload")

	// A workload that cannot fit: why pending names the filter and counts
	// its nodes, and says what would fit.
	b.Go("#/run")
	b.SetValue("#spec", bigSpec)
	b.Click("#plan")
	b.WaitText("#plan-failures", "not placed", 20*time.Second)
	b.Click("#run")
	b.WaitText("#why-pending", "train", 30*time.Second)
	b.WaitText("#why-pending", "160", 10*time.Second)
	b.WaitText("#why-pending", "What would fit", 10*time.Second)
	b.WaitText("#why-pending .fit-advice", "memory", 10*time.Second)
	b.Shot("why-pending")

	// Allocations: the whole list, filtered.
	b.Go("#/allocations")
	b.WaitFor(20*time.Second, "the allocation list", func() (bool, string) {
		return b.Text("#alloc-count") == "30 of 30", b.Text("#alloc-count")
	})
	b.SetValue("#alloc-filter", "frontend")
	b.WaitText("#alloc-count", "30 of 30", 5*time.Second)
	b.SetValue("#alloc-filter", "no-such-thing")
	b.WaitText("#alloc-count", "0 of 30", 5*time.Second)
	b.SetValue("#alloc-filter", "")
	b.Click("#alloc-list .vrow")
	b.WaitText("#view", "frontend[", 10*time.Second)
	b.WaitText("#exec", "strata alloc exec", 5*time.Second)

	// Topology: the cell, then a region, drawn on the canvas.
	b.Go("#/topology")
	b.WaitFor(20*time.Second, "the heat-map of 160 nodes", func() (bool, string) {
		return b.Text("#view .small.muted") != "" && attr(b, "#heatmap", "data-nodes") == "160", attr(b, "#heatmap", "data-nodes")
	})
	b.Shot("topology")
	// Every colouring draws: fragmented for each task shape, and used
	// (grey until nodes report usage).
	for _, mode := range []string{"fragmented", "used", "allocated"} {
		b.Eval(`(() => { const s = document.querySelector('#heat-mode'); s.value = `+jsString(mode)+`; s.dispatchEvent(new Event('change')); })()`, nil)
		b.WaitFor(5*time.Second, "the heat-map coloured by "+mode, func() (bool, string) {
			got := b.Text("#view .small.muted")
			return attr(b, "#heatmap", "data-nodes") == "160" && (mode != "used" || strings.Contains(got, "no node reports usage")), got
		})
	}
	b.Go("#/topology/region=region-0")
	b.WaitFor(10*time.Second, "region-0's 80 nodes", func() (bool, string) {
		return attr(b, "#heatmap", "data-nodes") == "80", attr(b, "#heatmap", "data-nodes")
	})
	b.WaitText(".crumbs", "region region-0", 5*time.Second)

	// A node: NUMA nodes, cores, GPUs; then drain it from the UI.
	b.Go("#/nodes")
	b.WaitFor(10*time.Second, "160 nodes listed", func() (bool, string) {
		return attr(b, "#node-list", "data-rows") == "" && strings.Contains(b.Text("#view"), "160 of 160"), b.Text("#view .toolbar")
	})
	b.Shot("nodes")
	b.Go("#/nodes/node-00010")
	b.WaitText("#hardware", "NUMA 1", 10*time.Second)
	b.WaitText("#hardware", "GPU 3 H100", 5*time.Second)
	b.Click("#drain")
	// Draining, or already ineligible: a node with nothing to move finishes
	// its drain at once and stays cordoned.
	b.WaitFor(20*time.Second, "node-00010 draining or drained", func() (bool, string) {
		got := b.Text("#view .toolbar")
		return strings.Contains(got, "draining") || strings.Contains(got, "ineligible"), got
	})
	b.Shot("node")
	n, _, err := c.Client().Nodes(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range n {
		if node.ID == "node-00010" && node.Drain == nil && node.Eligibility != api.NodeIneligible {
			t.Fatal("the UI said draining but the node was not drained")
		}
	}

	// Eligibility and quarantine, from another node's view.
	b.Go("#/nodes/node-00011")
	b.WaitText("#view .toolbar", "ready", 10*time.Second)
	b.Click("#eligibility")
	b.WaitText("#view .toolbar", "ineligible", 20*time.Second)
	b.WaitText("#eligibility", "Mark eligible", 10*time.Second)
	b.Click("#eligibility")
	b.WaitText("#view .toolbar", "ready", 20*time.Second)
	b.SetValue("#quarantine-reason", "ECC errors")
	b.Click("#quarantine")
	b.WaitText("#view .toolbar", "quarantined", 20*time.Second)
	b.WaitText("#view", "ECC errors", 10*time.Second)
	b.Click("#quarantine-lift")
	b.WaitFor(20*time.Second, "the quarantine lifted", func() (bool, string) {
		got := b.Text("#view .toolbar")
		return !strings.Contains(got, "quarantined"), got
	})

	// Events: the drain is there, and the type filter keeps only it.
	b.Go("#/events")
	b.WaitText("#event-list", "node-drain", 20*time.Second)
	b.Eval(`(() => { const s = document.querySelector('#event-type'); s.value = 'node-drain'; s.dispatchEvent(new Event('input')); })()`, nil)
	b.WaitFor(5*time.Second, "only node-drain events", func() (bool, string) {
		var types []string
		b.Eval(`[...document.querySelectorAll('#event-list .vrow')].filter(r => !r.hidden).map(r => r.children[1].textContent)`, &types)
		for _, ty := range types {
			if ty != api.EventNodeDrain {
				return false, strings.Join(types, ",")
			}
		}
		return len(types) > 0, strings.Join(types, ",")
	})
	b.Shot("events")

	// The overview counts it: draining, or ineligible once its drain
	// finished (it had nothing to move).
	b.Go("#/overview")
	b.WaitFor(10*time.Second, "the drained node in the overview", func() (bool, string) {
		got := b.Text("#view")
		return strings.Contains(got, "draining") || strings.Contains(got, "ineligible"), got
	})
	b.Shot("overview")
}

// TestUIOverTLS: a server with TLS serves the UI over HTTPS, and the page's
// API reads and writes go over the same TLS (the test's browser does not
// know the cell's CA: it is told to accept the certificate, as a person
// accepts it once).
func TestUIOverTLS(t *testing.T) {
	c := servertest.Start(t, 1, func(i int, cfg *server.Config) {
		servertest.WithTLS(t)(i, cfg)
		cfg.HeartbeatTTL = time.Hour
		// The browser presents no client certificate: this is about the
		// page's transport, not who may call (docs/security.md).
		cfg.AllowAnonymous = true
	})
	c.WaitReady(0)
	if !strings.HasPrefix(c.Addr(0), "https://") {
		t.Fatalf("the cell's address %s is not HTTPS", c.Addr(0))
	}
	b := uitest.New(t, 1200, 900, "ignore-certificate-errors")
	b.Open(c.Addr(0) + "/")
	b.WaitText("#view", "No nodes have registered yet", 20*time.Second)
	// A write over the page's TLS: a plan, which finds no node.
	b.Go("#/run")
	b.SetValue("#spec", webSpec)
	b.Click("#plan")
	b.WaitText("#plan-failures", "30 not placed", 20*time.Second)
	var proto string
	b.Eval(`location.protocol`, &proto)
	if proto != "https:" {
		t.Fatalf("the page was served over %s", proto)
	}
}

func attr(b *uitest.Browser, sel, name string) string {
	var v string
	b.Eval(`(document.querySelector(`+jsString(sel)+`) || {getAttribute: () => ''}).getAttribute(`+jsString(name)+`) || ''`, &v)
	return v
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
