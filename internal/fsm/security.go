package fsm

import (
	"errors"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// The commands of the security state (docs/security.md) and of tenants
// (docs/tenants.md).

// ACLBootstrap stores the cell's first management token, once: the FSM
// refuses it when the cell is bootstrapped already (of two racing
// bootstraps, one wins).
type ACLBootstrap struct {
	Token *state.ACLToken `json:"token"`
	// Bootstrap is always true: entries carried it when one command body
	// served both this and UpsertACLToken; it stays so that they look the
	// same.
	Bootstrap bool `json:"bootstrap,omitempty"`
}

// UpsertACLToken stores a new or revoked token (its secret's hash only).
type UpsertACLToken struct {
	Token *state.ACLToken `json:"token"`
}

// UpsertACLPolicy stores a policy.
type UpsertACLPolicy struct {
	Policy *api.ACLPolicy `json:"policy,omitempty"`
}

// DeleteACLPolicy deletes the policy Name (gone already: nothing to do).
type DeleteACLPolicy struct {
	Name string `json:"name,omitempty"`
}

// AppendAudit carries a batch of audit entries, stamped by the leader.
type AppendAudit struct {
	Entries []*api.AuditEntry `json:"entries"`
}

// UpsertNamespace creates or replaces a namespace and its quota.
type UpsertNamespace struct {
	Namespace *api.Namespace `json:"namespace,omitempty"`
}

// DeleteNamespace deletes an empty namespace.
type DeleteNamespace struct {
	Name string `json:"name,omitempty"`
}

var errNoToken = errors.New("acl token command without a token")

func applyACLBootstrap(w *state.WriteTxn, c *ACLBootstrap) error {
	if c.Token == nil {
		return errNoToken
	}
	return w.BootstrapACL(c.Token)
}

func applyUpsertACLToken(w *state.WriteTxn, c *UpsertACLToken) error {
	if c.Token == nil {
		return errNoToken
	}
	return w.UpsertACLToken(c.Token)
}

func applyUpsertACLPolicy(w *state.WriteTxn, c *UpsertACLPolicy) error {
	if c.Policy == nil {
		return errors.New("acl policy command without a policy")
	}
	return w.UpsertACLPolicy(c.Policy)
}

func applyDeleteACLPolicy(w *state.WriteTxn, c *DeleteACLPolicy) error {
	if err := w.DeleteACLPolicy(c.Name); err != nil && !errors.Is(err, state.ErrNotFound) {
		return err
	}
	return nil
}

func applyAppendAudit(w *state.WriteTxn, c *AppendAudit) error { return w.AppendAudit(c.Entries) }

func applyUpsertNamespace(w *state.WriteTxn, c *UpsertNamespace) error {
	if c.Namespace == nil {
		return errors.New("namespace command without a namespace")
	}
	return w.UpsertNamespace(c.Namespace)
}

func applyDeleteNamespace(w *state.WriteTxn, c *DeleteNamespace) error {
	return w.DeleteNamespace(c.Name)
}
