package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/pki"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
	"github.com/strata-dev/strata/internal/state"
)

// The follower matrices (issue 18, defects 1 and 11). A follower used to
// forward every request before any check ran, and the leader skipped the
// agent's certificate check for a forwarded request ("that server
// checked it": none had), so a rogue node with the join token alone
// registered through a follower and read another tenant's secrets. Every
// decision must hold whichever server receives the request: each matrix
// calls every route of the server's own table (a new route cannot escape
// it) as every kind of caller, at the leader, through a follower, and with
// ?stale at the follower, and wants the same verdict from all three — the
// one the route's rule gives.

// matrixCell is a TLS cell of three servers with the node n1 registered
// by its agent, and the means to call any route as any caller.
type matrixCell struct {
	c                  *servertest.Cell
	leader, follower   int
	n1Secret           string
	clients            map[pki.Role]*http.Client
	fresh              atomic.Int64
	routes             route.Group
	leaderState        func() *state.Snapshot
	managementToken    string
	bootstrapCallsSeen int
}

func newMatrixCell(t *testing.T, acl bool) *matrixCell {
	t.Helper()
	withTLS := servertest.WithTLS(t)
	c := servertest.Start(t, 3, func(i int, cfg *server.Config) {
		withTLS(i, cfg)
		cfg.ACL = acl
	})
	m := &matrixCell{c: c, clients: map[pki.Role]*http.Client{}}
	m.leader = c.Leader()
	m.follower = c.Follower(m.leader)
	c.WaitReady(m.follower)
	for _, role := range []pki.Role{"", pki.RoleCLI, pki.RoleServer, pki.RoleAgent, pki.RoleScrape} {
		m.clients[role] = c.HTTPClientAs(role)
	}
	m.routes = c.Servers[m.leader].Routes()
	lead := c.Servers[m.leader]
	m.leaderState = func() *state.Snapshot { return lead.State().Snapshot() }
	if acl {
		cl := c.ClientOf(c.Addr(m.leader))
		tok, err := cl.ACLBootstrap(context.Background())
		if err != nil {
			t.Fatalf("bootstrap: %v", err)
		}
		m.managementToken = tok.SecretID
	}
	// n1, registered by its agent at the leader: the node the agent
	// routes are called for.
	m.n1Secret = nodeauth.NewSecret()
	body, _ := json.Marshal(matrixNode("n1"))
	v := m.do(t, m.leader, pki.RoleAgent, "", "POST", "/v1/agent/nodes", string(body), map[string]string{
		api.HeaderNodeID: "n1", api.HeaderNodeSecret: m.n1Secret, api.HeaderJoinToken: c.JoinToken()})
	if v.status != http.StatusOK {
		t.Fatalf("register n1 with an agent certificate: %+v", v)
	}
	servertest.Eventually(t, 10e9, "n1 known to the follower", func() error {
		if c.Servers[m.follower].State().Snapshot().NodeKey("n1") == nil {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	return m
}

func matrixNode(id string) *api.Node {
	return &api.Node{ID: id, Name: id, Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 8 << 30, DiskBytes: 1 << 30, NetMbps: 1000}}
}

type verdict struct {
	status int
	code   string
	msg    string
}

func (v verdict) denied() bool { return v.status == http.StatusForbidden }

// do sends one request to server i as a client with a certificate of
// role, carrying token and headers.
func (m *matrixCell) do(t *testing.T, i int, role pki.Role, token, method, path, body string, headers map[string]string) verdict {
	t.Helper()
	req, err := http.NewRequest(method, m.c.Addr(i)+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set(api.HeaderToken, token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := m.clients[role].Do(req)
	if err != nil {
		t.Fatalf("%s %s as %q: %v", method, path, role, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var er api.ErrorResponse
	json.Unmarshal(b, &er)
	return verdict{resp.StatusCode, er.Code, er.Error}
}

// call is the request of pattern: the ACL matrix's harmless call, or for
// an agent route one with n1's credentials (a registration: of a new node
// with the join token), so that only the caller's certificate decides.
func (m *matrixCell) call(pattern string) (method, path, body string, headers map[string]string) {
	method, _, found := strings.Cut(pattern, " ")
	if !found {
		method = "GET"
	}
	c := server.RouteCalls[pattern]
	path, body = c[0], c[1]
	n1 := map[string]string{api.HeaderNodeID: "n1", api.HeaderNodeSecret: m.n1Secret}
	switch pattern {
	case "POST /v1/agent/nodes":
		id := fmt.Sprintf("new-%d", m.fresh.Add(1))
		b, _ := json.Marshal(matrixNode(id))
		return method, path, string(b), map[string]string{api.HeaderNodeID: id, api.HeaderNodeSecret: nodeauth.NewSecret(), api.HeaderJoinToken: m.c.JoinToken()}
	case "PUT /v1/agent/nodes/{id}/heartbeat", "GET /v1/agent/nodes/{id}/allocations", "GET /v1/agent/nodes/{id}/incoming/{alloc}":
		path = strings.Replace(path, "/nodes/nope/", "/nodes/n1/", 1)
		return method, path, body, n1
	case "POST /v1/agent/allocations", "POST /v1/agent/allocations/{id}/migration":
		return method, path, body, n1
	}
	return method, path, body, nil
}

// contentIndex is the leader's newest index of the cell's content (the
// audit log aside, which records refusals).
func (m *matrixCell) contentIndex() uint64 {
	snap := m.leaderState()
	var idx uint64
	for _, t := range []string{state.TableWorkloads, state.TableNodes, state.TableAllocs, state.TableEvals,
		state.TableConfig, state.TableACLPolicies, state.TableACLTokens, state.TableNamespaces} {
		idx = max(idx, snap.TableIndex(nil, t))
	}
	return idx
}

// caller is one kind of client of a matrix.
type caller struct {
	name  string
	role  pki.Role // the certificate it presents ("": none)
	token string
}

// run calls every route as every caller at the leader, through the
// follower and (reads) with ?stale at the follower, and checks each
// verdict: allowed, or refused with a 403 that changes nothing. The
// status endpoints take anyone, the agents' routes an agent's
// certificate (with the node's secret), ACLs on or off; users(rt, c)
// says whether c may call a user's route rt.
func (m *matrixCell) run(t *testing.T, callers []caller, users func(rt route.Route, c caller) bool) {
	want := func(rt route.Route, c caller) bool {
		switch {
		case rt.Rule.Scope == route.ScopeOpen:
			return true
		case nodeScoped(rt):
			return c.role == pki.RoleAgent
		}
		return users(rt, c)
	}
	rules := map[string]route.Route{"": {Pattern: "", Rule: route.Open}} // the mux's own answers
	for _, rt := range m.routes {
		rules[rt.Pattern] = rt
	}
	for pattern, rt := range rules {
		if _, ok := server.RouteCalls[pattern]; !ok {
			t.Errorf("route %q has no call (acl_test.go's routeCalls)", pattern)
			continue
		}
		for _, c := range callers {
			t.Run(pattern+"/"+c.name, func(t *testing.T) {
				allowed := want(rt, c)
				type target struct {
					name  string
					i     int
					stale bool
				}
				targets := []target{{"the leader", m.leader, false}, {"a follower", m.follower, false}}
				if method, _, _, _ := m.call(pattern); method == "GET" {
					targets = append(targets, target{"a follower with ?stale", m.follower, true})
				}
				for _, to := range targets {
					method, path, body, headers := m.call(pattern)
					if to.stale {
						path += map[bool]string{true: "&stale", false: "?stale"}[strings.Contains(path, "?")]
					}
					before := m.contentIndex()
					got := m.do(t, to.i, c.role, c.token, method, path, body, headers)
					switch {
					case allowed && got.denied():
						t.Errorf("%s %s as %s at %s: %d %s %q, want allowed", method, path, c.name, to.name, got.status, got.code, got.msg)
					case !allowed && !got.denied():
						t.Errorf("%s %s as %s at %s: %d %s %q, want 403", method, path, c.name, to.name, got.status, got.code, got.msg)
					case !allowed && m.contentIndex() != before:
						t.Errorf("a refused %s %s as %s at %s wrote the state", method, path, c.name, to.name)
					}
				}
			})
		}
	}
}

// nodeScoped reports whether a route is an agent's: the agent's
// certificate is needed, ACLs on or off.
func nodeScoped(rt route.Route) bool {
	return rt.Rule.Scope == route.ScopeNode || rt.Rule.Scope == route.ScopeNodeJoin
}

// TestCertificateMatrixThroughAFollower: a TLS cell without ACLs, where
// client certificates authenticate (defect 11: TLS without --acl let
// anyone with the CA file in). Every route × every certificate role (and
// none): the agents' routes take only an agent's certificate (with the
// node's secret); the users' take a CLI's or a server's; a scraper's reads
// /metrics only; the status endpoints take anyone.
func TestCertificateMatrixThroughAFollower(t *testing.T) {
	m := newMatrixCell(t, false)
	callers := []caller{{name: "no certificate"}, {name: "cli", role: pki.RoleCLI}, {name: "server", role: pki.RoleServer},
		{name: "agent", role: pki.RoleAgent}, {name: "scrape", role: pki.RoleScrape}}
	m.run(t, callers, func(rt route.Route, c caller) bool {
		switch {
		case rt.Rule.Scope == route.ScopeToken:
			return false // a token reading itself: there is none
		case c.role == pki.RoleCLI, c.role == pki.RoleServer:
			return true
		case c.role == pki.RoleScrape:
			return rt.Scrape
		}
		return false
	})
}

// TestACLMatrixThroughAFollower: a TLS cell with ACLs. Every route ×
// every capability's token (and none, and management), with no
// certificate, and an agent's certificate: the users' routes follow the
// tokens (TestACLMatrix's rules); the agents' need the agent's
// certificate with the node's secret, whatever the token.
func TestACLMatrixThroughAFollower(t *testing.T) {
	m := newMatrixCell(t, true)
	admin := m.c.ClientOf(m.c.Addr(m.leader))
	admin.Token = m.managementToken
	grants := map[string]route.Rule{}
	callers := []caller{{name: "anonymous"}, {name: "management", token: m.managementToken},
		{name: "agent certificate", role: pki.RoleAgent}}
	token := func(name string, p *api.ACLPolicy, rule route.Rule) {
		if _, err := admin.ApplyACLPolicy(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		tok, err := admin.CreateACLToken(context.Background(), &api.ACLTokenRequest{Name: name, Policies: []string{p.Name}})
		if err != nil {
			t.Fatal(err)
		}
		callers = append(callers, caller{name: name, token: tok.SecretID})
		grants[name] = rule
	}
	for _, c := range api.NamespaceCapabilities {
		token("ns-"+c, &api.ACLPolicy{Name: "ns-" + c, Namespaces: map[string][]string{"default": {c}}}, route.Rule{Scope: route.ScopeNamespace, Cap: c})
	}
	for _, c := range api.CellCapabilities {
		token("cell-"+c, &api.ACLPolicy{Name: "cell-" + c, Cell: []string{c}}, route.Rule{Scope: route.ScopeCell, Cap: c})
	}
	servertest.Eventually(t, 10e9, "the tokens known to the follower", func() error {
		if n := len(m.c.Servers[m.follower].State().Snapshot().ACLTokens(nil)); n < len(callers)-2 {
			return fmt.Errorf("%d tokens", n)
		}
		return nil
	})
	m.run(t, callers, func(rt route.Route, c caller) bool {
		switch {
		case c.token == "":
			return false
		case c.token == m.managementToken, rt.Rule.Scope == route.ScopeToken:
			return true
		}
		return grants[c.name] == rt.Rule
	})
}
