package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/pki"
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
// token in root/management-token (0600); later starts find it there.
func devBootstrap(ctx context.Context, addr, root string) (string, error) {
	file := filepath.Join(root, devManagementTokenFile)
	if b, err := os.ReadFile(file); err == nil && strings.TrimSpace(string(b)) != "" {
		return file, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", file, err)
	}
	c := api.NewClient(addr)
	if f := pki.CertFiles(devTLSDir(root), pki.RoleCLI); strings.HasPrefix(addr, "https://") && fileExists(f.CA) {
		// The dev cell's own CA: the cell was started with TLS (the
		// default), and $STRATA_CACERT need not name it.
		var err error
		if c, err = api.NewClientWithTLS(addr, f.CA, f.Cert, f.Key); err != nil {
			return "", fmt.Errorf("the dev cell's TLS credentials: %w", err)
		}
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
