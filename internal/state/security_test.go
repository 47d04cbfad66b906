package state

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/strata-dev/strata/api"
)

// TestSecurityStateSurvivesSnapshots: node keys, the join token, ACL
// policies and tokens and the audit log go through a snapshot's JSON and
// come back the same; a node key is never replaced by another.
func TestSecurityStateSurvivesSnapshots(t *testing.T) {
	s := New()
	err := s.Write(1, func(w *WriteTxn) error {
		for _, f := range []func() error{
			func() error { return w.SetNodeKey(&NodeKey{NodeID: "n1", Verifier: "v1"}) },
			func() error { return w.SetCellSecret(CellSecretJoinToken, "join") },
			func() error { return w.UpsertACLPolicy(&api.ACLPolicy{Name: "p", Cell: []string{api.CapRead}}) },
			func() error {
				return w.BootstrapACL(&ACLToken{ACLToken: api.ACLToken{AccessorID: "a1", Name: "root", Management: true}, SecretHash: "h1"})
			},
			func() error {
				return w.AppendAudit([]*api.AuditEntry{{Who: "anonymous", Method: "POST", Path: "/v1/workloads"}})
			},
		} {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(2, func(w *WriteTxn) error { return w.SetNodeKey(&NodeKey{NodeID: "n1", Verifier: "other"}) }); !errors.Is(err, ErrNodeIDTaken) {
		t.Fatalf("re-keying a node: %v, want ErrNodeIDTaken", err)
	}
	if err := s.Write(3, func(w *WriteTxn) error {
		return w.BootstrapACL(&ACLToken{ACLToken: api.ACLToken{AccessorID: "a2", Management: true}, SecretHash: "h2"})
	}); !errors.Is(err, ErrACLBootstrapped) {
		t.Fatalf("a second bootstrap: %v, want ErrACLBootstrapped", err)
	}
	b, err := json.Marshal(s.Snapshot().Dump())
	if err != nil {
		t.Fatal(err)
	}
	var d Dump
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	r, err := Restore(&d)
	if err != nil {
		t.Fatal(err)
	}
	snap := r.Snapshot()
	if k := snap.NodeKey("n1"); k == nil || k.Verifier != "v1" {
		t.Errorf("node key after restore: %+v", k)
	}
	if snap.CellSecret(CellSecretJoinToken) != "join" || !snap.ACLBootstrapped() {
		t.Error("cell secrets lost in the snapshot")
	}
	if p := snap.ACLPolicy("p"); p == nil || len(p.Cell) != 1 {
		t.Errorf("policy after restore: %+v", p)
	}
	if tok := snap.ACLTokenBySecretHash("h1"); tok == nil || tok.AccessorID != "a1" || tok.SecretID != "" {
		t.Errorf("token after restore: %+v", tok)
	}
	if a := snap.Audit(nil); len(a) != 1 || a[0].Path != "/v1/workloads" {
		t.Errorf("audit log after restore: %+v", a)
	}
}
