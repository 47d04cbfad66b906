package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/test/faultnet"
)

// TestWipedFollowerRejoins: a follower is killed, its data dir removed,
// and it is started again with the same flags. It must join the running
// cell (not bootstrap a cell of its own, not leave a second member at its
// address), catch up from the leader's log or snapshot, and then carry
// the quorum: with the other follower killed, writes are still
// acknowledged by the leader and the wiped server alone. Failover: from
// that kill to the first acknowledged write sent after it.
func TestWipedFollowerRejoins(t *testing.T) {
	runScenario(t, scenario{
		cell:        Options{Agents: []AgentSpec{{Name: "a1"}}},
		shortRounds: 1, soakRounds: 10, between: 200,
		inject: func(r *run, round int) {
			c := r.c
			c.WaitHealthy(60 * time.Second)
			leader := c.Leader(c.Servers, 20*time.Second)
			wiped, other := c.Others(leader)[0], c.Others(leader)[1]
			if round%2 == 1 {
				wiped, other = other, wiped
			}
			wipedAt := time.Now()
			c.WipeAndRestart(wiped)
			// healthy checks exactly three members, each of ours a voter
			// at its address, and one leader.
			c.WaitHealthy(60 * time.Second)
			if ls := c.Leaders(c.Servers); len(ls) != 1 {
				r.t.Fatalf("round %d: after the wiped server %s rejoined, %d servers lead", round+1, wiped.Host.Name(), len(ls))
			}
			faultnet.Eventually(r.t, 60*time.Second, "the wiped server caught up", func() error {
				return c.caughtUp(wiped)
			})
			caughtUp := time.Since(wipedAt)
			how := "the leader's log"
			runs := strings.Split(wiped.Proc.Log(), "=== faultnet: start")
			if strings.Contains(strings.ToLower(runs[len(runs)-1]), "snapshot") {
				how = "a snapshot and the log"
			}
			other.Proc.Kill()
			killed := time.Now()
			took, err := r.l.WriteAckedAfter(killed, 30*time.Second)
			if err != nil {
				r.t.Fatalf("round %d: with %s killed, the leader and the wiped %s acknowledge no write: %v", round+1, other.Host.Name(), wiped.Host.Name(), err)
			}
			r.t.Logf("round %d: wiped follower %s rejoined and caught up (from %s) %v after the wipe; with %s killed, writes acknowledged again after %v",
				round+1, wiped.Host.Name(), how, caughtUp.Round(time.Millisecond), other.Host.Name(), took.Round(time.Millisecond))
			r.measure("rejoin and catch-up", caughtUp)
			r.measure("write failover (quorum of leader and wiped server)", took)
			other.Proc.Restart()
		},
	})
}

// caughtUp reports whether server s has applied at least what the leader
// had when asked: a ?stale read of s is at or past the index of a
// consistent read made just before.
func (c *Cell) caughtUp(s *Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, lead, err := c.Client(ClientOptions{Attempt: 2 * time.Second, RetryFor: 2 * time.Second}).Workloads(ctx, nil)
	if err != nil {
		return err
	}
	_, local, err := c.Client(ClientOptions{Servers: []*Server{s}, Attempt: 2 * time.Second, RetryFor: time.Second}).Workloads(ctx, &api.Query{Stale: true})
	if err != nil {
		return err
	}
	if local.Index < lead.Index {
		return fmt.Errorf("%s is at index %d, the leader was at %d", s.Host.Name(), local.Index, lead.Index)
	}
	return nil
}
