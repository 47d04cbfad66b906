package httpapi

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/keyring"
)

// TestSealedValueBoundToItsSecret: a ciphertext moved into another
// workload cannot be opened for that workload's agent.
func TestSealedValueBoundToItsSecret(t *testing.T) {
	keys, err := keyring.LoadOrCreate(filepath.Join(t.TempDir(), keyring.FileName))
	if err != nil {
		t.Fatal(err)
	}
	s := &API{cfg: Config{Keyring: keys}}
	wl := &api.Workload{Name: "w", Groups: []*api.TaskGroup{{Name: "g", Tasks: []*api.Task{{Name: "t",
		Secrets: []*api.Secret{{Name: "db-password", Value: "a"}, {Name: "tls-key", Value: "b"}}}}}}}
	if err := s.sealSecrets(wl, nil); err != nil {
		t.Fatal(err)
	}
	sealed := wl.Groups[0].Tasks[0].Secrets[1].Sealed
	alloc := &api.Allocation{ID: "x", Workload: "other", TaskGroup: &api.TaskGroup{Name: "g",
		Tasks: []*api.Task{{Name: "t", Secrets: []*api.Secret{{Name: "tls-key", Sealed: sealed}}}}}}
	if _, err := s.openAlloc(alloc); err == nil || !strings.Contains(err.Error(), "fails authentication") {
		t.Errorf("opened a secret moved to another workload: %v", err)
	}
	alloc.Workload = "w"
	if got, err := s.openAlloc(alloc); err != nil || got.TaskGroup.Tasks[0].Secrets[0].Value != "b" {
		t.Errorf("open in place: %v", err)
	}
}
