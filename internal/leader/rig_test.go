package leader

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/trigger"
)

// directLog commits entries by applying them to the FSM at once, one
// index after another: a leader without raft, for the leader's tests.
type directLog struct {
	mu    sync.Mutex
	f     *fsm.FSM
	index uint64
}

func (d *directLog) Commit(name string, entries ...[]byte) (uint64, any, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var answer any
	for _, e := range entries {
		d.index++
		answer = d.f.Apply(d.index, e)
		if err, ok := answer.(error); ok && err != nil {
			return 0, nil, fmt.Errorf("apply %s: %w", name, err)
		}
	}
	return d.index, answer, nil
}

// rig is a Leader over an FSM applied directly (no raft, no HTTP).
type rig struct {
	t testing.TB
	l *Leader
	f *fsm.FSM
	p *fsm.Proposer
}

func newRig(t testing.TB, cfg Config) *rig {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := fsm.New(logger)
	p := fsm.NewProposer(&directLog{f: f})
	if cfg.Logger == nil {
		cfg.Logger = logger
	}
	if cfg.Workers == 0 {
		cfg.Workers = 1
	}
	if cfg.Heartbeats.MinTTL == 0 {
		cfg.Heartbeats.MinTTL = time.Hour
	}
	l, err := New(cfg, f, p, trigger.NewMaker(time.Now))
	if err != nil {
		t.Fatal(err)
	}
	f.OnApply = l.Applied
	return &rig{t: t, l: l, f: f, p: p}
}

// lead begins a term; the function it returns ends it, as the test's end
// does if the test does not.
func (r *rig) lead() (end func()) {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.l.Lead(ctx); err != nil {
		r.t.Fatal(err)
	}
	var once sync.Once
	end = func() {
		once.Do(func() {
			cancel()
			r.l.Follow()
			r.l.Wait()
		})
	}
	r.t.Cleanup(end)
	return end
}

func (r *rig) propose(body any) {
	r.t.Helper()
	if _, _, err := r.p.Propose(body); err != nil {
		r.t.Fatal(err)
	}
}

// addNodes registers n nodes of 32 cores: node-00000, node-00001, ...
func (r *rig) addNodes(n int) {
	r.t.Helper()
	for i := range n {
		r.propose(&fsm.UpsertNode{Node: &api.Node{ID: fmt.Sprintf("node-%05d", i), Name: fmt.Sprintf("n%d", i), Status: api.NodeReady,
			Capacity: api.Resources{CPUMilli: 32000, MemoryBytes: 128 << 30, DiskBytes: 1 << 40, NetMbps: 10000}}})
	}
}

// waitFor polls cond until it is nil or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
