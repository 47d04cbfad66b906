package fsm

import (
	"errors"
	"reflect"
	"testing"

	"github.com/strata-dev/strata/internal/state"
)

// TestCommandValuesNeverChange holds every command's value as logs and
// snapshots on disk hold it. A command added gets a line here; a line
// never changes and is never removed (a removed command's value stays
// taken: old logs hold it).
func TestCommandValuesNeverChange(t *testing.T) {
	want := map[Type]string{
		1: "upsert-workload", 2: "stop-workload", 3: "upsert-node", 4: "node-status", 5: "upsert-evals",
		6: "apply-plan", 7: "alloc-client-update", 8: "set-cell-config", 9: "apply-plan-part", 10: "set-cell-id",
		11: "node-op", 40: "migrate",
		64: "set-cell-secret", 65: "acl-bootstrap", 66: "upsert-acl-policy", 67: "delete-acl-policy",
		68: "upsert-acl-token", 69: "append-audit",
		96: "upsert-namespace", 97: "delete-namespace",
		112: "promote-deployment", 113: "fail-deployment",
		128: "collect-garbage", 129: "retry-evaluation", 130: "record-events",
	}
	for v := range 256 {
		c := Commands.Lookup(Type(v))
		name, held := want[Type(v)]
		switch {
		case held && c == nil:
			t.Errorf("value %d (%s) is gone from the table: old logs hold it", v, name)
		case held && c.Name != name:
			t.Errorf("value %d is %q in the table, %q on disk", v, c.Name, name)
		case !held && c != nil:
			t.Errorf("value %d (%s) is new: add it to this test", v, c.Name)
		}
	}
}

// TestCommandTableRefusesCollisions: the class of defect where two
// families of commands took one value (creating a namespace was applied
// as promoting a deployment) — or one name, or one body type — is refused
// when the table is built, so the server never starts with it.
func TestCommandTableRefusesCollisions(t *testing.T) {
	apply := func(*state.WriteTxn, *UpsertNamespace) (any, error) { return nil, nil }
	applyPromote := func(*state.WriteTxn, *PromoteDeployment) (any, error) { return nil, nil }
	tests := []struct {
		name     string
		commands []Command
		want     error
	}{
		{"two families on one value", []Command{
			command(96, "upsert-namespace", Def[UpsertNamespace]{Apply: apply}),
			command(96, "promote-deployment", Def[PromoteDeployment]{Apply: applyPromote}),
		}, ErrDuplicateValue},
		{"one name twice", []Command{
			command(96, "upsert-namespace", Def[UpsertNamespace]{Apply: apply}),
			command(112, "upsert-namespace", Def[PromoteDeployment]{Apply: applyPromote}),
		}, ErrDuplicateName},
		{"one body for two commands", []Command{
			command(96, "upsert-namespace", Def[UpsertNamespace]{Apply: apply}),
			command(97, "create-namespace", Def[UpsertNamespace]{Apply: apply}),
		}, ErrDuplicateBody},
		{"value zero", []Command{command(0, "upsert-namespace", Def[UpsertNamespace]{Apply: apply})}, ErrIncomplete},
		{"no apply", []Command{command(96, "upsert-namespace", Def[UpsertNamespace]{})}, ErrIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewTable(tt.commands...); !errors.Is(err, tt.want) {
				t.Fatalf("NewTable: %v, want %v", err, tt.want)
			}
		})
	}
	// A decode-only command (an old form) may share its body type.
	if _, err := NewTable(
		command(96, "upsert-namespace", Def[UpsertNamespace]{Apply: apply}),
		command(95, "old-upsert-namespace", Def[UpsertNamespace]{Apply: apply, DecodeOnly: true}),
	); err != nil {
		t.Fatalf("a decode-only command beside its successor: %v", err)
	}
}

// TestEveryCommandDecodesAsItself: every command's entry, encoded from its
// body, decodes back to the same command and body type; a proposable body
// encodes under its own command's value and no other.
func TestEveryCommandDecodesAsItself(t *testing.T) {
	for _, c := range Commands.Commands() {
		t.Run(c.Name, func(t *testing.T) {
			body := reflect.New(c.body.Elem()).Interface()
			var entry []byte
			var err error
			if c.Value == planPartValue {
				var parts [][]byte
				parts, err = PlanParts(body.(*ApplyPlan), MaxPlanPartBytes, func(string) StoppedAlloc { return StoppedAlloc{} })
				if err == nil {
					entry = parts[0]
				}
			} else {
				entry, err = c.Encode(body)
			}
			if err != nil {
				t.Fatal(err)
			}
			if Type(entry[0]) != c.Value {
				t.Fatalf("encoded as %d, want %d", entry[0], c.Value)
			}
			got, decoded, err := Commands.Decode(entry)
			if err != nil {
				t.Fatal(err)
			}
			if got != c || reflect.TypeOf(decoded) != c.body {
				t.Fatalf("decoded as %s %T, want %s %s", got.Name, decoded, c.Name, c.body)
			}
			if c.decodeOnly {
				return
			}
			byBody, err := Commands.Encode(body)
			if err != nil {
				t.Fatal(err)
			}
			if Type(byBody[0]) != c.Value {
				t.Fatalf("its body encodes as %s", Commands.Name(Type(byBody[0])))
			}
		})
	}
}
