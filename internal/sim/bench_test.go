package sim_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	return grownGoogleTrace(b, trace.GrowOptions{Copies: 6, ShiftSeconds: 60, MaxEvents: 450000})
}

// grownGoogleTrace is the shared Google 2011 part grown with opts (as
// `strata sim grow` grows it) on the cell's 12,580 machines.
func grownGoogleTrace(b *testing.B, opts trace.GrowOptions) *trace.Trace {
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
	if _, err := trace.GrowGoogleTaskEvents("part", zr, &grown, opts); err != nil {
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
	benchReplay(b, googleTrace(b), "BestFit", "FGD", "Random", "strata-binpack")
}

// benchReplay replays tr with each policy (strata-*: the server's
// scheduler, sampling as the server does), reporting pods placed and the
// CPU time of a run.
func benchReplay(b *testing.B, tr *trace.Trace, policies ...string) {
	for _, policy := range policies {
		b.Run(policy, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cfg := sim.Config{Nodes: tr.Nodes, Pods: tr.Pods, Mode: sim.ModeReplay, Policy: policy, Seed: 42}
				if sp, ok := strings.CutPrefix(policy, "strata-"); ok {
					cfg.NewPlacer = func(seed int64) cluster.Placer { return schedplacer.New(sp, seed, 0) }
				}
				cpu := cpuTime()
				res, err := sim.Run(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Placed), "placed")
				b.ReportMetric((cpuTime() - cpu).Seconds(), "cpu-s")
			}
		})
	}
}

// BenchmarkInflationOpenb runs the paper's experiment (seed 42) on the
// openb default trace with paper policies and the server's scheduler, so
// that their cost per pod can be compared in one run.
func BenchmarkInflationOpenb(b *testing.B) {
	nodes, err := trace.LoadOpenbNodes(simtest.Openb(b, "openb_node_list_gpu_node.csv"))
	if err != nil {
		b.Fatal(err)
	}
	pods, err := trace.LoadOpenbPods(simtest.Openb(b, "openb_pod_list_default.csv"))
	if err != nil {
		b.Fatal(err)
	}
	for _, policy := range []string{"BestFit", "FGD", "strata-binpack", "strata-spread", "strata-fgd"} {
		b.Run(policy, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cfg := sim.Config{Nodes: nodes, Pods: pods, Mode: sim.ModeInflation, Policy: policy, Seed: 42, NoSeries: true}
				if sp, ok := strings.CutPrefix(policy, "strata-"); ok {
					cfg.NewPlacer = func(seed int64) cluster.Placer { return schedplacer.New(sp, seed, -1).WithTarget(pods) }
				}
				cpu := cpuTime()
				res, err := sim.Run(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Placed), "placed")
				b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(res.Placed+res.Failed), "cpu-ns/pod")
			}
		})
	}
}

// cpuTime is the CPU time the process has used: on a shared machine the
// wall time of a run says more about the neighbours than about the run.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReplayGoogleSaturated replays the shared part grown to 20
// copies 3 s apart (`strata sim grow --copies 20 --shift 3`), cut at
// 700,000 events: a cell loaded past its capacity, where pods wait and
// placements fail, as held-out parts of the trace do.
func BenchmarkReplayGoogleSaturated(b *testing.B) {
	benchReplay(b, grownGoogleTrace(b, trace.GrowOptions{Copies: 20, ShiftSeconds: 3, MaxEvents: 700000}), "BestFit", "strata-binpack")
}
