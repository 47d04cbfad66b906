package policy_test

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/strata-dev/strata/internal/frag"
	"github.com/strata-dev/strata/internal/sim/cluster"
	simfrag "github.com/strata-dev/strata/internal/sim/frag"
	"github.com/strata-dev/strata/internal/sim/policy"
	"github.com/strata-dev/strata/internal/sim/simtest"
	"github.com/strata-dev/strata/internal/sim/trace"
	"github.com/strata-dev/strata/internal/sim/workload"
)

// This file is the bench the "beyond FGD" ideas were measured on
// (docs/benchmarks.md, "Beyond FGD"): variants of FGD+'s second key, run
// on openb traces and on openb-style mixes (workload.Remix) against FGD,
// seed by seed, with where the idle GPU is at the end of each run.

// idle is where a run's unallocated GPU milli sits at the end, in % of
// the cell's GPU capacity.
type idle struct {
	alloc float64
	// starved: on nodes with less free CPU than any GPU pod of the
	// workload asks; remnant: on partly used GPUs with at most 200 milli
	// free (what an 810-milli share leaves); partial: other partly used
	// GPUs; whole: fully free GPUs.
	starved, remnant, partial, whole float64
	// bigShares is the GPU milli that the placed shares of more than 800
	// milli leave free on their GPUs, smallShares what the placed shares
	// of at most 200 milli take: the first minus the second is lost to
	// any policy that places every pod that fits (only a share of at most
	// 200 milli fits next to one of more than 800).
	bigShares, smallShares float64
	// cpuAlloc is the CPU allocated, % of the cell's; placedCPUOnly the
	// CPU-only pods placed.
	cpuAlloc      float64
	placedCPUOnly int
}

// breakdown measures c at the end of a run; minCPU is the least CPU a GPU
// pod of the workload asks.
func breakdown(c *cluster.Cluster, minCPU int64) idle {
	capa := float64(c.Capacity().GPUMilli) / 100
	out := idle{alloc: float64(c.Used().GPUMilli) / capa}
	for i := 0; i < c.NumNodes(); i++ {
		n := c.Node(i)
		for _, f := range n.GPUFree {
			v := float64(f) / capa
			switch {
			case f == 0:
			case n.CPUFree < minCPU:
				out.starved += v
			case f <= 200:
				out.remnant += v
			case f < trace.MilliPerGPU:
				out.partial += v
			default:
				out.whole += v
			}
		}
	}
	return out
}

// variant is an FGD+ whose second key is changed; the first key is FGD's.
type variant struct {
	*policy.FGD
	d         frag.Distribution
	r         float64
	cpuKey    string // CPU-only pods: "idle" (FGD+), "none", "no-idle", "idle-share", "usable"
	usableGPU bool   // GPU pods balance CPU against usable idle GPU (idle − fragmentation)
	pods      []trace.Pod
	pressure  []float64 // per model id: the workload's GPU demand on it per GPU it has, 0..1
}

// modelPressure is, per GPU model of c, the GPU milli the workload's GPU
// pods ask of it per GPU of it, relative to the most pressed model: each
// pod's demand is spread over the models it accepts in proportion to
// their GPUs.
func modelPressure(c *cluster.Cluster, pods []trace.Pod) []float64 {
	supply := make([]float64, len(c.Models()))
	for i := 0; i < c.NumNodes(); i++ {
		n := c.Node(i)
		supply[n.ModelID] += float64(len(n.GPUFree))
	}
	demand := make([]float64, len(supply))
	for i := range pods {
		p := &pods[i]
		if p.NumGPU == 0 {
			continue
		}
		var accepted float64
		for m, model := range c.Models() {
			if model != "" && p.AcceptsModel(model) {
				accepted += supply[m]
			}
		}
		if accepted == 0 {
			continue
		}
		for m, model := range c.Models() {
			if model != "" && p.AcceptsModel(model) {
				demand[m] += float64(p.GPURequestMilli()) / accepted
			}
		}
	}
	top := 0.0
	for m := range demand {
		top = max(top, demand[m])
	}
	for m := range demand {
		demand[m] /= max(top, 1e-12)
	}
	return demand
}

func (v *variant) Name() string { return "variant" }

func (v *variant) Score(c *cluster.Cluster, node int, p *trace.Pod) float64 {
	base := 4 * v.FGD.Score(c, node, p) // FGD+'s bands: the key stays within ±1
	n, m := c.Node(node), c.MaxNode()
	idleGPU := n.GPUFreeTotal()
	if p.NumGPU == 0 {
		switch v.cpuKey {
		case "none":
			return base
		case "no-idle":
			if idleGPU == 0 {
				return base + 1
			}
			return base
		case "idle-share":
			if len(n.GPUFree) == 0 {
				return base
			}
			return base - float64(idleGPU)/float64(trace.MilliPerGPU*len(n.GPUFree))
		case "pressure":
			if v.pressure == nil {
				v.pressure = modelPressure(c, v.pods)
			}
			return base - float64(idleGPU)*v.pressure[n.ModelID]/float64(max(m.GPUMilli, 1))
		case "usable":
			if idleGPU > 0 {
				idleGPU -= int64(simfrag.NodeFrag(&v.d, c, n))
			}
		}
	} else if v.usableGPU && idleGPU > 0 {
		idleGPU -= int64(simfrag.NodeFrag(&v.d, c, n))
	}
	return base + frag.CPUKey(n.CPUFree, idleGPU, simfrag.WantOf(p), v.r, m.CPUMilli, m.GPUMilli)
}

// variants are the ideas measured, by name.
var variants = map[string]func(v *variant, pods []trace.Pod){
	"FGD+/as-is":              func(*variant, []trace.Pod) {},
	"FGD+/no-cpu-key":         func(v *variant, _ []trace.Pod) { v.cpuKey = "none" },
	"FGD+/cpu-no-idle":        func(v *variant, _ []trace.Pod) { v.cpuKey = "no-idle" },
	"FGD+/cpu-idle-share":     func(v *variant, _ []trace.Pod) { v.cpuKey = "idle-share" },
	"FGD+/cpu-model-pressure": func(v *variant, pods []trace.Pod) { v.cpuKey, v.pods = "pressure", pods },
	"FGD+/usable": func(v *variant, _ []trace.Pod) {
		v.cpuKey, v.usableGPU = "usable", true
	},
	"FGD+/r-all-pods": func(v *variant, pods []trace.Pod) {
		var cpu, gpu float64
		for i := range pods {
			cpu += float64(pods[i].CPUMilli)
			gpu += float64(pods[i].GPURequestMilli())
		}
		v.r = cpu / max(gpu, 1)
	},
}

func newPlacer(tb testing.TB, name string, pods []trace.Pod, seed int64) *policy.Selector {
	o := policy.Options{Seed: uint64(seed), Workload: pods}
	if set, ok := variants[name]; ok {
		v := &variant{d: simfrag.FromPods(pods, simfrag.DefaultCoverage), cpuKey: "idle", r: frag.CPUPerGPU(simfrag.Shapes(pods))}
		v.FGD = policy.NewFGD(simfrag.FromPods(pods, simfrag.DefaultCoverage))
		set(v, pods)
		return policy.NewSelector(v, o.Seed)
	}
	sel, err := policy.New(name, o)
	if err != nil {
		tb.Fatal(err)
	}
	return sel
}

// inflationRun is the published experiment on nodes and pods with one
// policy and seed, and where the idle GPU is at its end.
func inflationRun(tb testing.TB, nodes []trace.Node, pods []trace.Pod, pol string, seed int64) idle {
	c, err := cluster.New(nodes)
	if err != nil {
		tb.Fatal(err)
	}
	in, err := workload.Inflate(pods, c.Capacity().GPUMilli, workload.DefaultRatio, seed)
	if err != nil {
		tb.Fatal(err)
	}
	sel := newPlacer(tb, pol, pods, seed)
	minCPU := int64(math.MaxInt64)
	for i := range pods {
		if pods[i].NumGPU > 0 {
			minCPU = min(minCPU, pods[i].CPUMilli)
		}
	}
	var big, small int64
	placedCPUOnly := 0
	for i := range in {
		p := &in[i]
		if pl, ok := sel.Place(c, p); ok {
			if _, err := c.Assign(p, pl); err != nil {
				tb.Fatal(err)
			}
			switch {
			case p.NumGPU == 0:
				placedCPUOnly++
			case p.IsShare() && p.GPUMilli > 800:
				big += trace.MilliPerGPU - p.GPUMilli
			case p.IsShare() && p.GPUMilli <= 200:
				small += p.GPUMilli
			}
		}
	}
	out := breakdown(c, minCPU)
	capa := float64(c.Capacity().GPUMilli) / 100
	out.bigShares, out.smallShares = float64(big)/capa, float64(small)/capa
	out.cpuAlloc = 100 * float64(c.Used().CPUMilli) / float64(c.Capacity().CPUMilli)
	out.placedCPUOnly = placedCPUOnly
	return out
}

// The breakdown accounts for every idle milli-GPU.
func TestBreakdownAccountsForAllIdle(t *testing.T) {
	nodes := []trace.Node{node("a", 8000, 4), node("b", 2000, 2), node("c", 16000, 0)}
	pods := []trace.Pod{pod("whole", 4000, 1000), pod("share", 1000, 810), pod("small", 500, 300), pod("cpu", 1000, 0)}
	for seed := int64(1); seed <= 20; seed++ {
		got := inflationRun(t, nodes, pods, "FGD+", seed)
		if sum := got.alloc + got.starved + got.remnant + got.partial + got.whole; math.Abs(sum-100) > 1e-9 {
			t.Fatalf("seed %d: %+v sums to %v", seed, got, sum)
		}
	}
}

// A variant that changes nothing is FGD+: the variants differ from FGD+
// only in what they change.
func TestVariantBaseIsFGDPlus(t *testing.T) {
	if testing.Short() {
		t.Skip("a full openb run; skipped with -short")
	}
	nodes, pods := variantTrace(t, "default@cpu=0.3")
	if got, want := inflationRun(t, nodes, pods, "FGD+/as-is", 7), inflationRun(t, nodes, pods, "FGD+", 7); got != want {
		t.Fatalf("FGD+/as-is %+v, FGD+ %+v", got, want)
	}
}

// TestFGDVariants measures policies against FGD, seed by seed (paired):
//
//	STRATA_SIM_VARIANTS=FGD+,FGD+/no-cpu-key STRATA_SIM_TRACES=default,gpuspec20@cpu=0.3 \
//	  STRATA_SIM_SEEDS=100..109 go test ./internal/sim/policy -run TestFGDVariants -v -timeout 60m
//
// A trace is an openb pod list, optionally remixed (workload.Remix) as
// LIST@cpu=F (CPU-only pods F of all pods), LIST@share=F (sharing pods F
// of the GPU milli) or both, joined by "+". Each line: the mean final GPU
// allocation, the mean paired difference from FGD ± its standard error,
// where the idle GPU is at the end (starved of CPU, ≤200-milli remnants,
// other partly used GPUs, whole GPUs), and what shares of more than 800
// milli leave free and shares of at most 200 milli take (% of capacity),
// the CPU allocated (%) and the CPU-only pods placed (mean per run).
func TestFGDVariants(t *testing.T) {
	env := os.Getenv("STRATA_SIM_VARIANTS")
	if env == "" || testing.Short() {
		t.Skip("set STRATA_SIM_VARIANTS to measure policy variants against FGD")
	}
	if env == "all" {
		env = "FGD+"
		for name := range variants {
			env += "," + name
		}
	}
	names := append([]string{"FGD"}, strings.Split(env, ",")...)
	var lo, hi int64 = 100, 109
	if s := os.Getenv("STRATA_SIM_SEEDS"); s != "" {
		if _, err := fmt.Sscanf(s, "%d..%d", &lo, &hi); err != nil || hi < lo+1 {
			t.Fatalf("STRATA_SIM_SEEDS %q: want A..B with B > A", s)
		}
	}
	traces := strings.Split(os.Getenv("STRATA_SIM_TRACES"), ",")
	if traces[0] == "" {
		traces = []string{"default"}
	}
	for _, tr := range traces {
		nodes, pods := variantTrace(t, tr)
		res := make([][]idle, len(names))
		var wg sync.WaitGroup
		sem := make(chan struct{}, 2)
		for k, pol := range names {
			res[k] = make([]idle, hi-lo+1)
			for s := lo; s <= hi; s++ {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					res[k][s-lo] = inflationRun(t, nodes, pods, pol, s)
				}()
			}
		}
		wg.Wait()
		line := tr
		for k, pol := range names {
			var m, d, d2 float64
			var mean idle
			n := float64(hi - lo + 1)
			for i, o := range res[k] {
				m += o.alloc / n
				x := o.alloc - res[0][i].alloc
				d += x / n
				d2 += x * x
				mean.starved += o.starved / n
				mean.remnant += o.remnant / n
				mean.partial += o.partial / n
				mean.whole += o.whole / n
				mean.bigShares += o.bigShares / n
				mean.smallShares += o.smallShares / n
				mean.cpuAlloc += o.cpuAlloc / n
				mean.placedCPUOnly += o.placedCPUOnly
			}
			se := math.Sqrt(max(0, d2/n-d*d) * n / (n - 1) / n)
			line += fmt.Sprintf(" | %s %.2f %+.2f±%.2f (idle: starved %.2f, remnants %.2f, partial %.2f, whole %.2f; >800 shares leave %.2f, ≤200 shares take %.2f; CPU %.2f, CPU-only pods placed %d)",
				pol, m, d, se, mean.starved, mean.remnant, mean.partial, mean.whole, mean.bigShares, mean.smallShares,
				mean.cpuAlloc, mean.placedCPUOnly/len(res[k]))
		}
		t.Log(line)
	}
}

// variantTrace loads the 1,213 GPU nodes of openb and a pod list, remixed
// when the name asks for it (seed 1).
func variantTrace(tb testing.TB, name string) ([]trace.Node, []trace.Pod) {
	tb.Helper()
	nodes, err := trace.LoadOpenbNodes(simtest.Openb(tb, "openb_node_list_gpu_node.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	list, spec, _ := strings.Cut(name, "@")
	pods, err := trace.LoadOpenbPods(simtest.Openb(tb, "openb_pod_list_"+list+".csv"))
	if err != nil {
		tb.Fatal(err)
	}
	if spec == "" {
		return nodes, pods
	}
	m := workload.Mix{CPUOnlyPods: -1, ShareGPU: -1}
	for _, kv := range strings.Split(spec, "+") {
		k, v, _ := strings.Cut(kv, "=")
		f, err := strconv.ParseFloat(v, 64)
		switch {
		case err != nil:
			tb.Fatalf("trace %q: %s: %v", name, kv, err)
		case k == "cpu":
			m.CPUOnlyPods = f
		case k == "share":
			m.ShareGPU = f
		default:
			tb.Fatalf("trace %q: unknown mix key %q (want cpu or share)", name, k)
		}
	}
	if pods, err = workload.Remix(pods, m, 1); err != nil {
		tb.Fatal(err)
	}
	return nodes, pods
}
