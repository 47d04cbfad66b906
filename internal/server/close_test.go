package server

import (
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// TestCloseDoesNotWaitOutTheBarrier reproduces issue 17's lock defect:
// the server held its leader mutex across the raft barrier that begins a
// term (up to 30 s, and again while it failed), and Close, which takes the
// same mutex to end the term, waited for it: a server stopped while it
// replayed a long log hung until the whole replay was done. Close must
// end the term at once. (Raft itself finishes the batch of entries it is
// applying, up to 512, before it stops: the replay below is many batches.)
func TestCloseDoesNotWaitOutTheBarrier(t *testing.T) {
	dir := t.TempDir()
	s := quietServerIn(t, dir)
	before := s.State().Index()
	registerNodes(t, s, 6000) // 6000 entries to replay, in a dozen batches
	last := s.State().Index()
	s.Close()

	// Every entry of the replay takes 2ms: the barrier of the new term
	// returns after about 12s, a batch is done in about 1s. Whether Close
	// waited is judged by what was replayed when it returned, not by the
	// wall clock: on a loaded machine a 2ms sleep takes much longer, and
	// so does every batch.
	var replayed atomic.Int64
	slow := func(index uint64) {
		if index > before {
			time.Sleep(2 * time.Millisecond)
			replayed.Add(1)
		}
	}
	s, err := New(Config{DataDir: dir, HTTPAddr: "127.0.0.1:0", HeartbeatTTL: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), fsmApplyHook: slow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for !s.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("the restarted server was not elected")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the new term reaches its barrier (not observable from here)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	total := int64(last - before)
	if n := replayed.Load(); n >= total {
		t.Fatalf("Close returned after %v with all %d entries replayed: it waited for the barrier of the term it was ending", time.Since(start).Round(time.Millisecond), total)
	}
}
