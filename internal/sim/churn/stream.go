package churn

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/strata-dev/strata/internal/sim/trace"
)

// ErrNoTimes: the trace has no creation and deletion times (the openb
// multigpu lists), so pods have no lifetime to run for.
var ErrNoTimes = errors.New("trace pods carry no creation and deletion times")

// Stream is the seeded arrival stream of a churn run: Poisson arrivals of
// pods drawn uniformly, with replacement, from the trace's pods, each
// running for its trace lifetime.
type Stream struct {
	pods []trace.Pod
	life []int64
	cum  []float64 // cumulative lifetimes, for length-biased draws
	rate float64   // arrivals per second
	rng  *rand.Rand
	now  float64
	capa int64
	load float64
}

// Arrival is one pod of the stream: the trace pod it copies and when it
// arrives and leaves (seconds).
type Arrival struct {
	Pod *trace.Pod
	At  int64
	// Life is how long it runs once placed (its trace lifetime; for the
	// initial population, what is left of it).
	Life int64
}

// NewStream sets the rate so the offered GPU load is load × gpuCapacity
// (milli-GPU): rate × mean(GPU request × lifetime) = load × capacity.
func NewStream(pods []trace.Pod, gpuCapacity int64, load float64, seed uint64) (*Stream, error) {
	if len(pods) == 0 {
		return nil, errors.New("churn: no pods to draw from")
	}
	if !(load > 0) {
		return nil, fmt.Errorf("churn: load must be positive, got %g", load)
	}
	s := &Stream{pods: pods, life: make([]int64, len(pods)), rng: rand.New(rand.NewPCG(seed, 0xc4a12))}
	var gpuSeconds float64
	for i := range pods {
		p := &pods[i]
		if p.Creation == trace.Absent || p.Deletion == trace.Absent {
			return nil, fmt.Errorf("%w: pod %s", ErrNoTimes, p.Name)
		}
		s.life[i] = max(p.Deletion-p.Creation, 1)
		gpuSeconds += float64(p.GPURequestMilli()) * float64(s.life[i])
	}
	s.cum = make([]float64, len(pods))
	total := 0.0
	for i, l := range s.life {
		total += float64(l)
		s.cum[i] = total
	}
	s.capa, s.load = gpuCapacity, load
	if gpuSeconds == 0 {
		return nil, errors.New("churn: the trace asks for no GPU")
	}
	s.rate = load * float64(gpuCapacity) / (gpuSeconds / float64(len(pods)))
	return s, nil
}

// Rate is the arrivals per day.
func (s *Stream) Rate() float64 { return s.rate * 86400 }

// Initial is the cell's population at time 0 as the stream's own steady
// state has it, so a run starts in equilibrium rather than empty: the pods
// present at a random moment of an M/G/∞ stream are drawn in proportion to
// their lifetime (a long job is more likely to be running) and have a
// uniformly distributed share of it left. Pods are drawn until their GPU
// request reaches the offered load, load × capacity; they arrive at 0 in
// draw order.
func (s *Stream) Initial() []Arrival {
	var out []Arrival
	target := s.load * float64(s.capa)
	total := s.cum[len(s.cum)-1]
	for sum := 0.0; sum < target; {
		x := s.rng.Float64() * total
		i := sort.SearchFloat64s(s.cum, x)
		i = min(i, len(s.pods)-1)
		left := int64(s.rng.Float64()*float64(s.life[i])) + 1
		out = append(out, Arrival{Pod: &s.pods[i], At: 0, Life: left})
		sum += float64(s.pods[i].GPURequestMilli())
	}
	return out
}

// Next is the next arrival.
func (s *Stream) Next() Arrival {
	s.now += s.rng.ExpFloat64() / s.rate
	i := s.rng.IntN(len(s.pods))
	at := int64(s.now)
	return Arrival{Pod: &s.pods[i], At: at, Life: s.life[i]}
}
