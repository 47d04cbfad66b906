package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/httpapi/route"
)

// TestEveryRouteHasARule: the API's own table gives every route a rule and
// a handler, and no pattern twice (mount would refuse it at start-up).
func TestEveryRouteHasARule(t *testing.T) {
	s := &API{}
	seen := map[string]bool{}
	for _, rt := range s.routes() {
		if !rt.Rule.Given() || rt.Handle == nil {
			t.Errorf("route %q: rule given %v, handler %v", rt.Pattern, rt.Rule.Given(), rt.Handle != nil)
		}
		if seen[rt.Pattern] {
			t.Errorf("route %q twice", rt.Pattern)
		}
		seen[rt.Pattern] = true
		if rt.Rule.Scope == route.ScopeNode && strings.Contains(rt.Pattern, "/nodes/{id}") && rt.NodeParam != "id" {
			t.Errorf("route %q is a node's own but does not say its path names the node", rt.Pattern)
		}
	}
}

// TestRouteTableRefuses: a table with a route without a rule, or with a
// pattern twice, is refused when it is mounted, so the server does not
// start with an endpoint that would be closed (or open) by accident.
func TestRouteTableRefuses(t *testing.T) {
	ok := func(http.ResponseWriter, *http.Request) error { return nil }
	s := &API{logger: slog.New(slog.NewTextHandler(io.Discard, nil)), replica: passReplica{}}
	for _, tc := range []struct {
		name  string
		table route.Group
		want  string
	}{
		{"no rule", route.Group{{Pattern: "GET /v1/things", Handle: ok}}, "has no rule"},
		{"twice", route.Group{{Pattern: "GET /v1/things", Rule: route.Open, Handle: ok}, {Pattern: "GET /v1/things", Rule: route.CellRead, Handle: ok}}, "twice"},
		{"no handler", route.Group{{Pattern: "GET /v1/things", Rule: route.Open}}, "no handler"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.mount(tc.table); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("mount: %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if _, err := s.mount(route.Group{{Pattern: "GET /v1/things", Rule: route.Open, Handle: ok}}); err != nil {
		t.Fatalf("a good table: %v", err)
	}
}

// passReplica serves every route here, at once.
type passReplica struct{ Replica }

func (passReplica) Gate(_ route.Route, next http.Handler) http.Handler { return next }
