package fsm

import "github.com/strata-dev/strata/api"

// Effects is what an applied command asks of the servers' loops, decided
// by the command's table entry from its body alone. The FSM hands it to
// OnApply after the entry committed to the store; it never acts on it
// itself.
type Effects struct {
	// Evals are evaluations the entry stored; the leader hands the pending
	// ones to its broker.
	Evals []*api.Evaluation
	// Unblock: capacity may have grown (a node came, a node takes work
	// again, allocations stopped): blocked evaluations may fit now.
	Unblock bool
	// DeploymentFailed: a plan failed a deployment; the leader's
	// auto-revert loop should look at it now.
	DeploymentFailed bool
	// JoinToken, when set, is the cell's new join token: every server
	// writes it to its data dir.
	JoinToken string
}

// evals is Effects with the evaluations given, nil ones left out.
func evals(es ...*api.Evaluation) Effects {
	var out Effects
	for _, e := range es {
		if e != nil {
			out.Evals = append(out.Evals, e)
		}
	}
	return out
}
