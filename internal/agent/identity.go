package agent

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-dev/strata/internal/nodeauth"
)

// An agent's identity is its node id and its node secret, both in its data
// dir: node-id (0644) and node-secret (0600). The agent makes the secret
// itself, once; the cell stores only its verifier, the first time the
// node registers (with the cell's join token). Every later call for the
// node carries the secret, and the server's log requests are signed with
// it (nodeauth): losing the data dir loses the node's identity, and the
// agent then joins as a new node.

const nodeSecretFile = "node-secret"

// LoadIdentity reads the node id and node secret in dataDir, creating
// either once. The CLI gives them to the client the agent talks through.
func LoadIdentity(dataDir string) (id, secret string, err error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", "", fmt.Errorf("create data dir: %w", err)
	}
	if id, err = loadNodeID(dataDir); err != nil {
		return "", "", err
	}
	if secret, err = loadNodeSecret(dataDir); err != nil {
		return "", "", err
	}
	return id, secret, nil
}

func loadNodeSecret(dataDir string) (string, error) {
	path := filepath.Join(dataDir, nodeSecretFile)
	data, err := os.ReadFile(path)
	if err == nil {
		if s := strings.TrimSpace(string(data)); s != "" {
			if problem := nodeauth.CheckNew(s); problem != "" {
				return "", fmt.Errorf("%s: the node secret %s", path, problem)
			}
			return s, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read node secret: %w", err)
	}
	secret := nodeauth.NewSecret()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(secret+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write node secret: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write node secret: %w", err)
	}
	return secret, nil
}

// checkServerSignature serves only a request the cell's server signed with
// this node's secret, and adds the agent's proof to the answer. It writes
// a 403 and returns false otherwise.
func (a *Agent) checkServerSignature(w http.ResponseWriter, r *http.Request) bool {
	nonce := r.Header.Get(nodeauth.HeaderNonce)
	if err := nodeauth.VerifyRequest(a.nodeSecret, nonce, r.Header.Get(nodeauth.HeaderSignature), r.RequestURI, time.Now()); err != nil {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "node " + a.nodeID + ": " + err.Error() +
			"; ask a server for logs (strata logs)", "code": "node-auth"})
		return false
	}
	w.Header().Set(nodeauth.HeaderProof, nodeauth.Prove(a.nodeSecret, nonce))
	return true
}
