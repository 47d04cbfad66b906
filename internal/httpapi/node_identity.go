package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/state"
)

// Node identity (docs/security.md):
//
//   - The cell has one join token, kept in its replicated state (the
//     leader sets it; every server writes it to <data-dir>/join-token).
//   - An agent registers a node id the cell does not know with the join
//     token and a secret of its own making (kept in its data dir; the agent
//     makes it, so a registration whose answer was lost can be sent again).
//     The cell stores the secret's verifier, never the secret.
//   - Every later call for that node (registration, heartbeat, watch,
//     status report, migration steps) must carry the node id and its
//     secret: the routes say so (route.ByNode), and the API's wrapper
//     checks it before the handler runs (authenticate). A node id with a
//     key cannot be registered by anyone without its secret.
//   - A node the cell knows without a key (registered before node identity
//     existed) is answered "node unknown": its agent registers again, with
//     the join token, and so gets its key.
//   - With TLS, an agent's call must also come with a certificate of role
//     agent (requireAgentCert, client_cert.go), whichever server received
//     it.

// codeNodeAuth is the code of an agent call that did not prove its node.
const codeNodeAuth = "node-auth"

func nodeAuthError(format string, args ...any) error {
	return route.Forbidden(codeNodeAuth, format, args...)
}

// joinTokenFile is where every server keeps the cell's join token, in its
// data dir (the server writes it; the agents' operators read it).
const joinTokenFile = "join-token"

// joinTokenError refuses a new node's registration for its join token,
// saying where the right one is.
func joinTokenError(format string, args ...any) error {
	return route.Forbidden(api.CodeJoinToken, "%s", fmt.Sprintf(format, args...)+": every server of the cell keeps it in <its data-dir>/"+joinTokenFile+
		"; give it to the agent with --join-token-file, --join-token or $STRATA_JOIN_TOKEN")
}

// nodeUnknown is the answer for a node id the cell has no key for.
func nodeUnknown(id string, known bool) error {
	msg := "node " + id + " is not registered"
	if known {
		msg = "node " + id + " has no identity yet: its agent must register again with the cell's join token"
	}
	return &route.Error{Status: http.StatusNotFound, Code: "node-unknown", Msg: msg}
}

// authenticate checks that r speaks for the node of a ByNode route: the
// path's rt.NodeParam, or the node r's header names (a status report
// names no node in its path). The node has a key and r carries the node's
// id and secret. The node is then the request's caller (nodeOf).
func (s *API) authenticate(r *http.Request, snap *state.Snapshot, rt route.Route) error {
	id := ""
	if rt.NodeParam != "" {
		var err error
		if id, err = route.PathID(r, rt.NodeParam); err != nil {
			return err
		}
	}
	if err := s.requireAgentCert(r); err != nil {
		return err
	}
	claimed := r.Header.Get(api.HeaderNodeID)
	secret := r.Header.Get(api.HeaderNodeSecret)
	if id == "" {
		if claimed == "" {
			return nodeAuthError("no %s header: an agent's call names its node", api.HeaderNodeID)
		}
		id = claimed
	}
	if snap.Node(id) == nil {
		return nodeUnknown(id, false)
	}
	key := snap.NodeKey(id)
	if key == nil {
		return nodeUnknown(id, true)
	}
	switch {
	case claimed != "" && claimed != id:
		return nodeAuthError("%s is %q but the call is for node %q: an agent speaks only for its own node", api.HeaderNodeID, claimed, id)
	case secret == "":
		return nodeAuthError("no %s header: a call for node %s must carry the node's secret", api.HeaderNodeSecret, id)
	case !nodeauth.CheckSecret(secret, key.Verifier):
		return nodeAuthError("wrong node secret for node %s", id)
	}
	callerOf(r.Context()).Node = id
	return nil
}

// registrationKey decides whether r may register n, and returns the key
// the registration carries: the node's own key when it has one (r must
// carry its secret), else a new key from r's secret (r must carry the
// join token).
func (s *API) registrationKey(r *http.Request, snap *state.Snapshot, n *api.Node) (*state.NodeKey, error) {
	if err := s.requireAgentCert(r); err != nil {
		return nil, err
	}
	secret := r.Header.Get(api.HeaderNodeSecret)
	if claimed := r.Header.Get(api.HeaderNodeID); claimed != "" && claimed != n.ID {
		return nil, nodeAuthError("%s is %q but the body registers node %q", api.HeaderNodeID, claimed, n.ID)
	}
	if key := snap.NodeKey(n.ID); key != nil {
		if !nodeauth.CheckSecret(secret, key.Verifier) {
			return nil, nodeIDTaken(n.ID)
		}
		callerOf(r.Context()).Node = n.ID
		return key, nil
	}
	join := r.Header.Get(api.HeaderJoinToken)
	cell := snap.CellSecret(state.CellSecretJoinToken)
	switch {
	case join == "":
		return nil, joinTokenError("node %s is new to the cell: registering it needs the cell's join token (%s)", n.ID, api.HeaderJoinToken)
	case cell == "":
		return nil, &route.Error{Status: http.StatusServiceUnavailable, Code: "not-ready", Msg: "the cell has no join token yet; retry"}
	case !nodeauth.Equal(join, cell):
		return nil, joinTokenError("wrong join token")
	}
	if problem := nodeauth.CheckNew(secret); problem != "" {
		return nil, nodeAuthError("%s %s", api.HeaderNodeSecret, problem)
	}
	callerOf(r.Context()).Node = n.ID
	return &state.NodeKey{NodeID: n.ID, Verifier: nodeauth.Verifier(secret)}, nil
}

func nodeIDTaken(id string) error {
	return route.Forbidden("node-id-taken", "node %s is registered by another agent; only that agent (with its node secret) may register it again", id)
}

// registrationError maps the FSM's refusal of a node key.
func registrationError(id string, err error) error {
	if errors.Is(err, state.ErrNodeIDTaken) {
		return nodeIDTaken(id)
	}
	return err
}
