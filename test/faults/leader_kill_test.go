package faults

import (
	"testing"
	"time"
)

// TestLeaderKillUnderLoad: the leader is SIGKILLed while clients write;
// the other two elect a new leader and take writes again, the killed
// server restarts on its data dir and rejoins. Failover: from the kill to
// the first acknowledged write sent after it.
func TestLeaderKillUnderLoad(t *testing.T) {
	runScenario(t, scenario{
		cell:        Options{Agents: []AgentSpec{{Name: "a1"}}},
		shortRounds: 2, soakRounds: 20, between: 150,
		inject: func(r *run, round int) {
			c := r.c
			c.WaitHealthy(60 * time.Second)
			l := c.Leader(c.Servers, 20*time.Second)
			l.Proc.Kill()
			// Timed from when it died (Kill waits): until then it may still
			// acknowledge writes.
			killed := time.Now()
			elected := c.watchElection(killed, c.Others(l))
			took, err := r.l.WriteAckedAfter(killed, 30*time.Second)
			if err != nil {
				r.t.Fatalf("round %d: no write acknowledged after the leader (%s) was killed: %v", round+1, l.Host.Name(), err)
			}
			r.t.Logf("round %d: killed leader %s; writes acknowledged again after %v", round+1, l.Host.Name(), took.Round(time.Millisecond))
			r.measure("write failover", took)
			if d, err := elected(); err == nil {
				r.measure("election", d)
			}
			l.Proc.Restart()
		},
	})
}
