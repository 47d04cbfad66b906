package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/frag"
	"github.com/strata-dev/strata/internal/sim/policy"
	"github.com/strata-dev/strata/internal/sim/trace"
	"github.com/strata-dev/strata/internal/sim/workload"
)

// Mode selects how pods are submitted.
type Mode string

const (
	// ModeReplay honours the trace's times.
	ModeReplay Mode = "replay"
	// ModeInflation runs the FGD paper's inflation experiment.
	ModeInflation Mode = "inflation"
)

// ErrBadConfig wraps every configuration error Run returns.
var ErrBadConfig = errors.New("bad simulation config")

// Config is one simulation run.
type Config struct {
	Nodes      []trace.Node
	Pods       []trace.Pod
	NodeEvents []trace.NodeEvent // replay only
	Mode       Mode
	// Policy names a policy of package policy (policy.Names). Ignored when
	// Placer is set.
	Policy string
	// Placer, when set, makes the placement decisions instead of Policy.
	Placer cluster.Placer
	// NewPlacer, when set and Placer is nil, builds the placer of a run from
	// its seed (RunInflationSeeds calls it once per seed). Policy then only
	// names the results.
	NewPlacer func(seed int64) cluster.Placer
	Seed      int64
	// InflationRatio is the GPU request target as a multiple of capacity
	// (workload.DefaultRatio when 0).
	InflationRatio float64
	// Coverage is the popularity coverage of the target workload used by
	// FGD and the fragmentation metric (frag.DefaultCoverage when 0).
	Coverage float64
	// Progress, when set, is called from the running goroutine with the
	// work done so far (pods submitted or events processed) and the total,
	// about 200 times per run and once at the end. It must not block for long.
	Progress func(done, total int)
	// TieBreak is policy.Options.TieBreak (policy.TieRank, the paper's rule,
	// when empty).
	TieBreak string
	// NoSeries drops the per-pod/per-event series from the Result (the
	// final figures are still computed).
	NoSeries bool
	// Explain names a pod whose placement the Result explains
	// (Result.Explanation): the decision that placed it, or its last
	// attempt when it never was. In inflation mode sampled copies are
	// named pod~k.
	Explain string
}

// Run simulates cfg. It returns early with ctx's error when ctx is done.
func Run(ctx context.Context, cfg Config) (*Result, error) { return run(ctx, cfg, false) }

func run(ctx context.Context, cfg Config, walk bool) (*Result, error) {
	if len(cfg.Nodes) == 0 {
		return nil, fmt.Errorf("%w: no nodes", ErrBadConfig)
	}
	c, err := cluster.New(cfg.Nodes)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	coverage := cfg.Coverage
	if coverage == 0 {
		coverage = frag.DefaultCoverage
	}
	placer, name := cfg.Placer, cfg.Policy
	if placer == nil && cfg.NewPlacer != nil {
		placer = cfg.NewPlacer(cfg.Seed)
	}
	if placer == nil {
		sel, err := policy.New(cfg.Policy, policy.Options{Seed: uint64(cfg.Seed), Workload: cfg.Pods, Coverage: coverage, TieBreak: cfg.TieBreak})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
		}
		placer = sel
	} else if name == "" {
		name = fmt.Sprintf("%T", placer)
	}
	dist := frag.FromPods(cfg.Pods, coverage)
	e := &engine{ctx: ctx, cfg: &cfg, c: c, placer: placer, fragTracker: frag.NewTracker(&dist, c), walk: walk,
		res: &Result{Mode: cfg.Mode, Policy: name, Seed: cfg.Seed, Nodes: len(cfg.Nodes)}}
	switch cfg.Mode {
	case ModeInflation:
		ratio := cfg.InflationRatio
		if ratio == 0 {
			ratio = workload.DefaultRatio
		}
		pods, err := workload.Inflate(cfg.Pods, c.Capacity().GPUMilli, ratio, cfg.Seed)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
		}
		err = e.inflation(pods)
		if err != nil {
			return nil, err
		}
	case ModeReplay:
		if err := e.replay(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: unknown mode %q (want %q or %q)", ErrBadConfig, cfg.Mode, ModeReplay, ModeInflation)
	}
	e.finish()
	return e.res, nil
}

// engine is the state of one run.
type engine struct {
	ctx         context.Context
	cfg         *Config
	c           *cluster.Cluster
	placer      cluster.Placer
	fragTracker *frag.Tracker
	res         *Result
	arrivedGPU  int64
	explained   bool // the explained pod was placed: explanation final
	walk        bool // replay: walk every waiting pod on every pass (tests)
}

// stopped reports ctx's error once it is done. It is cheap enough to call
// for every event (a non-blocking receive), so a run stops within one
// placement of a cancellation.
func (e *engine) stopped() error {
	select {
	case <-e.ctx.Done():
		return e.ctx.Err()
	default:
		return nil
	}
}

// place asks the placer and commits its answer; a placement the cluster
// rejects is a policy bug, reported as an error.
func (e *engine) place(p *trace.Pod) (cluster.AllocID, bool, error) {
	pl, ok := e.placer.Place(e.c, p)
	if e.cfg.Explain != "" && p.Name == e.cfg.Explain && !e.explained {
		e.explain(p, pl, ok)
	}
	if !ok {
		return -1, false, nil
	}
	id, err := e.commit(p, pl)
	return id, err == nil, err
}

// commit assigns a placement the placer made.
func (e *engine) commit(p *trace.Pod, pl cluster.Placement) (cluster.AllocID, error) {
	id, err := e.c.Assign(p, pl)
	if err != nil {
		return -1, fmt.Errorf("policy %s placed %s badly: %w", e.res.Policy, p.Name, err)
	}
	return id, nil
}

// explain records why p went where it did, before the cluster changes.
func (e *engine) explain(p *trace.Pod, pl cluster.Placement, ok bool) {
	x := e.c.Explain(p, pl, ok)
	if ex, can := e.placer.(cluster.Explainer); can {
		ex.Explain(e.c, p, pl, ok, &x)
	}
	if prev := e.res.Explanation; prev != nil {
		x.Attempts = prev.Attempts
	}
	x.Attempts++
	e.res.Explanation, e.explained = &x, ok
}

func (e *engine) sampleFrag(t int64) {
	fragMilli, idle := e.fragTracker.Update(e.c)
	ratio := 0.0
	if idle > 0 {
		ratio = 100 * fragMilli / float64(idle)
	}
	e.res.FragRatio = ratio
	if !e.cfg.NoSeries {
		e.res.Frag = append(e.res.Frag, FragPoint{Time: t, ArrivedGPU: pct(e.arrivedGPU, e.c.Capacity().GPUMilli),
			FragRatio: ratio, FragGPUs: fragMilli / trace.MilliPerGPU})
	}
}

func (e *engine) finish() {
	used, capa := e.c.Used(), e.c.Capacity()
	e.res.Capacity = capa
	e.res.GPUAlloc = pct(used.GPUMilli, capa.GPUMilli)
	e.res.CPUAlloc = pct(used.CPUMilli, capa.CPUMilli)
	e.res.MemAlloc = pct(used.MemoryMiB, capa.MemoryMiB)
	e.sampleFrag(e.res.EndTime)
}

// progress reports every ~0.5% of total.
func (e *engine) progress(done, total int) {
	if e.cfg.Progress == nil {
		return
	}
	if step := max(total/200, 1); done%step == 0 || done == total {
		e.cfg.Progress(done, total)
	}
}

// SeedsResult is a set of inflation runs of one policy over several seeds.
type SeedsResult struct {
	Policy string    `json:"policy"`
	Seeds  []int64   `json:"seeds"`
	Runs   []*Result `json:"runs"`
	// Mean final allocation over the seeds, in % of capacity.
	MeanGPUAlloc  float64 `json:"meanGpuAlloc"`
	MeanCPUAlloc  float64 `json:"meanCpuAlloc"`
	MeanMemAlloc  float64 `json:"meanMemAlloc"`
	MeanFragRatio float64 `json:"meanFragRatio"`
}

// RunInflationSeeds runs cfg in inflation mode once per seed (the published
// 42..51 when seeds is empty), `workers` at a time (2 when <= 0), and
// averages the final figures. cfg.Seed and cfg.Placer are ignored: each run
// builds its own policy from cfg.Policy with its own seed. Progress, if set,
// counts finished runs and is called from the calling goroutine's workers
// under a lock.
func RunInflationSeeds(ctx context.Context, cfg Config, seeds []int64, workers int) (*SeedsResult, error) {
	if len(seeds) == 0 {
		seeds = workload.DefaultSeeds()
	}
	if workers <= 0 {
		workers = 2
	}
	out := &SeedsResult{Policy: cfg.Policy, Seeds: seeds, Runs: make([]*Result, len(seeds))}
	errs := make([]error, len(seeds))
	progress := cfg.Progress
	var mu sync.Mutex
	finished := 0
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				run := cfg
				run.Mode, run.Seed, run.Placer, run.Progress = ModeInflation, seeds[i], nil, nil
				out.Runs[i], errs[i] = Run(ctx, run)
				if progress != nil {
					mu.Lock()
					finished++
					progress(finished, len(seeds))
					mu.Unlock()
				}
			}
		}()
	}
	for i := range seeds {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, r := range out.Runs {
		n := float64(len(out.Runs))
		out.MeanGPUAlloc += r.GPUAlloc / n
		out.MeanCPUAlloc += r.CPUAlloc / n
		out.MeanMemAlloc += r.MemAlloc / n
		out.MeanFragRatio += r.FragRatio / n
	}
	return out, nil
}
