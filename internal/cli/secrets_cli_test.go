package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/keyring"
)

func TestValidateJSONRedactsSecrets(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.yaml")
	os.WriteFile(file, []byte(`apiVersion: strata.dev/v1
kind: Workload
metadata: {name: w}
spec:
  groups:
    - name: g
      tasks:
        - name: t
          command: ["true"]
          env: {DB_PASSWORD: {secret: env-value-123}}
          secrets: [{name: key, value: file-value-456}]
`), 0o644)
	out, errOut, code := runCLI("validate", "-f", file, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "env-value-123") || strings.Contains(out, "file-value-456") {
		t.Fatalf("validate printed a secret value:\n%s", out)
	}
	if !strings.Contains(out, "DB_PASSWORD") {
		t.Errorf("validate no longer names the secret env:\n%s", out)
	}
}

func TestKeyringCommands(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := runCLI("keyring", "list", "--data-dir", dir); code == 0 || !strings.Contains(errOut, "keyring.json") {
		t.Fatalf("list without a keyring: exit %d, %s", code, errOut)
	}
	// A server creates it on first start; LoadOrCreate is what it calls.
	if _, errOut, code := runCLI("keyring", "rotate", "--data-dir", dir); code == 0 {
		t.Fatalf("rotate without a keyring succeeded: %s", errOut)
	}
	mustCreateKeyring(t, dir)
	out, errOut, code := runCLI("keyring", "rotate", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "new active key") {
		t.Fatalf("rotate: exit %d %s %s", code, out, errOut)
	}
	out, _, code = runCLI("keyring", "list", "--data-dir", dir, "-o", "json")
	var keys []struct {
		ID     string `json:"id"`
		Active bool   `json:"active"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &keys) != nil || len(keys) != 2 || keys[0].Active || !keys[1].Active {
		t.Fatalf("list -o json after a rotation: %s", out)
	}
	if strings.Contains(out, `"key"`) {
		t.Errorf("list shows key material: %s", out)
	}
	if _, errOut, code := runCLI("keyring", "remove", keys[1].ID, "--data-dir", dir); code == 0 || !strings.Contains(errOut, "active key") {
		t.Errorf("removing the active key: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI("keyring", "remove", keys[0].ID, "--data-dir", dir); code != 0 {
		t.Errorf("removing a retired key: %s", errOut)
	}
}

func mustCreateKeyring(t *testing.T, dir string) {
	t.Helper()
	if _, err := keyring.LoadOrCreate(filepath.Join(dir, keyring.FileName)); err != nil {
		t.Fatal(err)
	}
}
