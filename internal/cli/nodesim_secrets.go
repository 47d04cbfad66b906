package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/internal/nodesim"
)

// A simulated node is an agent: the server gives its id to the first
// secret that registers it and refuses every other. nodesim keeps its
// nodes' secrets per prefix in a file (one "id secret" line per node,
// 0600), so that a second run with the same prefix brings the same nodes
// back, as a restarted agent does from its data dir.

// defaultSecretsFile is where the secrets of prefix's nodes are kept:
// beside a dev cell's data, as the CLI keeps its credentials.
func defaultSecretsFile(prefix string) string {
	return filepath.Join(devDataDir, "nodesim", prefix+".secrets")
}

// loadNodeSecrets returns the secrets file's secrets of prefix's first
// count nodes by node index ("" where it has none); a missing file has
// none.
func loadNodeSecrets(path, prefix string, count int) ([]string, error) {
	secrets := make([]string, count)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return secrets, nil
	}
	if err != nil {
		return nil, failf("--secrets-file: %v", err)
	}
	defer f.Close()
	byID := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		id, secret, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok || id == "" || strings.TrimSpace(secret) == "" {
			return nil, failf("--secrets-file %s line %d: want \"NODE-ID SECRET\" (delete the file to start over with new nodes)", path, line)
		}
		byID[id] = strings.TrimSpace(secret)
	}
	if err := sc.Err(); err != nil {
		return nil, failf("--secrets-file %s: %v", path, err)
	}
	for i := range secrets {
		secrets[i] = byID[nodesim.NodeID(prefix, i)]
	}
	return secrets, nil
}

// saveNodeSecrets writes the secrets of prefix's nodes to path, keeping
// the lines of nodes beyond them (an earlier, larger run), through a
// temporary file renamed into place.
func saveNodeSecrets(path, prefix string, secrets []string) error {
	keep := map[string]bool{}
	for i := range secrets {
		keep[nodesim.NodeID(prefix, i)] = true
	}
	var b strings.Builder
	for i, s := range secrets {
		fmt.Fprintf(&b, "%s %s\n", nodesim.NodeID(prefix, i), s)
	}
	if old, err := os.ReadFile(path); err == nil {
		for _, line := range strings.Split(string(old), "\n") {
			if id, _, ok := strings.Cut(line, " "); ok && !keep[id] {
				b.WriteString(line + "\n")
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return failf("--secrets-file: %v", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return failf("--secrets-file: %v", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return failf("--secrets-file: %v", err)
	}
	if err := tmp.Close(); err != nil {
		return failf("--secrets-file: %v", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return failf("--secrets-file: %v", err)
	}
	return nil
}
