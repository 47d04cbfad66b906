package server

import (
	"github.com/strata-dev/strata/internal/state"
)

// The raft commands of the security state. Their type values start at 64,
// apart from the others, so that commands added elsewhere meanwhile never
// collide with them. Values are persisted: never renumber.
const (
	// cmdSetCellSecret sets a cell secret (the join token).
	cmdSetCellSecret commandType = 64 + iota
)

// setCellSecretCmd sets one cell secret.
type setCellSecretCmd struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func securityCommandName(c commandType) string {
	switch c {
	case cmdSetCellSecret:
		return "set-cell-secret"
	}
	return ""
}

// newSecurityBody returns the body to decode a security command into, nil
// for a type that is not one.
func newSecurityBody(t commandType) any {
	switch t {
	case cmdSetCellSecret:
		return &setCellSecretCmd{}
	}
	return nil
}

// applySecurity applies a security command; handled is false for a body
// that is not one.
func applySecurity(w *state.WriteTxn, body any) (handled bool, err error) {
	switch c := body.(type) {
	case *setCellSecretCmd:
		return true, w.SetCellSecret(c.Name, c.Value)
	}
	return false, nil
}
