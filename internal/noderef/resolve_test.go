package noderef

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

func node(id, name string) *api.Node { return &api.Node{ID: id, Name: name, Status: api.NodeReady} }

func TestResolve(t *testing.T) {
	nodes := []*api.Node{
		node("508d98df-1111", "vm"), node("869fedaa-2222", "vm"), node("86a0c3b1-3333", "db"), node("c0ffee00-4444", "508d"),
	}
	cases := []struct {
		name, ref string
		wantID    string
		wantErr   []string
	}{
		{"full id", "869fedaa-2222", "869fedaa-2222", nil},
		{"the 8 characters a listing prints", "508d98df", "508d98df-1111", nil},
		{"a short unique prefix", "c0f", "c0ffee00-4444", nil},
		{"a unique name", "db", "86a0c3b1-3333", nil},
		{"a name wins over an id prefix", "508d", "c0ffee00-4444", nil},
		{"a shared name lists the candidates", "vm", "", []string{`node name "vm" is ambiguous: 2 nodes have it`, "508d98df-1111 (vm, ready)", "869fedaa-2222 (vm, ready)"}},
		{"a prefix of several ids", "86", "", []string{`node id prefix "86" is ambiguous: 2 nodes match`, "869fedaa-2222", "86a0c3b1-3333"}},
		{"nothing matches", "zz", "", []string{`node "zz" not found`, "strata nodes"}},
		{"empty", "", "", []string{"no id or name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Resolve(nodes, tc.ref)
			if tc.wantErr == nil {
				if err != nil || n.ID != tc.wantID {
					t.Fatalf("Resolve(%q) = %v, %v; want %s", tc.ref, n, err, tc.wantID)
				}
				return
			}
			if err == nil {
				t.Fatalf("Resolve(%q) = %s, want an error", tc.ref, n.ID)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	var amb *AmbiguousError
	if _, err := Resolve(nodes, "vm"); !errors.As(err, &amb) || !amb.ByName || len(amb.Candidates) != 2 {
		t.Fatalf("ambiguous name: %v", err)
	}
	if _, err := Resolve(nodes, "zz"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("not found: %v", err)
	}
}

// TestResolveNeverGuesses: whatever the nodes and the reference, a node
// resolved is the only one with that id, the only one with that name, or
// the only one whose id has that prefix; and any node's full id resolves
// to that node.
func TestResolveNeverGuesses(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		count := rapid.IntRange(1, 8).Draw(t, "count")
		var nodes []*api.Node
		ids := map[string]bool{}
		for range count {
			id := rapid.StringMatching(`[0-9a-f]{1,6}`).Draw(t, "id")
			if ids[id] {
				continue
			}
			ids[id] = true
			nodes = append(nodes, node(id, rapid.SampledFrom([]string{"vm", "db", "web", "a"}).Draw(t, "name")))
		}
		ref := rapid.StringMatching(`[0-9a-f]{0,3}|vm|db`).Draw(t, "ref")
		n, err := Resolve(nodes, ref)
		if err != nil {
			return
		}
		var sameID, sameName, prefix int
		for _, o := range nodes {
			if o.ID == ref {
				sameID++
			}
			if o.Name == ref {
				sameName++
			}
			if strings.HasPrefix(o.ID, ref) {
				prefix++
			}
		}
		switch {
		case n.ID == ref:
		case n.Name == ref && sameName == 1 && sameID == 0:
		case strings.HasPrefix(n.ID, ref) && prefix == 1 && sameName == 0 && sameID == 0:
		default:
			t.Fatalf("Resolve(%q) guessed %s among %d nodes", ref, n.ID, len(nodes))
		}
		for _, o := range nodes {
			if got, err := Resolve(nodes, o.ID); err != nil || got != o {
				t.Fatalf("full id %s resolved to %v, %v", o.ID, got, err)
			}
		}
	})
}
