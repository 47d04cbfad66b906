package api

// Headers that carry credentials. A request carries at most what its
// caller has: a user's ACL token, or an agent's node identity (and, to
// register a node the cell does not know yet, the cell's join token).
const (
	// HeaderToken carries an ACL token's secret (the CLI's STRATA_TOKEN or
	// --token).
	HeaderToken = "X-Strata-Token"
	// HeaderJoinToken carries the cell's join token: it lets an agent
	// register a node id the cell does not know yet.
	HeaderJoinToken = "X-Strata-Join-Token"
	// HeaderNodeID and HeaderNodeSecret authenticate an agent as one node.
	HeaderNodeID     = "X-Strata-Node-ID"
	HeaderNodeSecret = "X-Strata-Node-Secret"
)

// CodeJoinToken is the error code of a new node's registration refused
// for its join token (missing or wrong): retrying with the same token
// cannot succeed, so the agent stops and says where the token is.
const CodeJoinToken = "join-token"

// HeaderDefaultName marks a registration whose node name is the one the
// agent chose by default (its host's), which it changes when another node
// has it; CodeNodeNameTaken is the code of that refusal.
const (
	HeaderDefaultName = "X-Strata-Default-Name"
	CodeNodeNameTaken = "node-name-taken"
)

// NodeIdentity is what an agent proves it is with: its node id, the secret
// it registered that id with (kept in its data dir), and the cell's join
// token, needed only to register an id the cell does not know yet.
type NodeIdentity struct {
	ID        string
	Secret    string
	JoinToken string
}

// AllocUpdatesResponse is the server's answer to an agent's status report.
type AllocUpdatesResponse struct {
	Index uint64 `json:"index"`
	// Refused lists the updates the server did not apply, each with why (a
	// finished allocation reported running again, say); the others were
	// applied.
	Refused []RefusedUpdate `json:"refused,omitempty"`
}

// RefusedUpdate is one update of a report the server did not apply.
type RefusedUpdate struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}
