package bench

import (
	"bufio"
	"fmt"
	"hash"
	"hash/fnv"
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
	NoGangs     bool   // training jobs as plain groups instead of gangs of 16
	// NoRelations leaves the relation rules (spread, affinity,
	// anti-affinity, peers, data locality) out of the mix and the dataset
	// labels out of the cell: the mix as it was before they were added.
	NoRelations bool
	// Sample is scheduler.Options.FeasibleSample: 0 for the default
	// (5% of the nodes, at least 100), negative to score every node.
	Sample int
	// Progress, when set, is called after each evaluation.
	Progress func(done, total int)
}

// Result holds the figures of a run.
type Result struct {
	Nodes          int      `json:"nodes"`
	Tasks          int      `json:"tasks"`
	Workloads      int      `json:"workloads"`
	Policy         string   `json:"policy"`
	Relations      bool     `json:"relations"` // the mix has relation rules (not --no-relations)
	Seed           int64    `json:"seed"`
	Sample         int      `json:"sample"`     // feasible nodes sampled per group (-1: all)
	Placed         int      `json:"placed"`     // live allocations at the end
	Placements     int      `json:"placements"` // allocations committed, replacements of preempted ones included
	Preempted      int      `json:"preempted"`  // allocations evicted by higher-priority placements
	Gangs          int      `json:"gangs"`
	GangsPlaced    int      `json:"gangsPlaced"`
	GangViolations []string `json:"gangViolations"` // gangs placed partial (must be empty)
	// GangsBrokenByPreemption lists gangs left partial after some of their
	// members were preempted. The scheduler evicts a gang whole, so this
	// must be empty too; it is listed apart to tell the two bugs apart.
	GangsBrokenByPreemption []string       `json:"gangsBrokenByPreemption"`
	Failed                  int            `json:"failed"`         // replicas the scheduler reported as not fitting
	FailureReasons          map[string]int `json:"failureReasons"` // failed replicas by their group's most common node reason
	Unaccounted             int            `json:"unaccounted"`    // replicas neither placed nor reported failed (must be 0)
	Evaluations             int            `json:"evaluations"`    // Schedule calls, retries included
	RejectedNodes           int            `json:"rejectedNodes"`  // plan parts CheckNode refused
	Overcommitted           []string       `json:"overcommitted"`  // problems found by the independent check (must be empty)
	// RelationViolations lists hard relation rules broken at the end, as
	// an independent check finds them: self anti-affinity sharing a
	// domain, hard spread skewed beyond maxSkew (must be empty).
	RelationViolations []string `json:"relationViolations"`
	// SpreadUnchecked counts groups with a hard spread that lost replicas
	// to preemption; the spread check skips them (see checkRelations).
	SpreadUnchecked  int     `json:"spreadUnchecked"`
	GenerateSeconds  float64 `json:"generateSeconds"`  // building the cell and the workloads
	WallSeconds      float64 `json:"wallSeconds"`      // placing, from the first evaluation to the last commit
	ScheduleSeconds  float64 `json:"scheduleSeconds"`  // inside scheduler.Schedule
	ApplySeconds     float64 `json:"applySeconds"`     // CheckNode and commit
	PlacementsPerSec float64 `json:"placementsPerSec"` // Placements / WallSeconds
	PeakRSSBytes     int64   `json:"peakRssBytes"`     // VmHWM of the process, -1 if unknown
	HeapInuseBytes   uint64  `json:"heapInuseBytes"`   // after the run, before the final check
	CPUUtilisation   float64 `json:"cpuUtilisation"`   // allocated / capacity over ready nodes, at the end
	GPUUtilisation   float64 `json:"gpuUtilisation"`   // whole GPUs allocated / GPUs on ready nodes
	GOMAXPROCS       int     `json:"gomaxprocs"`
	// PlanDigest hashes every plan of the run (placements with their node
	// and hardware, stops, failures with their words) leaving out the
	// allocation ids: two runs with the same digest made the same
	// decisions. It tells an optimisation that must not change plans from
	// one that does.
	PlanDigest string `json:"planDigest"`
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
	nodes := GenerateNodes(cfg.Nodes, cfg.Seed)
	if !cfg.NoRelations {
		LabelDatasets(nodes, cfg.Seed)
	}
	st := NewState(nodes)
	wls := GenerateWorkloads(cfg.Tasks, cfg.PerWorkload, cfg.Policy, !cfg.NoGangs, !cfg.NoRelations, cfg.Seed)
	if cfg.Sample == 0 {
		cfg.Sample = scheduler.DefaultSampleSize(cfg.Nodes)
	}
	res := &Result{
		Nodes: cfg.Nodes, Tasks: cfg.Tasks, Workloads: len(wls), Policy: cfg.Policy, Relations: !cfg.NoRelations, Seed: cfg.Seed, Sample: cfg.Sample,
		FailureReasons: map[string]int{}, GOMAXPROCS: runtime.GOMAXPROCS(0),
		GenerateSeconds: time.Since(t0).Seconds(),
	}
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	missing := make(map[string]int, len(wls))  // per workload, from its latest evaluation
	reasons := make(map[string]map[string]int) // per workload: failed replicas by reason
	evalSeq := 0
	digest := fnv.New64a()
	scratch := &scheduler.Scratch{} // evaluations run one at a time, as one worker's
	var digestTime time.Duration    // not part of the run's figures
	evaluate := func(w *api.Workload, trigger string) []*api.Allocation {
		eval := &api.Evaluation{ID: fmt.Sprintf("eval-%s-%d", w.Name, evalSeq), Workload: w.Name, Priority: w.Priority, TriggeredBy: trigger}
		evalSeq++
		var plan *api.Plan
		var preempted []*api.Allocation
		for attempt := range maxAttempts {
			ts := time.Now()
			plan = scheduler.Schedule(st, eval, scheduler.Options{Seed: cfg.Seed*1_000_003 + int64(evalSeq)*7 + int64(attempt), Now: now, Scratch: scratch, FeasibleSample: cfg.Sample})
			td := time.Now()
			digestPlan(digest, st, plan)
			ta := time.Now()
			digestTime += ta.Sub(td)
			ar := st.Apply(plan)
			res.ScheduleSeconds += td.Sub(ts).Seconds()
			res.ApplySeconds += time.Since(ta).Seconds()
			res.Evaluations++
			res.Placements += ar.Placed
			res.RejectedNodes += len(ar.Rejected)
			preempted = append(preempted, ar.Preempted...)
			if len(ar.Rejected) == 0 {
				break
			}
		}
		missing[w.Name] = 0
		reasons[w.Name] = nil
		for _, f := range plan.Failures {
			missing[w.Name] += f.Missing
			if reasons[w.Name] == nil {
				reasons[w.Name] = map[string]int{}
			}
			reasons[w.Name][groupKind(w)+": "+topReason(f)] += f.Missing
		}
		return preempted
	}
	start := time.Now()
	for wi, w := range wls {
		st.PutWorkload(w)
		// The victims' workloads are re-evaluated, as the plan applier
		// asks, before the next submission. Victims have strictly lower
		// priority, so the chain ends.
		queue := evaluate(w, api.TriggerWorkloadRegister)
		for len(queue) > 0 {
			seen := map[string]bool{}
			var next []*api.Allocation
			for _, v := range queue {
				res.Preempted++
				if seen[v.Workload] {
					continue
				}
				seen[v.Workload] = true
				next = append(next, evaluate(st.Workload(v.Namespace, v.Workload), api.TriggerPreemption)...)
			}
			queue = next
		}
		if cfg.Progress != nil {
			cfg.Progress(wi+1, len(wls))
		}
	}
	res.WallSeconds = (time.Since(start) - digestTime).Seconds()
	res.PlanDigest = fmt.Sprintf("%016x", digest.Sum64())
	if res.WallSeconds > 0 {
		res.PlacementsPerSec = float64(res.Placements) / res.WallSeconds
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.HeapInuseBytes = ms.HeapInuse
	res.PeakRSSBytes = peakRSS()

	// All-or-reason: every replica is running or counted in a failure of
	// its workload's latest evaluation; a gang group has none or at least
	// MinMember live members unless preemption took some of them.
	for _, w := range wls {
		live := map[string]int{}
		preempted := map[string]bool{}
		for _, a := range st.AllocsByWorkload(w.Namespace, w.Name) {
			if !a.Terminal() {
				live[a.Group]++
			}
			if a.PreemptedBy != "" {
				preempted[w.Name+"/"+a.Group] = true
			}
		}
		want := 0
		for _, g := range w.Groups {
			want += g.Replicas
			res.Placed += live[g.Name]
			if g.Gang != nil && live[g.Name] > 0 && live[g.Name] < g.Gang.MinMember {
				txt := fmt.Sprintf("%s/%s: %d of %d members", w.Name, g.Name, live[g.Name], g.Gang.MinMember)
				if preempted[w.Name+"/"+g.Name] {
					res.GangsBrokenByPreemption = append(res.GangsBrokenByPreemption, txt)
				} else {
					res.GangViolations = append(res.GangViolations, txt)
				}
			}
			if g.Gang != nil {
				res.Gangs++
				if live[g.Name] >= g.Gang.MinMember {
					res.GangsPlaced++
				}
			}
		}
		res.Failed += missing[w.Name]
		res.Unaccounted += want - liveTotal(live) - missing[w.Name]
		for k, v := range reasons[w.Name] {
			res.FailureReasons[k] += v
		}
	}
	res.Overcommitted = st.Verify()
	res.RelationViolations, res.SpreadUnchecked = checkRelations(st, wls)
	res.CPUUtilisation, res.GPUUtilisation = utilisation(st)
	return res, nil
}

// digestPlan adds plan to h, explanations included, in a fixed order and without allocation ids
// (an allocation is named by workload, group and index; a stopped one is
// looked up in st, which the plan has not been applied to yet).
func digestPlan(h hash.Hash64, st *State, plan *api.Plan) {
	fmt.Fprintf(h, "plan %s %d\n", plan.Workload, plan.Preemptions)
	for _, id := range slices.Sorted(maps.Keys(plan.Place)) {
		for _, a := range plan.Place[id] {
			fmt.Fprintf(h, "place %s %s/%s[%d] %v %d %v %d\n", id, a.Workload, a.Group, a.Index,
				a.Assignment.CPUs, a.Assignment.NUMANode, a.Assignment.GPUs, a.Assignment.GPUMilli)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(plan.Stop)) {
		for _, s := range plan.Stop[id] {
			name := "?"
			if a := st.byID[s.AllocID]; a != nil {
				name = fmt.Sprintf("%s/%s[%d]", a.Workload, a.Group, a.Index)
			}
			fmt.Fprintf(h, "stop %s %s %q %v %v\n", id, name, s.Reason, s.Lost, s.PreemptedBy != "")
		}
	}
	for _, f := range plan.Failures {
		fmt.Fprintf(h, "fail %s %d %d %q\n", f.Group, f.Missing, f.NodesEvaluated, f.Summary)
	}
	for _, e := range plan.Explanations {
		fmt.Fprintf(h, "explain %s %d %d %d %d %v", e.Group, e.Wanted, e.Placed, e.NodesExamined, e.NodesFeasible, e.Filtered)
		if e.Chosen != nil {
			fmt.Fprintf(h, " chosen %s %v %v", e.Chosen.NodeName, e.Chosen.Score, e.Chosen.Components)
		}
		h.Write([]byte("\n"))
	}
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

func liveTotal(live map[string]int) int {
	n := 0
	for _, v := range live {
		n += v
	}
	return n
}

// groupKind is the template a workload came from (its app label).
func groupKind(w *api.Workload) string {
	if k := w.Labels["app"]; k != "" {
		return k
	}
	return w.Groups[0].Name
}
