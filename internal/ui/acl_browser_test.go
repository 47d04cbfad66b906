package ui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/ui/uitest"
)

// TestTokenCapabilities: on a cell with ACLs, the UI without a token asks
// for one; with a token that may only read, every view reads, and every
// action it lacks the capability for says which capability, in words,
// instead of breaking; the token's secret is never shown on the page.
func TestTokenCapabilities(t *testing.T) {
	c := startCell(t, 8, func(cfg *server.Config) { cfg.ACL = true })
	ctx := context.Background()
	admin := c.Client()
	boot, err := admin.ACLBootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	admin.Token = boot.SecretID
	if _, err := admin.ApplyACLPolicy(ctx, &api.ACLPolicy{Name: "reader",
		Namespaces: map[string][]string{"default": {api.CapRead}}, Cell: []string{api.CapRead}}); err != nil {
		t.Fatal(err)
	}
	reader, err := admin.CreateACLToken(ctx, &api.ACLTokenRequest{Name: "ui reader", Policies: []string{"reader"}})
	if err != nil {
		t.Fatal(err)
	}

	b := uitest.New(t, 1300, 900)
	b.Open(c.Addr(0) + "/ui/#/nodes")
	b.WaitText("#view .denied", "This cell has ACLs on: enter a token", 20*time.Second)

	// The token, typed once into the dialog, is kept for the tab.
	b.Click("#token-button")
	b.SetValue("#token-input", reader.SecretID)
	b.Click("#token-save")
	b.WaitFor(20*time.Second, "the node list with the reader's token", func() (bool, string) {
		return strings.Contains(b.Text("#view"), "8 of 8"), b.Text("#view")
	})
	var stored string
	b.Eval(`sessionStorage.getItem('strata.token')`, &stored)
	if stored != reader.SecretID {
		t.Fatalf("the token is not kept in the tab's session storage")
	}

	// Drain needs cell-manage: the UI says so.
	b.Go("#/nodes/node-00001")
	b.Click("#drain")
	b.WaitText("#toasts", `Your token lacks capability "cell-manage" on the cell`, 10*time.Second)

	// Plan needs submit in the namespace.
	b.Go("#/run")
	b.Click("#plan")
	b.WaitText("#plan-result .denied", `Your token lacks capability "submit" in namespace "default"`, 10*time.Second)
	b.Shot("denied")

	// Reading works everywhere the token may read.
	for _, route := range []string{"#/overview", "#/topology", "#/workloads", "#/allocations", "#/events"} {
		b.Go(route)
		b.WaitFor(10*time.Second, route+" without refusals", func() (bool, string) {
			var live string
			b.Eval(`document.querySelector('#live').className`, &live)
			return strings.Contains(live, "on") && b.Text("#view .denied") == "", b.Text("#view")
		})
	}

	// Nothing secret on any page: the token's secret appears in no text or
	// attribute of the document.
	var html string
	b.Eval(`document.documentElement.outerHTML + document.body.innerText`, &html)
	if strings.Contains(html, reader.SecretID) || strings.Contains(html, boot.SecretID) {
		t.Fatal("a token secret is rendered in the page")
	}
}
