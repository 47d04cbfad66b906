package faults

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/test/faultnet"
	"github.com/strata-dev/strata/test/history"
)

// TestLeaderPartitionedFromMajority: the leader is cut off from the other
// servers and the agents, while the test's client host still reaches it.
// From the cut on, it must acknowledge no write and answer no consistent
// read (probes pinned to it, recorded in the history too); it still
// answers ?stale reads; it steps down; the majority elects a new leader
// that takes the load. Failover: from the cut to the first acknowledged
// write sent after it. Then the cut heals and the old leader rejoins.
func TestLeaderPartitionedFromMajority(t *testing.T) {
	runScenario(t, scenario{
		cell:        Options{Agents: []AgentSpec{{Name: "a1"}}},
		shortRounds: 2, soakRounds: 20, between: 150,
		inject: func(r *run, round int) {
			c := r.c
			c.WaitHealthy(60 * time.Second)
			old := c.Leader(c.Servers, 20*time.Second)
			var majority []*faultnet.Host
			for _, s := range c.Others(old) {
				majority = append(majority, s.Host)
			}
			for _, a := range c.Agents {
				majority = append(majority, a.Host)
			}
			c.Net.Partition([]*faultnet.Host{old.Host}, majority)
			cut := time.Now() // the rules are in place: nothing can commit through old now
			elected := c.watchElection(cut, c.Others(old))

			// Probes pinned to the old leader while the majority elects.
			probes := probeDeposed(r, old, 3*time.Second)
			took, err := r.l.WriteAckedAfter(cut, 30*time.Second)
			if err != nil {
				r.t.Fatalf("round %d: no write acknowledged after the leader %s was cut off: %v", round+1, old.Host.Name(), err)
			}
			newLeader := c.Leader(c.Others(old), 20*time.Second)
			faultnet.Eventually(r.t, 10*time.Second, "the cut-off leader steps down", func() error {
				st, err := c.status(old)
				if err != nil {
					return err
				}
				if st.IsLeader {
					return fmt.Errorf("%s still says it leads", old.Host.Name())
				}
				return nil
			})
			if err := c.staleRead(old); err != nil {
				r.t.Errorf("round %d: the cut-off server does not answer a ?stale read: %v", round+1, err)
			}
			r.t.Logf("round %d: cut off leader %s; %s leads; writes acknowledged again after %v; %s",
				round+1, old.Host.Name(), newLeader.Host.Name(), took.Round(time.Millisecond), probes)
			r.measure("write failover", took)
			if d, err := elected(); err == nil {
				r.measure("election", d)
			}
			c.Net.HealAll()
		},
	})
}

// probeDeposed sends writes and consistent reads to s alone, from two
// workers, for d, recording them in the load's history, and fails the
// test for every one acknowledged: s is cut off from the majority. It
// returns a summary.
func probeDeposed(r *run, s *Server, d time.Duration) string {
	pinned := r.c.Client(ClientOptions{Servers: []*Server{s}, Attempt: 2 * time.Second, RetryFor: time.Second})
	until := time.Now().Add(d)
	var mu sync.Mutex
	counts := map[Outcome]int{}
	var wg sync.WaitGroup
	for p := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(p), uint64(time.Now().UnixNano())))
			for i := 0; time.Now().Before(until); i++ {
				key := Key(rng.IntN(r.l.o.Keys))
				kinds := []history.Kind{history.Put, history.Get, history.Allocs, history.Stop, history.Delete}
				in := history.Input{Kind: kinds[i%len(kinds)], Key: key}
				if in.Kind == history.Put {
					in.Value = fmt.Sprintf("p%d-%d-%d", p, i, rng.IntN(1<<30))
				}
				o := r.l.Do(pinned, probeWorker+p, in)
				mu.Lock()
				counts[o]++
				mu.Unlock()
				if o == Acknowledged {
					r.t.Errorf("the server cut off from the majority (%s) acknowledged %s(%s)", s.Host.Name(), in.Kind, in.Key)
				}
			}
		}()
	}
	wg.Wait()
	return fmt.Sprintf("%d probes of the cut-off leader: %d acknowledged, %d refused (not leader), %d indeterminate",
		counts[Acknowledged]+counts[NotApplied]+counts[Indeterminate]+counts[Unexpected], counts[Acknowledged], counts[NotApplied], counts[Indeterminate])
}
