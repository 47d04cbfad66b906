package replica

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tallyFSM is a state machine that knows nothing of workloads: it adds up
// the lengths of the entries it applies. A second control plane (the
// global layer) brings its own FSM the same way.
type tallyFSM struct {
	mu      sync.Mutex
	total   int
	applied atomic.Uint64
}

func (f *tallyFSM) Apply(index uint64, entry []byte) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total += len(entry)
	f.applied.Store(index)
	return f.total
}

func (f *tallyFSM) AppliedIndex() uint64 { return f.applied.Load() }

func (f *tallyFSM) Snapshot() Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return tallySnapshot{index: f.applied.Load(), total: f.total}
}

func (f *tallyFSM) Restore(r io.Reader) error {
	var s struct{ Total int }
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return err
	}
	f.mu.Lock()
	f.total = s.Total
	f.mu.Unlock()
	return nil
}

func (f *tallyFSM) Verify(r io.Reader) error {
	var s struct{ Total int }
	return json.NewDecoder(r).Decode(&s)
}

type tallySnapshot struct {
	index uint64
	total int
}

func (s tallySnapshot) Index() uint64 { return s.index }
func (s tallySnapshot) Encode(w io.Writer) error {
	return json.NewEncoder(w).Encode(struct{ Total int }{s.total})
}

// terms records the terms a replica hands it.
type terms struct {
	leads, follows atomic.Int32
	ctx            atomic.Pointer[context.Context]
}

func (t *terms) Lead(ctx context.Context) error {
	t.leads.Add(1)
	t.ctx.Store(&ctx)
	return nil
}

func (t *terms) Follow() { t.follows.Add(1) }

// TestReplicaRunsAnyFSM: a replica opened on an FSM of another control
// plane elects itself, hands the term to its Leadership after the
// barrier, commits entries and returns the FSM's answers, serves its
// status routes, and on Close ends the term.
func TestReplicaRunsAnyFSM(t *testing.T) {
	f := &tallyFSM{}
	r, err := Open(Config{DataDir: t.TempDir(), ID: "global-1", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, f)
	if err != nil {
		t.Fatal(err)
	}
	lead := &terms{}
	r.Start(http.NotFoundHandler(), lead)
	select {
	case <-r.Ready():
	case <-time.After(20 * time.Second):
		t.Fatal("not ready")
	}
	deadline := time.Now().Add(10 * time.Second)
	for lead.leads.Load() == 0 || r.Serving() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("no term began: leads %d, serving %v", lead.leads.Load(), r.Serving())
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, answer, err := r.Commit("tally", []byte("abc"), []byte("de"))
	if err != nil || answer != 5 {
		t.Fatalf("commit: %v, answer %v, want 5", err, answer)
	}
	ctx := *lead.ctx.Load()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if lead.follows.Load() != 1 || ctx.Err() == nil {
		t.Fatalf("Close did not end the term: follows %d, term context %v", lead.follows.Load(), ctx.Err())
	}
	if _, _, err := r.Commit("tally", []byte("x")); err == nil {
		t.Fatal("a commit after Close succeeded")
	}
}

// TestBootstrapSet: a new cell forms from exactly --bootstrap-expect
// servers with no state, all expecting the same number; anything else
// waits or is refused, never guessed at.
func TestBootstrapSet(t *testing.T) {
	self := peerInfo{ID: "b", RaftAddr: "10.0.0.2:4681", BootstrapExpect: 3}
	peer := func(id string, expect int, state bool) peerInfo {
		return peerInfo{ID: id, RaftAddr: "10.0.0." + id + ":4681", BootstrapExpect: expect, HasState: state}
	}
	for _, tc := range []struct {
		name    string
		heard   []peerInfo
		servers []string // the configuration, sorted by id
		waits   string   // a reason to wait
		refused string   // an error
	}{
		{"all three", []peerInfo{peer("c", 3, false), peer("a", 3, false), self}, []string{"a", "b", "c"}, "", ""},
		{"one missing", []peerInfo{peer("a", 3, false)}, nil, "2 of 3 known", ""},
		{"one has state", []peerInfo{peer("a", 3, true), peer("c", 3, false)}, nil, "already belongs to a cell", ""},
		{"different numbers", []peerInfo{peer("a", 2, false), peer("c", 3, false)}, nil, "", "same number"},
		{"too many", []peerInfo{peer("a", 3, false), peer("c", 3, false), peer("d", 3, false)}, nil, "", "refusing to guess"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servers, why, err := bootstrapSet(self, tc.heard)
			var ids []string
			for _, s := range servers {
				ids = append(ids, string(s.ID))
			}
			switch {
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Fatalf("err %v, want one saying %q", err, tc.refused)
			case tc.waits != "" && !strings.Contains(why, tc.waits):
				t.Fatalf("why %q, want %q", why, tc.waits)
			case strings.Join(ids, ",") != strings.Join(tc.servers, ","):
				t.Fatalf("servers %v, want %v", ids, tc.servers)
			}
		})
	}
}
