package e2e

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers/containerd/ctrtest"
)

// TestMigrateBenchmark moves a counter holding STRATA_MIGRATE_RSS_MB of
// memory (default 100) between two agents STRATA_MIGRATE_BENCH times and
// prints the figures of each move and the downtime's p50 and p99
// (docs/benchmarks.md). Its memory limit is 3×RSS+64 MiB, or
// STRATA_MIGRATE_MEM_MB. Off unless STRATA_MIGRATE_BENCH is set.
func TestMigrateBenchmark(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("STRATA_MIGRATE_BENCH"))
	if runs <= 0 {
		t.Skip("a benchmark: set STRATA_MIGRATE_BENCH=<moves> (and STRATA_MIGRATE_RSS_MB) to run it")
	}
	rssMB := 100
	if v, err := strconv.Atoi(os.Getenv("STRATA_MIGRATE_RSS_MB")); err == nil && v > 0 {
		rssMB = v
	}
	criuPath := needCriu(t)
	c := newCell(t, 10*time.Second)
	// STRATA_MIGRATE_AGENT_FLAGS adds agent flags, e.g. "--migrate-image-dir
	// disk" for the figures before tmpfs images, or "--checkpointable-tasks"
	// for exec tasks in the host's namespaces (the figures before
	// namespaced tasks could be dumped).
	flags := append([]string{"--criu-path", criuPath, "--allow-root-tasks"},
		strings.Fields(os.Getenv("STRATA_MIGRATE_AGENT_FLAGS"))...)
	// STRATA_MIGRATE_DRIVER=containerd moves the counter in a container
	// (two agents on one containerd, each in its namespace).
	containers := os.Getenv("STRATA_MIGRATE_DRIVER") == "containerd"
	var socket, archive string
	if containers {
		socket = ctrtest.Socket(t)
		archive = ctrtest.BusyboxArchive(t)
	}
	for _, n := range []string{"n1", "n2"} {
		if containers {
			c.startAgent(n, append(flags, "--containerd-socket", socket, "--containerd-namespace", ctrtest.Namespace(t, socket))...)
			continue
		}
		c.startAgent(n, flags...)
	}
	// The shell keeps rssMB of 'a's in a variable, then counts.
	loop := fmt.Sprintf(`x=$(head -c %d /dev/zero | tr '\0' a); %s`, rssMB<<20, counterLoop)
	spec := fmt.Sprintf(counterSpec, "rss", loop)
	if containers {
		spec = fmt.Sprintf(containerCounterSpec, "rss", "oci-archive:"+archive, loop)
	}
	memMB := 3*rssMB + 64
	if v, err := strconv.Atoi(os.Getenv("STRATA_MIGRATE_MEM_MB")); err == nil && v > 0 {
		memMB = v
	}
	spec = replaceOnce(spec, "memory: 64Mi", fmt.Sprintf("memory: %dMi", memMB))
	c.mustStrata("run", "-f", c.writeSpec("rss", spec), "--wait", "--timeout", "120s")
	a := runningAllocs(c.allocs("rss"))[0]
	c.eventually(120*time.Second, "the counter counts", func() error {
		if n := c.counts(a.ID); len(n) < 5 {
			return fmt.Errorf("%d lines", len(n))
		}
		return nil
	})
	var downtimes []int64
	fmt.Printf("move  node   image_MiB  checkpoint_ms  transfer_ms  restore_ms  commit_ms  downtime_ms\n")
	for i := 0; i < runs; i++ {
		before := c.counts(a.ID)
		c.mustStrata("alloc", "migrate", a.ID)
		m := c.alloc(a.ID).Migration
		if m.Outcome != api.MigrationCommitted || m.Fallback || m.Report == nil {
			t.Fatalf("move %d: %+v", i+1, m)
		}
		r := m.Report
		fmt.Printf("%4d  %-5s  %9.1f  %13d  %11d  %10d  %9d  %11d\n", i+1, m.TargetNodeName,
			float64(r.CheckpointBytes)/(1<<20), r.CheckpointMs, r.TransferMs, r.RestoreMs, r.CommitMs, r.DowntimeMs)
		if i == 0 {
			fmt.Printf("      image store: %s; pre-copy: %s\n", r.ImageStore, r.PreCopy)
		}
		downtimes = append(downtimes, r.DowntimeMs)
		c.checkContinues(a.ID, before[len(before)-1])
	}
	sort.Slice(downtimes, func(i, j int) bool { return downtimes[i] < downtimes[j] })
	p := func(q float64) int64 { return downtimes[int(q*float64(len(downtimes)-1)+0.5)] }
	fmt.Printf("RSS %d MiB, %d moves: downtime p50 %d ms, p99 %d ms, max %d ms\n", rssMB, runs, p(0.5), p(0.99), downtimes[len(downtimes)-1])
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}
