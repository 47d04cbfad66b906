package nodesim

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/server/servertest"
)

// lockedBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// When registrations fail, why is said at the default log level (warn)
// and counted by cause, not only as a number of errors: here every node
// id is already held by other agents (another run's secrets), so every
// registration is refused for that reason.
func TestSimSaysWhyRegistrationsFail(t *testing.T) {
	cell := servertest.Start(t, 1, nil)
	cell.WaitReady(0)
	const nodes = 5
	// Another agent registers every id first.
	for i := range nodes {
		id := NodeID("sim", i)
		if _, err := cell.AgentClient(id).RegisterNodeTimed(context.Background(), Shape{}.Node("sim", i)); err != nil {
			t.Fatalf("register %s: %v", id, err)
		}
	}
	var logs lockedBuffer
	sim, err := New(Config{Servers: cell.Addrs(), JoinToken: cell.JoinToken(), Count: nodes, Workers: 2,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sim.Run(ctx) }()
	servertest.Eventually(t, 20*time.Second, "every node refused at least once", func() error {
		if st := sim.Stats(); st.RegisterErrors < nodes {
			return fmt.Errorf("%d register errors", st.RegisterErrors)
		}
		return nil
	})
	cancel()
	<-done
	st := sim.Stats()
	if len(st.RegisterFailures) != 1 {
		t.Fatalf("register failures by cause = %+v, want one cause", st.RegisterFailures)
	}
	c := st.RegisterFailures[0]
	if c.Count != st.RegisterErrors || !strings.Contains(c.Cause, "registered by another agent") || strings.Contains(c.Cause, "sim-00000") {
		t.Fatalf("cause %+v (of %d errors): want every error under one cause naming no node", c, st.RegisterErrors)
	}
	if line := st.Line(Snapshot{}); !strings.Contains(line, "registered by another agent") {
		t.Fatalf("progress line does not say why: %s", line)
	}
	if got := logs.String(); strings.Count(got, "registered by another agent") != 1 {
		t.Fatalf("warn log = %q, want the cause once (its first occurrence)", got)
	}
}

// nodesim reports its own CPU time and memory, so that the server's share
// of a machine both run on is known.
func TestSimReportsItsOwnCPUAndMemory(t *testing.T) {
	sim, err := New(Config{Servers: []string{"127.0.0.1:1"}, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	busy := 0
	for i := range 5_000_000 {
		busy += i % 7
	}
	st := sim.Stats()
	if st.CPUSeconds <= 0 || st.MaxRSSBytes <= 0 {
		t.Fatalf("CPU %v s, max RSS %d bytes: want both measured (%d)", st.CPUSeconds, st.MaxRSSBytes, busy)
	}
	if line := st.Line(Snapshot{}); !strings.Contains(line, "nodesim cpu") {
		t.Fatalf("progress line does not show nodesim's own CPU: %s", line)
	}
}
