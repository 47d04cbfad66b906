package server

import "context"

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
