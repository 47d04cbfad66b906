package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestDiskPressure(t *testing.T) {
	const mi, gi = int64(1 << 20), int64(1 << 30)
	for _, tt := range []struct {
		name        string
		free, total int64
		want        string // "" or a part of the reason
	}{
		{"plenty", 50 * gi, 100 * gi, ""},
		{"below 5% of a large disk", 4 * gi, 100 * gi, "4096MiB free of 102400MiB (below 5120MiB)"},
		{"a small disk keeps twice the logs' reserve", 100 * mi, 1 * gi, "100MiB free of 1024MiB (below 128MiB)"},
		{"a small disk above it", 200 * mi, 1 * gi, ""},
		{"full", 0, 10 * gi, "0MiB free"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := diskPressure("/data", tt.free, tt.total)
			if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
				t.Errorf("diskPressure(%d, %d) = %q, want %q", tt.free, tt.total, got, tt.want)
			}
		})
	}
}

// TestNodeReportsDiskPressure (issue 18 defect 9): a node whose data dir
// runs short of space says so on its node record and in a node-agent
// event, and again when it is over.
func TestNodeReportsDiskPressure(t *testing.T) {
	srv := newFakeServer()
	var mu sync.Mutex
	free := int64(50 << 30)
	cfg := Config{DataDir: t.TempDir(), Name: "n", API: srv, HeartbeatInterval: 20 * time.Millisecond, WatchWait: time.Second,
		GPUCommand: []string{"/nonexistent"}, MicroVM: MicroVMConfig{Accel: MicroVMOff}, CriuPath: "none"}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.statDisk = func(string) (int64, int64, error) {
		mu.Lock()
		defer mu.Unlock()
		return free, 100 << 30, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	eventually(t, 10*time.Second, "node registration", func() bool { return srv.node(a.NodeID()) != nil })
	if n := srv.node(a.NodeID()); n.DiskPressure != "" {
		t.Fatalf("pressure with half the disk free: %q", n.DiskPressure)
	}
	mu.Lock()
	free = 1 << 30
	mu.Unlock()
	a.checkDisk()
	eventually(t, 10*time.Second, "the node reports disk pressure", func() bool {
		return strings.Contains(srv.node(a.NodeID()).DiskPressure, "1024MiB free") && noticesWith(srv, "disk pressure: data dir") == 1
	})
	mu.Lock()
	free = 50 << 30
	mu.Unlock()
	a.checkDisk()
	eventually(t, 10*time.Second, "the pressure is over", func() bool {
		return srv.node(a.NodeID()).DiskPressure == "" && noticesWith(srv, "disk pressure over") == 1
	})
}
