package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/api"
)

// A dev cell keeps its credentials in its data dir, where the CLI finds
// them when run from the directory the cell was started in: so the
// README's commands work with no setup, ACLs on or off.

// devManagementTokenFile is the management token of a dev cell with ACLs.
const devManagementTokenFile = "management-token"

// devDataDir is strata dev's default data dir.
const devDataDir = "strata-data"

// devToken returns the management token of a dev cell started in this
// directory with --acl ("" when there is none).
func devToken() string {
	b, err := os.ReadFile(filepath.Join(devDataDir, devManagementTokenFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// devBootstrap bootstraps a dev cell's ACLs once and keeps the management
// token in root/management-token (0600); later starts find it there. ca,
// cert and key are the TLS files the call trusts the cell with and
// presents (the dev cell's own CA and CLI certificate; ca empty:
// plaintext): never the environment's, which on a clean machine names no
// CA, or another cell's.
func devBootstrap(ctx context.Context, addr, root, ca, cert, key string) (string, error) {
	file := filepath.Join(root, devManagementTokenFile)
	if b, err := os.ReadFile(file); err == nil && strings.TrimSpace(string(b)) != "" {
		return file, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", file, err)
	}
	c, err := api.NewClientWithTLS(addr, ca, cert, key)
	if err != nil {
		return "", fmt.Errorf("bootstrap the dev cell's ACLs: %w", err)
	}
	tok, err := c.ACLBootstrap(ctx)
	if err != nil {
		return "", fmt.Errorf("bootstrap the dev cell's ACLs: %w (a cell bootstrapped before keeps its token in %s)", err, file)
	}
	if err := os.WriteFile(file, []byte(tok.SecretID+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", file, err)
	}
	return file, nil
}

// devJoinTokenIfAny returns the join token of a dev cell started in this
// directory ("" when there is none).
func devJoinTokenIfAny() (string, error) {
	b, err := os.ReadFile(filepath.Join(devDataDir, "server", "join-token"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil
	case err != nil:
		return "", failf("read the dev cell's join token: %v", err)
	}
	return strings.TrimSpace(string(b)), nil
}
