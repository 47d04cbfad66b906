package e2e

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLeaderFailoverLatency is a benchmark, not a timed test: it runs only
// with STRATA_FAILOVER_KILLS=N. Three real server processes on loopback
// take writes from several clients that know every server; the leader is
// SIGKILLed N times (restarted on its data dir each time, and the cell let
// heal). For each kill it reports the time from the kill until a client's
// write is acknowledged again, and the percentiles over all kills.
//
//	STRATA_FAILOVER_KILLS=20 go test ./test/e2e -run TestLeaderFailoverLatency -v -timeout 30m
func TestLeaderFailoverLatency(t *testing.T) {
	kills, _ := strconv.Atoi(os.Getenv("STRATA_FAILOVER_KILLS"))
	if kills <= 0 {
		t.Skip("a benchmark: set STRATA_FAILOVER_KILLS=N to run it")
	}
	const writers = 4
	var extra []string
	if m := os.Getenv("STRATA_FAILOVER_MULTIPLIER"); m != "" {
		extra = []string{"--raft-multiplier", m}
	}
	c, specs := startClusterWith(t, 3, extra)

	// Writers: idempotent writes (replacing the cell configuration) in a
	// loop; each acknowledgement is reported with when its write was sent.
	type ack struct{ sent, at time.Time }
	acks := make(chan ack, 1024)
	var acked atomic.Int64
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := c.newClient(c.addr)
			for i := 0; ctx.Err() == nil; i++ {
				doc := fmt.Sprintf("apiVersion: strata.dev/v1\nkind: CellConfig\ntimeWindows:\n  - {name: w%d-%d, start: \"09:00\", end: \"17:00\", timeZone: UTC}\n", w, i%50)
				sent := time.Now()
				if _, err := cl.SetCellConfig(ctx, []byte(doc)); err == nil {
					acked.Add(1)
					select {
					case acks <- ack{sent, time.Now()}:
					default:
					}
				} else if ctx.Err() == nil {
					t.Logf("writer %d: %v", w, err)
				}
			}
		}()
	}
	defer func() { stop(); wg.Wait() }()

	var took []time.Duration
	begin := time.Now()
	for k := range kills {
		waitHealthy(t, c, specs)
		l := leaderIndex(t, c, specs)
		for len(acks) > 0 {
			<-acks
		}
		killed := time.Now()
		c.kill(c.servers[l])
		var d time.Duration
		for d == 0 {
			select {
			case a := <-acks:
				// Only a write sent after the kill counts: one sent before
				// may have been answered by the leader just before it died.
				if a.sent.After(killed) {
					d = a.at.Sub(killed)
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("kill %d: no write acknowledged for 60s", k+1)
			}
		}
		took = append(took, d)
		t.Logf("kill %2d: server %d was leader; a write was acknowledged again after %v", k+1, l+1, d.Round(time.Millisecond))
		c.servers[l] = c.startClusterServer(specs[l], 3)
	}
	slices.Sort(took)
	pct := func(p float64) time.Duration { return took[min(len(took)-1, int(p*float64(len(took))))] }
	t.Logf("leader failover over %d SIGKILLs (%s): p50 %v, p99 %v, max %v, min %v; %d writers, %.0f writes/s acknowledged on average",
		len(took), strings.Join(append([]string{"raft multiplier"}, cmp.Or(os.Getenv("STRATA_FAILOVER_MULTIPLIER"), "1")), " "),
		pct(0.50).Round(time.Millisecond), pct(0.99).Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), took[0].Round(time.Millisecond),
		writers, float64(acked.Load())/time.Since(begin).Seconds())
}

// waitHealthy waits until every server is ready and the cell has 3 voters.
func waitHealthy(t *testing.T, c *cell, specs []serverSpec) {
	t.Helper()
	c.eventually(60*time.Second, "every server ready", func() error {
		for i, s := range specs {
			resp, err := c.httpClient(10 * time.Second).Get(c.url(s.httpAddr) + "/v1/status/ready")
			if err != nil {
				return fmt.Errorf("server %d: %v", i+1, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("server %d: %s", i+1, resp.Status)
			}
		}
		conf, err := c.newClient(c.addr).RaftConfiguration(context.Background(), nil)
		if err != nil || len(conf.Servers) != len(specs) {
			return fmt.Errorf("configuration %+v %v", conf, err)
		}
		return nil
	})
}
