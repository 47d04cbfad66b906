package sim_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/internal/sim"
	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/schedplacer"
	"github.com/strata-dev/strata/internal/sim/simtest"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// googleTrace loads the shared Google 2011 part grown to 450,000 events as
// `strata sim grow --copies 6 --shift 60 --events 450000` makes it, and the
// cell's 12,580 machines (skipping when the shared traces are absent).
func googleTrace(b *testing.B) *trace.Trace {
	b.Helper()
	dir := filepath.Join(simtest.TracesDir(b), "google2011")
	part, err := os.ReadFile(filepath.Join(dir, "task_events-part-00001-of-00500.csv.gz"))
	if err != nil {
		b.Skipf("google part: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(part))
	if err != nil {
		b.Fatal(err)
	}
	var grown bytes.Buffer
	if _, err := trace.GrowGoogleTaskEvents("part", zr, &grown, trace.GrowOptions{Copies: 6, ShiftSeconds: 60, MaxEvents: 450000}); err != nil {
		b.Fatal(err)
	}
	pods, err := trace.ReadGoogleTaskEvents("grown", &grown, trace.DefaultGoogleScale)
	if err != nil {
		b.Fatal(err)
	}
	nodes, err := trace.LoadMachineCSV(filepath.Join(dir, "machines.csv"), trace.DefaultGoogleScale)
	if err != nil {
		b.Fatal(err)
	}
	return &trace.Trace{Nodes: nodes, Pods: pods}
}

// BenchmarkReplayGoogle450k replays the 450,000-event part on the 12,580
// machines with each paper policy and with the server's binpack scheduler.
func BenchmarkReplayGoogle450k(b *testing.B) {
	tr := googleTrace(b)
	for _, policy := range []string{"BestFit", "FGD", "Random", "strata-binpack"} {
		b.Run(policy, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cfg := sim.Config{Nodes: tr.Nodes, Pods: tr.Pods, Mode: sim.ModeReplay, Policy: policy, Seed: 42}
				if policy == "strata-binpack" {
					cfg.NewPlacer = func(seed int64) cluster.Placer { return schedplacer.New("binpack", seed, 0) }
				}
				res, err := sim.Run(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Placed), "placed")
			}
		})
	}
}
