package server

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/state"
)

// Node identity (docs/security.md):
//
//   - The cell has one join token, kept in its replicated state. The first
//     leader sets it: Config.JoinToken when given, else a random one. A
//     server given --join-token sets it again when it leads and the cell's
//     differs (that is how the token is rotated). Every server writes the
//     cell's token to <data-dir>/join-token (0600), where agents on the
//     same machine and the test harnesses find it.
//   - An agent registers a node id the cell does not know with the join
//     token and a secret of its own making (kept in its data dir; the agent
//     makes it, so a registration whose answer was lost can be sent again).
//     The cell stores the secret's verifier, never the secret.
//   - Every later call for that node (registration, heartbeat, watch,
//     status report) must carry the node id and its secret. A node id with
//     a key cannot be registered by anyone without its secret.
//   - A node the cell knows without a key (registered before node identity
//     existed) is answered "node unknown": its agent registers again, with
//     the join token, and so gets its key.

// joinTokenFile is where a server writes the cell's join token.
const joinTokenFile = "join-token"

// errNodeAuth is the code of an agent call that did not prove its node.
const codeNodeAuth = "node-auth"

func nodeAuthError(format string, args ...any) error {
	return &httpError{status: http.StatusForbidden, code: codeNodeAuth, msg: fmt.Sprintf(format, args...)}
}

// joinTokenError refuses a new node's registration for its join token,
// saying where the right one is.
func joinTokenError(format string, args ...any) error {
	return &httpError{status: http.StatusForbidden, code: api.CodeJoinToken,
		msg: fmt.Sprintf(format, args...) + ": every server of the cell keeps it in <its data-dir>/" + joinTokenFile +
			"; give it to the agent with --join-token-file, --join-token or $STRATA_JOIN_TOKEN"}
}

// JoinToken returns the cell's join token as this server's state holds
// it ("" until the first leader set it). An agent needs it to register.
func (s *Server) JoinToken() string {
	return s.State().Snapshot().CellSecret(state.CellSecretJoinToken)
}

// ensureJoinToken sets the cell's join token, as the leader, when the cell
// has none or the configured one differs from it.
func (s *Server) ensureJoinToken() {
	have := s.JoinToken()
	want := s.cfg.JoinToken
	switch {
	case want == "" && have != "":
		return
	case want == "":
		want = nodeauth.NewSecret()
	case want == have:
		return
	}
	if _, err := s.propose(cmdSetCellSecret, &setCellSecretCmd{Name: state.CellSecretJoinToken, Value: want}); err != nil {
		s.logger.Error("set the cell's join token", "err", err)
		return
	}
	s.logger.Info("the cell's join token is set", "file", filepath.Join(s.cfg.DataDir, joinTokenFile))
}

// writeJoinTokenFile keeps <data-dir>/join-token equal to the cell's token.
func (s *Server) writeJoinTokenFile(token string) {
	s.joinFileMu.Lock()
	defer s.joinFileMu.Unlock()
	path := filepath.Join(s.cfg.DataDir, joinTokenFile)
	if b, err := os.ReadFile(path); err == nil && string(b) == token+"\n" {
		return
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(token+"\n"), 0o600); err != nil {
		s.logger.Error("write the join token file", "path", tmp, "err", err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		s.logger.Error("write the join token file", "path", path, "err", err)
	}
}

// nodeUnknown is the answer for a node id the cell has no key for.
func nodeUnknown(id string, known bool) error {
	msg := "node " + id + " is not registered"
	if known {
		msg = "node " + id + " has no identity yet: its agent must register again with the cell's join token"
	}
	return &httpError{status: http.StatusNotFound, code: "node-unknown", msg: msg}
}

// authenticateNode checks that r speaks for node id: the node has a key
// and r carries the node's id and secret. An empty id takes the id from
// the request's header (a status report names no node in its path).
func (s *Server) authenticateNode(r *http.Request, snap *state.Snapshot, id string) (string, error) {
	if err := s.requireAgentCert(r); err != nil {
		return "", err
	}
	claimed := r.Header.Get(api.HeaderNodeID)
	secret := r.Header.Get(api.HeaderNodeSecret)
	if id == "" {
		if claimed == "" {
			return "", nodeAuthError("no %s header: an agent's call names its node", api.HeaderNodeID)
		}
		id = claimed
	}
	if snap.Node(id) == nil {
		return "", nodeUnknown(id, false)
	}
	key := snap.NodeKey(id)
	if key == nil {
		return "", nodeUnknown(id, true)
	}
	switch {
	case claimed != "" && claimed != id:
		return "", nodeAuthError("%s is %q but the call is for node %q: an agent speaks only for its own node", api.HeaderNodeID, claimed, id)
	case secret == "":
		return "", nodeAuthError("no %s header: a call for node %s must carry the node's secret", api.HeaderNodeSecret, id)
	case !nodeauth.CheckSecret(secret, key.Verifier):
		return "", nodeAuthError("wrong node secret for node %s", id)
	}
	callerOf(r.Context()).Node = id
	return id, nil
}

// registrationKey decides whether r may register n, and returns the key
// the registration carries: the node's own key when it has one (r must
// carry its secret), else a new key from r's secret (r must carry the
// join token).
func (s *Server) registrationKey(r *http.Request, snap *state.Snapshot, n *api.Node) (*state.NodeKey, error) {
	if err := s.requireAgentCert(r); err != nil {
		return nil, err
	}
	secret := r.Header.Get(api.HeaderNodeSecret)
	if claimed := r.Header.Get(api.HeaderNodeID); claimed != "" && claimed != n.ID {
		return nil, nodeAuthError("%s is %q but the body registers node %q", api.HeaderNodeID, claimed, n.ID)
	}
	if key := snap.NodeKey(n.ID); key != nil {
		if !nodeauth.CheckSecret(secret, key.Verifier) {
			return nil, &httpError{status: http.StatusForbidden, code: "node-id-taken",
				msg: fmt.Sprintf("node %s is registered by another agent; only that agent (with its node secret) may register it again", n.ID)}
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
		return nil, &httpError{status: http.StatusServiceUnavailable, code: "not-ready", msg: "the cell has no join token yet; retry"}
	case !nodeauth.Equal(join, cell):
		return nil, joinTokenError("wrong join token")
	}
	if problem := nodeauth.CheckNew(secret); problem != "" {
		return nil, nodeAuthError("%s %s", api.HeaderNodeSecret, problem)
	}
	callerOf(r.Context()).Node = n.ID
	return &state.NodeKey{NodeID: n.ID, Verifier: nodeauth.Verifier(secret)}, nil
}

// registrationError maps the FSM's refusal of a node key.
func registrationError(id string, err error) error {
	if errors.Is(err, state.ErrNodeIDTaken) {
		return &httpError{status: http.StatusForbidden, code: "node-id-taken",
			msg: fmt.Sprintf("node %s is registered by another agent; only that agent (with its node secret) may register it again", id)}
	}
	return err
}
