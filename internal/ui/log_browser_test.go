package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/ui"
	"github.com/strata-dev/strata/internal/ui/uitest"
)

// TestHugeLogKeepsTheTail: a task that wrote 8 MiB streams into the
// allocation view, which keeps the last MiB, says that it dropped the
// rest, and stays responsive. The API here is a stand-in that serves one
// allocation and its log.
func TestHugeLogKeepsTheTail(t *testing.T) {
	alloc := &api.Allocation{ID: "0123abcd-0000-0000-0000-000000000000", Namespace: "default", Workload: "chatty", Group: "g",
		NodeID: "n1", NodeName: "n1", ClientStatus: api.AllocRunning, DesiredStatus: api.DesiredRun,
		TaskGroup: &api.TaskGroup{Name: "g", Tasks: []*api.Task{{Name: "talk"}}}}
	const lines = 8 << 20 / 64
	fake := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("index") != "" {
			<-r.Context().Done() // nothing changes
			return
		}
		w.Header().Set("X-Strata-Index", "10")
		switch r.URL.Path {
		case "/v1/allocations/" + alloc.ID:
			json.NewEncoder(w).Encode(alloc)
		case "/v1/allocations/" + alloc.ID + "/logs":
			for i := range lines {
				fmt.Fprintf(w, "line %08d %s\n", i, strings.Repeat("x", 64-15-1))
			}
		default:
			w.Write([]byte("[]"))
		}
	})
	srv := httptest.NewServer(ui.Mount(fake))
	defer srv.Close()
	b := uitest.New(t, 1200, 900)
	b.Open(srv.URL + "/ui/#/allocations/" + alloc.ID)
	last := fmt.Sprintf("line %08d", lines-1)
	b.WaitText("#log", last, 60*time.Second)
	var kept int
	b.Eval(`document.querySelector('#log').textContent.length`, &kept)
	if kept > 1<<20 {
		t.Fatalf("the page keeps %d bytes of the log, want at most 1 MiB", kept)
	}
	if strings.Contains(b.Text("#log"), "line 00000000 ") {
		t.Fatal("the oldest lines are still in the page")
	}
	b.WaitText("#logs", "Older output dropped", 5*time.Second)
	b.Go("#/events")
	b.WaitText("#view h2", "Events", 10*time.Second)
}
