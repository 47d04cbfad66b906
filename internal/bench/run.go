package bench

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/scheduler"
)

// Config describes one run.
type Config struct {
	Nodes       int
	Tasks       int
	PerWorkload int    // replicas per workload; 0 means 1000
	Seed        int64  // drives the cell, the mix and every evaluation
	Policy      string // binpack (default), spread or mixed
	// Progress, when set, is called after each evaluation.
	Progress func(done, total int)
}

// Result holds the figures of a run.
type Result struct {
	Nodes            int            `json:"nodes"`
	Tasks            int            `json:"tasks"`
	Workloads        int            `json:"workloads"`
	Policy           string         `json:"policy"`
	Seed             int64          `json:"seed"`
	Placed           int            `json:"placed"`
	Failed           int            `json:"failed"`           // replicas the scheduler reported as not fitting
	FailureReasons   map[string]int `json:"failureReasons"`   // failed replicas by their group's most common node reason
	Unaccounted      int            `json:"unaccounted"`      // replicas neither placed nor reported failed (must be 0)
	Evaluations      int            `json:"evaluations"`      // Schedule calls, retries included
	RejectedNodes    int            `json:"rejectedNodes"`    // plan parts CheckNode refused
	Overcommitted    []string       `json:"overcommitted"`    // problems found by the independent check (must be empty)
	GenerateSeconds  float64        `json:"generateSeconds"`  // building the cell and the workloads
	WallSeconds      float64        `json:"wallSeconds"`      // placing, from the first evaluation to the last commit
	ScheduleSeconds  float64        `json:"scheduleSeconds"`  // inside scheduler.Schedule
	ApplySeconds     float64        `json:"applySeconds"`     // CheckNode and commit
	PlacementsPerSec float64        `json:"placementsPerSec"` // Placed / WallSeconds
	PeakRSSBytes     int64          `json:"peakRssBytes"`     // VmHWM of the process, -1 if unknown
	HeapInuseBytes   uint64         `json:"heapInuseBytes"`   // after the run, before the final check
	CPUUtilisation   float64        `json:"cpuUtilisation"`   // allocated / capacity over ready nodes, at the end
	GPUUtilisation   float64        `json:"gpuUtilisation"`   // whole GPUs allocated / GPUs on ready nodes
	GOMAXPROCS       int            `json:"gomaxprocs"`
}

// maxAttempts bounds the re-evaluations of a workload whose plan had a
// rejected node part (the plan applier's partial commit).
const maxAttempts = 3

// Run generates the cell and the workloads of cfg and places them from
// scratch: each workload is stored and evaluated in turn, its plan checked
// and applied before the next evaluation, as a server with one worker would.
func Run(cfg Config) (*Result, error) {
	if cfg.Nodes <= 0 || cfg.Tasks < 0 {
		return nil, fmt.Errorf("bench: need nodes > 0 and tasks >= 0 (got %d, %d)", cfg.Nodes, cfg.Tasks)
	}
	if cfg.Policy == "" {
		cfg.Policy = PolicyBinpack
	}
	switch cfg.Policy {
	case PolicyBinpack, PolicySpread, PolicyMixed:
	default:
		return nil, fmt.Errorf("bench: unknown policy %q (want binpack, spread or mixed)", cfg.Policy)
	}
	t0 := time.Now()
	st := NewState(GenerateNodes(cfg.Nodes, cfg.Seed))
	wls := GenerateWorkloads(cfg.Tasks, cfg.PerWorkload, cfg.Policy, cfg.Seed)
	res := &Result{
		Nodes: cfg.Nodes, Tasks: cfg.Tasks, Workloads: len(wls), Policy: cfg.Policy, Seed: cfg.Seed,
		FailureReasons: map[string]int{}, GOMAXPROCS: runtime.GOMAXPROCS(0),
		GenerateSeconds: time.Since(t0).Seconds(),
	}
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	for wi, w := range wls {
		st.PutWorkload(w)
		eval := &api.Evaluation{ID: "eval-" + w.Name, Workload: w.Name, Priority: w.Priority, TriggeredBy: api.TriggerWorkloadRegister}
		var plan *api.Plan
		for attempt := range maxAttempts {
			ts := time.Now()
			plan = scheduler.Schedule(st, eval, scheduler.Options{Seed: cfg.Seed*1_000_003 + int64(wi)*7 + int64(attempt), Now: now})
			ta := time.Now()
			ar := st.Apply(plan)
			res.ScheduleSeconds += ta.Sub(ts).Seconds()
			res.ApplySeconds += time.Since(ta).Seconds()
			res.Evaluations++
			res.Placed += ar.Placed
			res.RejectedNodes += len(ar.Rejected)
			if len(ar.Rejected) == 0 {
				break
			}
		}
		missing := 0
		for _, f := range plan.Failures {
			missing += f.Missing
			res.FailureReasons[w.Groups[0].Name+": "+topReason(f)] += f.Missing
		}
		res.Failed += missing
		if cfg.Progress != nil {
			cfg.Progress(wi+1, len(wls))
		}
	}
	res.WallSeconds = time.Since(start).Seconds()
	if res.WallSeconds > 0 {
		res.PlacementsPerSec = float64(res.Placed) / res.WallSeconds
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.HeapInuseBytes = ms.HeapInuse
	res.PeakRSSBytes = peakRSS()

	// All-or-reason: every replica is placed or counted in a failure.
	for _, w := range wls {
		live := 0
		for _, a := range st.AllocsByWorkload(w.Name) {
			if !a.Terminal() {
				live++
			}
		}
		res.Unaccounted += w.Groups[0].Replicas - live
	}
	res.Unaccounted -= res.Failed
	res.Overcommitted = st.Verify()
	res.CPUUtilisation, res.GPUUtilisation = utilisation(st)
	return res, nil
}

// topReason is the reason that rejected most nodes for a failed group.
func topReason(f api.GroupFailure) string {
	keys := slices.Sorted(maps.Keys(f.Reasons))
	best := ""
	for _, k := range keys {
		if best == "" || f.Reasons[k] > f.Reasons[best] {
			best = k
		}
	}
	if best == "" {
		return "unknown"
	}
	return best
}

func utilisation(st *State) (cpu, gpu float64) {
	var capC, useC, capG, useG int64
	for _, n := range st.Nodes() {
		if !n.Ready() {
			continue
		}
		capC += n.Capacity.CPUMilli
		useC += n.Allocated.CPUMilli
		capG += n.Capacity.GPUs
		useG += n.Allocated.GPUs
	}
	if capC > 0 {
		cpu = float64(useC) / float64(capC)
	}
	if capG > 0 {
		gpu = float64(useG) / float64(capG)
	}
	return cpu, gpu
}

// peakRSS reads VmHWM from /proc/self/status, in bytes; -1 if unavailable.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return -1
			}
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				return -1
			}
			return kb * 1024
		}
	}
	return -1
}
