package leader

import (
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/state"
)

// A cell has an identity, made once by its first leader and replicated like
// any state (snapshots included). Every answer an agent acts on carries it
// (docs/agent-safety.md).

// ensureCellID gives the cell its identity if it has none yet. It runs on a
// leader after the barrier, so a cell that has an identity shows it here;
// the id is made before proposing, never in Apply.
func (l *Leader) ensureCellID() error {
	if l.state().Snapshot().CellID() != "" {
		return nil
	}
	if _, err := l.propose(&fsm.SetCellID{ID: l.make.NewID(), Time: l.cfg.Now()}); err != nil {
		return err
	}
	l.logger.Info("cell identity", "cell", l.state().Snapshot().CellID())
	return nil
}

// ensureJoinToken sets the cell's join token, as the leader, when the cell
// has none or the configured one differs from it (that is how the token
// is rotated). Every server writes it to its data dir as it applies it.
func (l *Leader) ensureJoinToken() {
	have := l.state().Snapshot().CellSecret(state.CellSecretJoinToken)
	want := l.cfg.JoinToken
	switch {
	case want == "" && have != "":
		return
	case want == "":
		want = nodeauth.NewSecret()
	case want == have:
		return
	}
	if _, err := l.propose(&fsm.SetCellSecret{Name: state.CellSecretJoinToken, Value: want}); err != nil {
		l.logger.Error("set the cell's join token", "err", err)
		return
	}
	l.logger.Info("the cell's join token is set")
}
