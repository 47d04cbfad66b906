package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestDataDirLossUnderPartitionAtMostOnce is issue 18 defect 4, the red
// team's trial: a node cut off from its cell loses its data dir and its
// agent restarts, still cut off. Its at-most-once copies must stop before
// the cell replaces them elsewhere (once their lease lapsed): the shims
// stop a fenced task whose lease file is gone, and a restarted agent
// stops what outlived its shim before it hears from the cell. Before the
// fix all three replicas ran twice for 9-13 s, in 3 of 3 trials.
//
// The cut is the agent killed (no heartbeat leaves the node) and then
// restarted against a server address that answers nothing; the old
// copies' ticks are lost with the data dir, so their lives are watched
// through their pids (the host is shared), against the replacements'
// first ticks.
func TestDataDirLossUnderPartitionAtMostOnce(t *testing.T) {
	c := newCell(t, partitionTTL)
	c.startAgent("n1")
	amo, _ := tickerWorkloads()
	c.mustStrata("run", "-f", c.writeSpec("amo", amo), "--wait", "--timeout", "60s")
	c.startAgent("n2")

	var old []*api.Allocation
	c.eventually(60*time.Second, "amo's 3 copies running on n1", func() error {
		run, node := liveOn(partitionRig{allocs: c.allocs}, "amo")
		if node != "n1" {
			return fmt.Errorf("%d running, on %q", len(run), node)
		}
		old = run
		return nil
	})
	pids := map[int]*api.Allocation{}
	for _, a := range old {
		if ts := a.TaskStates["ticker"]; ts != nil && ts.PID > 0 {
			pids[ts.PID] = a
		}
	}
	if len(pids) != 3 {
		t.Fatalf("the old copies' pids: %v", pids)
	}
	// Watch the old copies' processes from now on: the last moment each
	// was seen alive.
	var mu sync.Mutex
	lastAlive := map[int]time.Time{}
	watchDone := make(chan struct{})
	stopWatch := make(chan struct{})
	go func() {
		defer close(watchDone)
		for {
			now := time.Now()
			mu.Lock()
			for pid := range pids {
				if pidAlive(pid) {
					lastAlive[pid] = now
				}
			}
			mu.Unlock()
			select {
			case <-stopWatch:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	defer func() {
		select {
		case <-stopWatch:
		default:
			close(stopWatch)
		}
		<-watchDone
	}()

	// The partition, then the data dir's loss, then the agent's return
	// without the cell.
	dataDir := filepath.Join(c.dir, "agent-n1")
	c.kill(c.agents["n1"])
	lost := time.Now()
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	nowhere := c.url(freeAddr(t)) // nothing listens there: cut off
	c.agents["n1"] = c.spawn("agent", "--servers", nowhere, "--data-dir", dataDir,
		"--name", "n1", "--cpu-total", "2000", "--memory-total", "2GiB")

	// The cell replaces the copies on n2 once n1's lease lapsed.
	var fresh []*api.Allocation
	c.eventually(60*time.Second, "amo replaced on n2 and ticking", func() error {
		fresh = nil
		for _, a := range runningAllocs(c.allocs("amo")) {
			if a.NodeName == "n2" && len(ticks(t, c.dir, a.ID)) > 0 {
				fresh = append(fresh, a)
			}
		}
		if len(fresh) != 3 {
			return fmt.Errorf("%d replacements ticking on n2", len(fresh))
		}
		return nil
	})
	close(stopWatch)
	<-watchDone

	mu.Lock()
	defer mu.Unlock()
	for pid, a := range pids {
		if pidAlive(pid) {
			t.Errorf("copy %s (pid %d) still runs on the cut-off node after its replacement started", a.ID, pid)
			continue
		}
		died := lastAlive[pid]
		t.Logf("copy %s (pid %d) last seen alive %.3fs after the data dir was lost", a.ID, pid, died.Sub(lost).Seconds())
		for _, r := range fresh {
			if r.Index != a.Index {
				continue
			}
			first := ticks(t, c.dir, r.ID)[0]
			overlap := float64(died.UnixNano())/1e9 - first
			t.Logf("replacement %s first ticked %.3fs after the old copy was last seen", r.ID, -overlap)
			if overlap > 0 {
				t.Errorf("at-most-once replica %d ran twice for %.3fs (old %s on n1, new %s on n2)", a.Index, overlap, a.ID, r.ID)
			}
		}
	}
}
