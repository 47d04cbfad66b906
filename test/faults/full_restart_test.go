package faults

import (
	"testing"
	"time"
)

// TestFullCellRestart: every server is SIGKILLed at once and restarted on
// its data dir; the cell elects a leader from the replayed logs and takes
// writes again with nothing acknowledged lost. Failover: from the kill to
// the first acknowledged write sent after it.
func TestFullCellRestart(t *testing.T) {
	runScenario(t, scenario{
		cell:        Options{Agents: []AgentSpec{{Name: "a1"}}},
		shortRounds: 2, soakRounds: 15, between: 150,
		inject: func(r *run, round int) {
			c := r.c
			c.WaitHealthy(60 * time.Second)
			for _, s := range c.Servers {
				s.Proc.Kill()
			}
			// Timed from when the last server died: until then the
			// survivors may still commit writes.
			killed := time.Now()
			for _, s := range c.Servers {
				s.Proc.Restart()
			}
			took, err := r.l.WriteAckedAfter(killed, 60*time.Second)
			if err != nil {
				r.t.Fatalf("round %d: no write acknowledged after every server was killed and restarted: %v", round+1, err)
			}
			r.t.Logf("round %d: killed and restarted all %d servers; writes acknowledged again after %v", round+1, len(c.Servers), took.Round(time.Millisecond))
			r.measure("write failover", took)
		},
	})
}
