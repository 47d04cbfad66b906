package server

// CheckQuarantines runs the leader's automatic quarantine once, now: tests
// set a long QuarantineInterval and call it when they want a judgement.
func (s *Server) CheckQuarantines() { s.quarantines.step() }

// CollectGarbageNow runs one pass of the leader's garbage collection.
func (s *Server) CollectGarbageNow() error { return s.collectGarbage() }
