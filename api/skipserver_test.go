package api

import (
	"context"
	"testing"
)

// TestSkipServerMovesOnFromAnUnusableAnswer: an answer says which server
// gave it; skipping that server makes the next request go to the next one,
// and skipping a server the client has already left changes nothing.
func TestSkipServerMovesOnFromAnUnusableAnswer(t *testing.T) {
	a, b := newFake(t, "ok"), newFake(t, "ok")
	c := NewClientFor([]string{a.URL, b.URL})
	ctx := context.Background()
	_, m, err := c.WorkloadStatus(ctx, "w", nil)
	if err != nil || m.Server != a.URL {
		t.Fatalf("first answer from %q (err %v), want %s", m.Server, err, a.URL)
	}
	c.SkipServer(m.Server)
	if _, m, _ = c.WorkloadStatus(ctx, "w", nil); m.Server != b.URL {
		t.Fatalf("after skipping %s the answer came from %s, want %s", a.URL, m.Server, b.URL)
	}
	c.SkipServer(a.URL) // stale: the client already left a
	if _, m, _ = c.WorkloadStatus(ctx, "w", nil); m.Server != b.URL {
		t.Fatalf("a stale skip moved the client to %s", m.Server)
	}
	if a.calls.Load() != 1 || b.calls.Load() != 2 {
		t.Errorf("calls a=%d b=%d, want 1 and 2", a.calls.Load(), b.calls.Load())
	}
}
