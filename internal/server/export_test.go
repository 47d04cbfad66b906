package server

import (
	"context"

	"github.com/strata-dev/strata/internal/httpapi/route"
)

// Routes is the server's route table, for the matrices that call every
// route (the follower matrices run in package server_test).
func (s *Server) Routes() route.Group { return s.api.Table() }

// RouteCalls is one harmless request per route pattern (acl_test.go).
var RouteCalls = routeCalls

// propose commits one command through the server's raft, as the API and
// the leader's loops do.
func (s *Server) propose(body any) (uint64, error) {
	idx, _, err := s.proposer.Propose(body)
	return idx, err
}

// CheckQuarantines runs the leader's automatic quarantine once, now: tests
// set a long QuarantineInterval and call it when they want a judgement.
func (s *Server) CheckQuarantines() { s.leader.StepNow(context.Background(), "auto-quarantine") }

// CollectGarbageNow runs one pass of the leader's garbage collection.
func (s *Server) CollectGarbageNow() error { return s.leader.StepNow(context.Background(), "gc") }
