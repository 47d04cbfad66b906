package rollouts

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/strata-dev/strata/api"
)

// Family is the kind of new version a scenario rolls out.
type Family string

// The families; every one but Good is a bad version.
const (
	Good            Family = "good"
	CrashOnStart    Family = "crash-on-start"
	SlowLeak        Family = "slow-leak"
	FailingRequests Family = "failing-requests"
	OneNodeClass    Family = "one-node-class"
)

// Families lists them in the order reports show them.
var Families = []Family{Good, CrashOnStart, SlowLeak, FailingRequests, OneNodeClass}

// Noise is unrelated trouble laid over a rollout.
type Noise string

// The kinds of noise.
const (
	RackDown    Noise = "rack-down"    // a rack's nodes go down for good; their copies are lost
	RackNetwork Noise = "rack-network" // a rack's copies, of every workload, fail checks and restart for a while
	BadNode     Noise = "bad-node"     // a node's copies restart again and again
)

// NoiseEvent is one piece of noise.
type NoiseEvent struct {
	Kind Noise
	// Rack or Node it strikes (index into the cell).
	Rack, Node int
	// At is when it begins, For how long it lasts (0: to the end).
	At, For time.Duration
}

// Scenario is one rollout to simulate, all drawn from Seed.
type Scenario struct {
	Seed   uint64
	Family Family

	Racks, NodesPerRack int
	// RackClass is each rack's hardware class ("gen4" has no AVX-512).
	RackClass []string
	// Background copies per node, of 12 background workloads.
	Background int

	Replicas int
	Update   api.UpdatePolicy

	// Base rates of the old version and of everything else: trouble per
	// copy-hour past the start, and the chance that a start fails.
	Hazard, StartFail float64
	// GoodFactor scales a good version's rates (0.8-1.2).
	GoodFactor float64

	// CrashProb is the chance that a start of a crashing version fails.
	CrashProb float64
	// LeakMedian is the median uptime after which a leaking copy is
	// OOM-killed (log-normal, σ 0.3).
	LeakMedian time.Duration
	// FlipRate is how often per copy-hour a copy failing requests has a
	// health check turn failing, for 10-60 s.
	FlipRate float64
	// BadClass is the class (Key=Value) a one-node-class version is bad
	// on, and BadMode how: by CrashProb or by FlipRate.
	BadClass, BadMode string

	Noise []NoiseEvent
	// Bake is how long the run goes on after the rollout finished (an
	// hour: an operator's usual watch after a release).
	Bake time.Duration
}

// Bad reports whether the scenario's version is bad.
func (s Scenario) Bad() bool { return s.Family != Good }

// Generate draws the scenario of a seed: half of the seeds roll out a
// good version, the others one of the four bad families in turn.
func Generate(seed uint64) Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x5ca1ab1e))
	s := Scenario{Seed: seed, Bake: time.Hour}
	if rng.IntN(2) == 0 {
		s.Family = Good
	} else {
		s.Family = Families[1+rng.IntN(len(Families)-1)]
	}
	s.Racks, s.NodesPerRack = 6+rng.IntN(11), 6+rng.IntN(7)
	classes := []string{"gen4", "gen5", "gen6"}[:2+rng.IntN(2)]
	for range s.Racks {
		s.RackClass = append(s.RackClass, classes[rng.IntN(len(classes))])
	}
	s.Background = 3 + rng.IntN(4)
	s.Replicas = 10 + rng.IntN(51)
	s.Update = api.DefaultUpdatePolicy()
	s.Update.MaxParallel = []int{1, 2, 3, 5, max(1, s.Replicas/10)}[rng.IntN(5)]
	s.Update.MinHealthyTime = time.Duration(10+rng.IntN(51)) * time.Second
	s.Hazard = math.Exp(math.Log(0.02) + rng.Float64()*math.Log(0.3/0.02))
	s.StartFail = 0.03 * rng.Float64()
	s.GoodFactor = 1
	switch s.Family {
	case Good:
		s.GoodFactor = 0.8 + 0.4*rng.Float64()
	case CrashOnStart:
		s.CrashProb = 0.3 + 0.7*rng.Float64()
	case SlowLeak:
		s.LeakMedian = time.Duration(5+rng.IntN(41)) * time.Minute
	case FailingRequests:
		s.FlipRate = math.Exp(rng.Float64() * math.Log(12))
		s.FlipRate = math.Max(1, s.FlipRate)
	case OneNodeClass:
		if rng.IntN(3) == 0 {
			s.BadClass = "cpu.feature.avx512f=false"
		} else {
			s.BadClass = "class=" + classes[rng.IntN(len(classes))]
		}
		if rng.IntN(2) == 0 {
			s.BadMode, s.CrashProb = "crash", 0.5+0.5*rng.Float64()
		} else {
			s.BadMode, s.FlipRate = "flip", 2+10*rng.Float64()
		}
	}
	// Noise strikes within the rollout's expected span.
	span := time.Duration(s.Replicas/s.Update.MaxParallel+1) * (s.Update.MinHealthyTime + 15*time.Second)
	at := func() time.Duration { return time.Duration(rng.Int64N(int64(span) + 1)) }
	if rng.Float64() < 0.3 {
		s.Noise = append(s.Noise, NoiseEvent{Kind: RackDown, Rack: rng.IntN(s.Racks), At: at()})
	}
	if rng.Float64() < 0.3 {
		s.Noise = append(s.Noise, NoiseEvent{Kind: RackNetwork, Rack: rng.IntN(s.Racks), At: at(), For: time.Duration(2+rng.IntN(9)) * time.Minute})
	}
	if rng.Float64() < 0.3 {
		s.Noise = append(s.Noise, NoiseEvent{Kind: BadNode, Node: rng.IntN(s.Racks * s.NodesPerRack), At: at()})
	}
	return s
}

// Describe words the scenario's version and noise in one line.
func (s Scenario) Describe() string {
	v := string(s.Family)
	switch s.Family {
	case Good:
		v = fmt.Sprintf("good (rates ×%.2f)", s.GoodFactor)
	case CrashOnStart:
		v = fmt.Sprintf("crash-on-start (%.0f %% of starts)", 100*s.CrashProb)
	case SlowLeak:
		v = fmt.Sprintf("slow-leak (OOM after about %s)", s.LeakMedian)
	case FailingRequests:
		v = fmt.Sprintf("failing-requests (%.1f check flips per copy-hour)", s.FlipRate)
	case OneNodeClass:
		v = fmt.Sprintf("one-node-class (%s, %s)", s.BadClass, s.BadMode)
	}
	out := fmt.Sprintf("%s; %d copies, maxParallel %d, minHealthyTime %s; %d racks × %d nodes; base %.3g trouble/copy-hour, %.1f %% failed starts",
		v, s.Replicas, s.Update.MaxParallel, s.Update.MinHealthyTime, s.Racks, s.NodesPerRack, s.Hazard, 100*s.StartFail)
	for _, n := range s.Noise {
		out += fmt.Sprintf("; %s at %s", n.Kind, n.At.Round(time.Second))
	}
	return out
}
