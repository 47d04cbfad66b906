package server

import (
	"errors"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// The raft commands of the security state. Their type values start at 64,
// apart from the others, so that commands added elsewhere meanwhile never
// collide with them. Values are persisted: never renumber.
const (
	// cmdSetCellSecret sets a cell secret (the join token).
	cmdSetCellSecret commandType = 64 + iota
	// cmdACLBootstrap stores the first management token, once.
	cmdACLBootstrap
	// cmdUpsertACLPolicy and cmdDeleteACLPolicy write policies.
	cmdUpsertACLPolicy
	cmdDeleteACLPolicy
	// cmdUpsertACLToken stores a new or revoked token.
	cmdUpsertACLToken
	// cmdAppendAudit appends audit entries (audit.go).
	cmdAppendAudit
)

// appendAuditCmd carries a batch of audit entries, stamped by the leader.
type appendAuditCmd struct {
	Entries []*api.AuditEntry `json:"entries"`
}

// aclPolicyCmd stores a policy, or deletes the policy Name.
type aclPolicyCmd struct {
	Policy *api.ACLPolicy `json:"policy,omitempty"`
	Name   string         `json:"name,omitempty"`
}

// aclTokenCmd stores a token (its secret's hash only).
type aclTokenCmd struct {
	Token *state.ACLToken `json:"token"`
	// Bootstrap marks the cell's one bootstrap: the FSM refuses it when the
	// cell is bootstrapped already (two racing bootstraps: one wins).
	Bootstrap bool `json:"bootstrap,omitempty"`
}

// setCellSecretCmd sets one cell secret.
type setCellSecretCmd struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func securityCommandName(c commandType) string {
	switch c {
	case cmdSetCellSecret:
		return "set-cell-secret"
	case cmdACLBootstrap:
		return "acl-bootstrap"
	case cmdUpsertACLPolicy:
		return "upsert-acl-policy"
	case cmdDeleteACLPolicy:
		return "delete-acl-policy"
	case cmdUpsertACLToken:
		return "upsert-acl-token"
	case cmdAppendAudit:
		return "append-audit"
	}
	return ""
}

// newSecurityBody returns the body to decode a security command into, nil
// for a type that is not one.
func newSecurityBody(t commandType) any {
	switch t {
	case cmdSetCellSecret:
		return &setCellSecretCmd{}
	case cmdACLBootstrap, cmdUpsertACLToken:
		return &aclTokenCmd{}
	case cmdUpsertACLPolicy, cmdDeleteACLPolicy:
		return &aclPolicyCmd{}
	case cmdAppendAudit:
		return &appendAuditCmd{}
	}
	return nil
}

// applySecurity applies a security command; handled is false for a body
// that is not one.
func applySecurity(w *state.WriteTxn, body any) (handled bool, err error) {
	switch c := body.(type) {
	case *setCellSecretCmd:
		return true, w.SetCellSecret(c.Name, c.Value)
	case *aclPolicyCmd:
		if c.Policy != nil {
			return true, w.UpsertACLPolicy(c.Policy)
		}
		if err := w.DeleteACLPolicy(c.Name); err != nil && !errors.Is(err, state.ErrNotFound) {
			return true, err
		}
		return true, nil
	case *appendAuditCmd:
		return true, w.AppendAudit(c.Entries)
	case *aclTokenCmd:
		if c.Token == nil {
			return true, errors.New("acl token command without a token")
		}
		if c.Bootstrap {
			return true, w.BootstrapACL(c.Token)
		}
		return true, w.UpsertACLToken(c.Token)
	}
	return false, nil
}
