package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/state"
)

// aclServer starts a one-server cell with ACLs on and a clock the test
// moves (advance), bootstraps it, and returns the management token.
func aclServer(t *testing.T) (s *Server, management string, advance func(time.Duration)) {
	t.Helper()
	var offset atomic.Int64
	s, err := New(Config{DataDir: t.TempDir(), HTTPAddr: "127.0.0.1:0", HeartbeatTTL: time.Hour, ACL: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:    func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	<-s.Ready()
	waitOK(t, s.Addr()+"/v1/status/ready")
	cl := api.NewClient(s.Addr())
	tok, err := cl.ACLBootstrap(context.Background())
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	if _, err := cl.ACLBootstrap(context.Background()); err == nil || !strings.Contains(err.Error(), "already bootstrapped") {
		t.Fatalf("a second bootstrap: %v, want refused", err)
	}
	return s, tok.SecretID, func(d time.Duration) { offset.Add(int64(d)) }
}

// tokenWith creates a policy granting one capability and a token of it.
func tokenWith(t *testing.T, s *Server, management string, p *api.ACLPolicy, ttl string) *api.ACLToken {
	t.Helper()
	cl := api.NewClient(s.Addr())
	cl.Token = management
	if _, err := cl.ApplyACLPolicy(context.Background(), p); err != nil {
		t.Fatalf("policy %s: %v", p.Name, err)
	}
	tok, err := cl.CreateACLToken(context.Background(), &api.ACLTokenRequest{Name: "holder of " + p.Name, Policies: []string{p.Name}, TTL: ttl})
	if err != nil {
		t.Fatalf("token for %s: %v", p.Name, err)
	}
	return tok
}

type aclAnswer struct {
	status int
	code   string
	msg    string
}

func send(t *testing.T, s *Server, token, method, path, body string) aclAnswer {
	t.Helper()
	req, err := http.NewRequest(method, s.Addr()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set(api.HeaderToken, token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var er api.ErrorResponse
	json.Unmarshal(b, &er)
	return aclAnswer{resp.StatusCode, er.Code, er.Error}
}

// routeCalls is one concrete request per route pattern, with a body that
// an allowed caller gets a harmless answer to (a 400 or a 404, mostly).
var routeCalls = map[string][2]string{
	"POST /v1/workloads":                        {"/v1/workloads", ""},
	"PUT /v1/workloads":                         {"/v1/workloads", ""},
	"GET /v1/workloads":                         {"/v1/workloads", ""},
	"GET /v1/workloads/{name}":                  {"/v1/workloads/nope", ""},
	"DELETE /v1/workloads/{name}":               {"/v1/workloads/nope", ""},
	"GET /v1/workloads/{name}/allocations":      {"/v1/workloads/nope/allocations", ""},
	"GET /v1/workloads/{name}/evaluations":      {"/v1/workloads/nope/evaluations", ""},
	"GET /v1/allocations":                       {"/v1/allocations", ""},
	"GET /v1/allocations/{id}":                  {"/v1/allocations/nope", ""},
	"GET /v1/allocations/{id}/logs":             {"/v1/allocations/nope/logs", ""},
	"GET /v1/evaluations":                       {"/v1/evaluations", ""},
	"GET /v1/evaluations/{id}":                  {"/v1/evaluations/nope", ""},
	"POST /v1/evaluations/{id}/retry":           {"/v1/evaluations/nope/retry", ""},
	"GET /v1/events":                            {"/v1/events", ""},
	"GET /v1/incidents":                         {"/v1/incidents", ""},
	"GET /v1/incidents/{id}":                    {"/v1/incidents/nope", ""},
	"GET /v1/services":                          {"/v1/services", ""},
	"GET /v1/services/{name}":                   {"/v1/services/nope", ""},
	"GET /v1/nodes":                             {"/v1/nodes", ""},
	"GET /v1/nodes/{id}":                        {"/v1/nodes/nope", ""},
	"GET /v1/nodes/{id}/status":                 {"/v1/nodes/nope/status", ""},
	"POST /v1/nodes/{id}/eligibility":           {"/v1/nodes/nope/eligibility", `{"eligible":false}`},
	"POST /v1/nodes/{id}/drain":                 {"/v1/nodes/nope/drain", "{}"},
	"POST /v1/nodes/{id}/quarantine":            {"/v1/nodes/nope/quarantine", `{"reason":"x"}`},
	"POST /v1/nodes/{id}/purge":                 {"/v1/nodes/nope/purge", "{}"},
	"GET /v1/cell/config":                       {"/v1/cell/config", ""},
	"PUT /v1/cell/config":                       {"/v1/cell/config", "kind: Nope"},
	"GET /v1/operator/raft/configuration":       {"/v1/operator/raft/configuration", ""},
	"DELETE /v1/operator/raft/peer":             {"/v1/operator/raft/peer?id=nope", ""},
	"GET /v1/operator/snapshot":                 {"/v1/operator/snapshot", ""},
	"PUT /v1/operator/snapshot":                 {"/v1/operator/snapshot", "not a snapshot"},
	"GET /v1/status/leader":                     {"/v1/status/leader", ""},
	"GET /metrics":                              {"/metrics", ""},
	"GET /v1/status/ready":                      {"/v1/status/ready", ""},
	"GET /v1/status/raft":                       {"/v1/status/raft", ""},
	"/":                                         {"/v1/nosuch", ""},
	"":                                          {"/v1/workloads/nope/x/y", ""},
	"POST /v1/agent/nodes":                      {"/v1/agent/nodes", "{}"},
	"PUT /v1/agent/nodes/{id}/heartbeat":        {"/v1/agent/nodes/nope/heartbeat", ""},
	"GET /v1/agent/nodes/{id}/allocations":      {"/v1/agent/nodes/nope/allocations", ""},
	"POST /v1/agent/allocations":                {"/v1/agent/allocations", `{"updates":[]}`},
	"GET /v1/audit":                             {"/v1/audit", ""},
	"POST /v1/acl/bootstrap":                    {"/v1/acl/bootstrap", "{}"},
	"GET /v1/acl/token/self":                    {"/v1/acl/token/self", ""},
	"GET /v1/acl/policies":                      {"/v1/acl/policies", ""},
	"GET /v1/acl/policies/{name}":               {"/v1/acl/policies/nope", ""},
	"PUT /v1/acl/policies":                      {"/v1/acl/policies", "{}"},
	"DELETE /v1/acl/policies/{name}":            {"/v1/acl/policies/nope", ""},
	"GET /v1/acl/tokens":                        {"/v1/acl/tokens", ""},
	"GET /v1/acl/tokens/{accessor}":             {"/v1/acl/tokens/nope", ""},
	"POST /v1/acl/tokens":                       {"/v1/acl/tokens", "{}"},
	"DELETE /v1/acl/tokens/{accessor}":          {"/v1/acl/tokens/nope", ""},
	"GET /v1/namespaces":                        {"/v1/namespaces", ""},
	"GET /v1/namespaces/{name}":                 {"/v1/namespaces/default", ""},
	"PUT /v1/namespaces":                        {"/v1/namespaces", "{}"},
	"DELETE /v1/namespaces/{name}":              {"/v1/namespaces/nope", ""},
	"POST /v1/allocations/{id}/migrate":         {"/v1/allocations/nope/migrate", "{}"},
	"POST /v1/agent/allocations/{id}/migration": {"/v1/agent/allocations/nope/migration", `{"migrationId":"m","op":"abort"}`},
	"GET /v1/agent/nodes/{id}/incoming/{alloc}": {"/v1/agent/nodes/nope/incoming/nope", ""},
}

// TestEveryRouteHasACall: every route of the API's table has a call in
// the matrix below, and every call a route (a rule is part of each route:
// the table refuses one without, TestRouteTableRefuses in httpapi).
func TestEveryRouteHasACall(t *testing.T) {
	s := quietServer(t)
	routes := map[string]bool{"": true} // the mux's own answers, an open route
	for _, rt := range s.api.Table() {
		routes[rt.Pattern] = true
		if _, ok := routeCalls[rt.Pattern]; !ok {
			t.Errorf("route %q has no call in the ACL matrix", rt.Pattern)
		}
	}
	for p := range routeCalls {
		if !routes[p] {
			t.Errorf("a call for %q, which is no route", p)
		}
	}
}

// TestACLMatrix: every endpoint × every capability (and no token, and a
// management token) → allowed, or 403 with a code and a message that
// names the capability missing. Refused requests change nothing.
func TestACLMatrix(t *testing.T) {
	s, management, _ := aclServer(t)
	holders := map[string]string{"anonymous": "", "management": management}
	grants := map[string]route.Rule{}
	for _, c := range api.NamespaceCapabilities {
		name := "ns-" + c
		holders[name] = tokenWith(t, s, management, &api.ACLPolicy{Name: name, Namespaces: map[string][]string{"default": {c}}}, "").SecretID
		grants[name] = route.Rule{Scope: route.ScopeNamespace, Cap: c}
	}
	for _, c := range api.CellCapabilities {
		name := "cell-" + c
		holders[name] = tokenWith(t, s, management, &api.ACLPolicy{Name: name, Cell: []string{c}}, "").SecretID
		grants[name] = route.Rule{Scope: route.ScopeCell, Cap: c}
	}
	holders["other-namespace"] = tokenWith(t, s, management, &api.ACLPolicy{Name: "other-namespace",
		Namespaces: map[string][]string{"other": api.NamespaceCapabilities}}, "").SecretID
	grants["other-namespace"] = route.Rule{Scope: route.ScopeNamespace, Cap: "in another namespace"}

	rules := map[string]route.Rule{"": route.Open} // the mux's own answers
	for _, rt := range s.api.Table() {
		rules[rt.Pattern] = rt.Rule
	}
	for pattern, rule := range rules {
		call := routeCalls[pattern]
		method, _, found := strings.Cut(pattern, " ")
		if !found {
			method = "GET"
		}
		for holder, secret := range holders {
			t.Run(pattern+"/"+holder, func(t *testing.T) {
				var want bool
				switch {
				case rule.Scope == route.ScopeOpen, rule.Scope == route.ScopeNode, rule.Scope == route.ScopeNodeJoin:
					want = true
				case holder == "anonymous":
					want = false
				case holder == "management", rule.Scope == route.ScopeToken:
					want = true
				default:
					want = grants[holder] == rule
				}
				before := contentIndex(s)
				got := send(t, s, secret, method, call[0], call[1])
				denied := got.status == http.StatusForbidden && strings.HasPrefix(got.code, "acl-")
				switch {
				case want && denied:
					t.Fatalf("%s %s as %s: %d %s %q, want allowed", method, call[0], holder, got.status, got.code, got.msg)
				case !want && !denied:
					t.Fatalf("%s %s as %s: %d %s %q, want 403", method, call[0], holder, got.status, got.code, got.msg)
				case !want && !strings.Contains(got.msg, fmt.Sprintf("%q", rule.Cap)):
					t.Fatalf("%s %s as %s: %q does not name the capability %q", method, call[0], holder, got.msg, rule.Cap)
				case !want && contentIndex(s) != before:
					t.Fatalf("a refused %s %s wrote the state", method, call[0])
				}
			})
		}
	}
}

// TestACLMatrixAcrossNamespaces: every namespace route asked in namespace
// "other" (?namespace=) is allowed to the token of "other" and refused,
// naming the namespace, to the tokens of "default"; nothing is written.
func TestACLMatrixAcrossNamespaces(t *testing.T) {
	s, management, _ := aclServer(t)
	admin := api.NewClient(s.Addr())
	admin.Token = management
	if _, err := admin.ApplyNamespace(context.Background(), &api.Namespace{Name: "other"}); err != nil {
		t.Fatal(err)
	}
	other := tokenWith(t, s, management, &api.ACLPolicy{Name: "other", Namespaces: map[string][]string{"other": api.NamespaceCapabilities}}, "").SecretID
	defaults := tokenWith(t, s, management, &api.ACLPolicy{Name: "default-all", Namespaces: map[string][]string{"default": api.NamespaceCapabilities}}, "").SecretID
	for _, rt := range s.api.Table() {
		pattern := rt.Pattern
		if rt.Rule.Scope != route.ScopeNamespace {
			continue
		}
		call := routeCalls[pattern]
		path := call[0] + "?namespace=other"
		if rt.NamespaceParam != "" {
			path = "/v1/namespaces/other"
		}
		method, _, _ := strings.Cut(pattern, " ")
		t.Run(pattern, func(t *testing.T) {
			before := contentIndex(s)
			got := send(t, s, defaults, method, path, call[1])
			if got.status != http.StatusForbidden || !strings.Contains(got.msg, `in namespace "other"`) {
				t.Fatalf("%s %s with a token of default: %+v, want 403 naming namespace other", method, path, got)
			}
			if contentIndex(s) != before {
				t.Fatal("a refused request wrote the state")
			}
			if got := send(t, s, other, method, path, call[1]); got.status == http.StatusForbidden {
				t.Fatalf("%s %s with the token of other: %+v, want allowed", method, path, got)
			}
		})
	}
}

// TestBadTokens: a malformed, unknown, revoked or expired token gets a
// 403 naming what was wrong, for reads and writes alike, and changes
// nothing.
func TestBadTokens(t *testing.T) {
	s, management, advance := aclServer(t)
	admin := api.NewClient(s.Addr())
	admin.Token = management
	all := &api.ACLPolicy{Name: "all", Namespaces: map[string][]string{"*": api.NamespaceCapabilities}}
	revoked := tokenWith(t, s, management, all, "")
	if err := admin.RevokeACLToken(context.Background(), revoked.AccessorID); err != nil {
		t.Fatal(err)
	}
	expiring := tokenWith(t, s, management, all, "1h")
	valid := tokenWith(t, s, management, all, "")
	if got := send(t, s, expiring.SecretID, "GET", "/v1/workloads", ""); got.status != http.StatusOK {
		t.Fatalf("a token before it expires: %+v", got)
	}
	advance(2 * time.Hour)
	cases := []struct {
		name, secret, code, says string
	}{
		{"malformed", "not-a-token", "acl-token-malformed", "malformed"},
		{"unknown", strings.Repeat("ab", 32), "acl-token-unknown", "unknown to this cell"},
		{"revoked", revoked.SecretID, "acl-token-revoked", revoked.AccessorID + " (holder of all) was revoked"},
		{"expired", expiring.SecretID, "acl-token-expired", expiring.AccessorID + " (holder of all) expired"},
	}
	for _, tc := range cases {
		for _, req := range [][3]string{{"GET", "/v1/workloads", ""}, {"POST", "/v1/workloads", fmt.Sprintf(oneReplica, "w")}, {"GET", "/v1/acl/token/self", ""}} {
			t.Run(tc.name+"/"+req[0]+req[1], func(t *testing.T) {
				before := contentIndex(s)
				got := send(t, s, tc.secret, req[0], req[1], req[2])
				if got.status != http.StatusForbidden || got.code != tc.code || !strings.Contains(got.msg, tc.says) {
					t.Fatalf("%+v, want 403 %s saying %q", got, tc.code, tc.says)
				}
				if contentIndex(s) != before {
					t.Fatal("a refused request wrote the state")
				}
			})
		}
	}
	if got := send(t, s, valid.SecretID, "POST", "/v1/workloads", fmt.Sprintf(oneReplica, "w")); got.status != http.StatusOK {
		t.Fatalf("a valid token: %+v", got)
	}
	// Listings never show a secret or its hash.
	list := send(t, s, management, "GET", "/v1/acl/tokens", "")
	if list.status != http.StatusOK {
		t.Fatalf("list tokens: %+v", list)
	}
	req, _ := http.NewRequest("GET", s.Addr()+"/v1/acl/tokens", nil)
	req.Header.Set(api.HeaderToken, management)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, secret := range []string{management, valid.SecretID, tokenHash(valid.SecretID)} {
		if strings.Contains(string(b), secret) {
			t.Fatalf("the token listing shows a secret or its hash: %s", b)
		}
	}
}

// contentIndex is the newest index of the state's content: everything but
// the audit log, which records refused requests too.
func contentIndex(s *Server) uint64 {
	snap := s.State().Snapshot()
	var idx uint64
	for _, t := range []string{state.TableWorkloads, state.TableNodes, state.TableAllocs, state.TableEvals, state.TableEvents,
		state.TableConfig, state.TableACLPolicies, state.TableACLTokens, state.TableNamespaces} {
		idx = max(idx, snap.TableIndex(nil, t))
	}
	return idx
}

// tokenHash is what the cell stores of a token's secret (httpapi's
// aclTokenHash), to check that no answer shows it.
func tokenHash(secret string) string {
	h := sha256.Sum256([]byte("strata acl token\x00" + secret))
	return hex.EncodeToString(h[:])
}
