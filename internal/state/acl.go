package state

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
)

// ACL policies and tokens. A token is stored with the hash of its secret
// (never the secret); the secret finds it through that hash.

const (
	tableACLPolicies = "aclPolicies"
	tableACLTokens   = "aclTokens"
	// cellSecretACLBootstrapped is set by the one bootstrap a cell allows.
	cellSecretACLBootstrapped = "acl-bootstrapped"
)

// Exported table names for TableIndex.
const (
	TableACLPolicies = tableACLPolicies
	TableACLTokens   = tableACLTokens
)

// ErrACLBootstrapped refuses a second ACL bootstrap.
var ErrACLBootstrapped = errors.New("the cell's ACLs are already bootstrapped")

// ACLToken is a token as the store keeps it: the API's token without its
// secret, and the secret's hash.
type ACLToken struct {
	api.ACLToken
	SecretHash string `json:"secretHash"`
}

func aclTables() map[string]*memdb.TableSchema {
	return map[string]*memdb.TableSchema{
		tableAudit: auditTable(),
		tableACLPolicies: {Name: tableACLPolicies, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
		}},
		tableACLTokens: {Name: tableACLTokens, Indexes: map[string]*memdb.IndexSchema{
			"id":     {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "AccessorID"}},
			"secret": {Name: "secret", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "SecretHash"}},
		}},
	}
}

// ACLBootstrapped reports whether the cell's ACLs were bootstrapped.
func (s *Snapshot) ACLBootstrapped() bool { return s.CellSecret(cellSecretACLBootstrapped) != "" }

// ACLPolicy returns a policy, nil if there is none of that name.
func (s *Snapshot) ACLPolicy(name string) *api.ACLPolicy {
	obj, err := s.txn.First(tableACLPolicies, "id", name)
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*api.ACLPolicy)
}

// ACLPolicies lists every policy, by name.
func (s *Snapshot) ACLPolicies(ws memdb.WatchSet) []*api.ACLPolicy {
	var out []*api.ACLPolicy
	it, err := s.txn.Get(tableACLPolicies, "id")
	if err != nil {
		return nil
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*api.ACLPolicy))
	}
	return out
}

// ACLTokenByAccessor returns a token by its accessor id.
func (s *Snapshot) ACLTokenByAccessor(accessor string) *ACLToken {
	obj, err := s.txn.First(tableACLTokens, "id", accessor)
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*ACLToken)
}

// ACLTokenBySecretHash returns the token whose secret has that hash.
func (s *Snapshot) ACLTokenBySecretHash(hash string) *ACLToken {
	obj, err := s.txn.First(tableACLTokens, "secret", hash)
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*ACLToken)
}

// ACLTokens lists every token, by accessor id.
func (s *Snapshot) ACLTokens(ws memdb.WatchSet) []*ACLToken {
	var out []*ACLToken
	it, err := s.txn.Get(tableACLTokens, "id")
	if err != nil {
		return nil
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*ACLToken))
	}
	return out
}

// BootstrapACL stores the cell's first management token; a second
// bootstrap fails with ErrACLBootstrapped (two racing bootstraps: the log
// decides which won).
func (w *WriteTxn) BootstrapACL(t *ACLToken) error {
	if w.Snapshot().ACLBootstrapped() {
		return ErrACLBootstrapped
	}
	if err := w.SetCellSecret(cellSecretACLBootstrapped, "true"); err != nil {
		return err
	}
	return w.UpsertACLToken(t)
}

// UpsertACLPolicy stores a policy (a fresh object owned by the store).
func (w *WriteTxn) UpsertACLPolicy(p *api.ACLPolicy) error {
	if old := w.Snapshot().ACLPolicy(p.Name); old != nil {
		p.CreateIndex = old.CreateIndex
	} else {
		p.CreateIndex = w.index
	}
	p.ModifyIndex = w.index
	return w.insert(tableACLPolicies, p)
}

// DeleteACLPolicy removes a policy.
func (w *WriteTxn) DeleteACLPolicy(name string) error {
	old := w.Snapshot().ACLPolicy(name)
	if old == nil {
		return fmt.Errorf("policy %q: %w", name, ErrNotFound)
	}
	w.touched[tableACLPolicies] = true
	return w.txn.Delete(tableACLPolicies, old)
}

// UpsertACLToken stores a token (a fresh object owned by the store).
func (w *WriteTxn) UpsertACLToken(t *ACLToken) error {
	t.SecretID = ""
	if old := w.Snapshot().ACLTokenByAccessor(t.AccessorID); old != nil {
		t.CreateIndex = old.CreateIndex
	} else {
		t.CreateIndex = w.index
	}
	t.ModifyIndex = w.index
	return w.insert(tableACLTokens, t)
}

func (s *Snapshot) dumpACL(d *Dump) {
	d.ACLPolicies = s.ACLPolicies(nil)
	d.ACLTokens = s.ACLTokens(nil)
	d.Audit = s.Audit(nil)
}

func restoreACL(txn *memdb.Txn, d *Dump) error {
	if err := restoreAudit(txn, d); err != nil {
		return err
	}
	for _, p := range d.ACLPolicies {
		if err := txn.Insert(tableACLPolicies, p); err != nil {
			return fmt.Errorf("restore %s: %w", tableACLPolicies, err)
		}
	}
	for _, t := range d.ACLTokens {
		if err := txn.Insert(tableACLTokens, t); err != nil {
			return fmt.Errorf("restore %s: %w", tableACLTokens, err)
		}
	}
	return nil
}
