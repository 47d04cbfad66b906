package faults

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/test/faultnet"
)

// pauseFor is how long a server stays SIGSTOPped: several election
// timeouts (raft's is 500 ms to 1 s at --raft-multiplier 1). Every other
// pair of rounds pauses for longPauseFor instead, past the heartbeat TTL
// (pauseTTL): the agents must fail over to the running servers and keep
// their nodes ready.
const (
	pauseFor     = 3 * time.Second
	longPauseFor = 8 * time.Second
	pauseTTL     = 5 * time.Second
)

// TestServerPausedPastElectionTimeout: a server is SIGSTOPped for longer
// than the election timeout and then resumed — the leader on even rounds
// (the others elect a new one; resumed, it must not act as leader on its
// old term), a follower on odd rounds (the cell goes on without it).
// Failover, leader rounds only: from the pause to the first acknowledged
// write sent after it.
func TestServerPausedPastElectionTimeout(t *testing.T) {
	runScenario(t, scenario{
		cell:        Options{HeartbeatTTL: pauseTTL, Agents: []AgentSpec{{Name: "a1"}, {Name: "a2"}}},
		shortRounds: 3, soakRounds: 20, between: 150,
		inject: func(r *run, round int) {
			c := r.c
			c.WaitHealthy(60 * time.Second)
			leader := c.Leader(c.Servers, 20*time.Second)
			target, role := leader, "leader"
			if round%2 == 1 {
				target, role = c.Others(leader)[0], "follower"
			}
			length := pauseFor
			if round%4 >= 2 {
				length = longPauseFor
			}
			nodes := watchNodes(c)
			target.Proc.Pause()
			paused := time.Now()
			elected := c.watchElection(paused, c.Others(target))
			var took time.Duration
			if target == leader {
				var err error
				took, err = r.l.WriteAckedAfter(paused, 30*time.Second)
				if err != nil {
					r.t.Fatalf("round %d: no write acknowledged after the leader %s was paused: %v", round+1, target.Host.Name(), err)
				}
				c.Leader(c.Others(target), 20*time.Second)
				r.measure("write failover", took)
				if d, err := elected(); err == nil {
					r.measure("election", d)
				}
			}
			// Stay paused past the election timeout whatever the load did.
			if rest := length - time.Since(paused); rest > 0 {
				time.Sleep(rest) // the fault's length, not a wait for a condition
			}
			target.Proc.Resume()
			if down := nodes(); len(down) > 0 {
				r.t.Errorf("round %d: with %s %s paused for %v (TTL %v), a node went down though two servers ran: %v", round+1, role, target.Host.Name(), length, pauseTTL, down)
			}
			if target == leader {
				faultnet.Eventually(r.t, 10*time.Second, "the resumed old leader steps down", func() error {
					if st, err := c.status(target); err != nil || st.IsLeader {
						return fmt.Errorf("status of %s: %+v %v", target.Host.Name(), st, err)
					}
					return nil
				})
			}
			r.t.Logf("round %d: paused %s %s for %v; writes acknowledged again after %v", round+1, role, target.Host.Name(), length, took.Round(time.Millisecond))
		},
	})
}

// watchNodes polls the nodes' statuses through the running servers until
// the returned function is called, which returns every time a node was
// seen not ready.
func watchNodes(c *Cell) func() []string {
	done := make(chan struct{})
	var seen []string
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		cl := c.Client(ClientOptions{Attempt: time.Second, RetryFor: 2 * time.Second})
		for {
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			nodes, _, err := cl.Nodes(ctx, nil)
			cancel()
			if err != nil {
				continue
			}
			for _, n := range nodes {
				if n.Status != api.NodeReady {
					seen = append(seen, fmt.Sprintf("%s %s at %s", n.Name, n.Status, time.Now().Format("15:04:05.000")))
				}
			}
		}
	}()
	return func() []string {
		close(done)
		<-finished
		return seen
	}
}
