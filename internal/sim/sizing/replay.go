package sizing

import (
	"context"
	"fmt"
	"math"

	"github.com/strata-dev/strata/internal/autopilot/vertical"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// MinSamples is the fewest samples a pod needs to be scored.
const MinSamples = 120

// Sizer sizes one pod. Limit is the limit in force for the next sample
// (false while the sizer has none: the hand-set limit stays); Observe shows
// it the sample, with OOMKilled set when the sample breached the limit.
type Sizer interface {
	Limit(now int64) (float64, bool)
	Observe(s vertical.Sample) error
}

// Policy makes a Sizer per pod.
type Policy interface {
	Name() string
	NewSizer() (Sizer, error)
}

// Row is one policy's score over every scored pod.
type Row struct {
	Policy        string  `json:"policy"`
	Pods          int     `json:"pods"`
	Slack         float64 `json:"slack"` // Σ(limit − usage) / Σ limit over the scored samples
	PodsBreaching int     `json:"podsBreaching"`
	BreachSamples int     `json:"breachSamples"`
}

// PodResult is one pod's replay under one policy.
type PodResult struct {
	Policy   string
	Pod      string
	Warmup   int // samples not scored
	Breaches int
	Slack    float64   // the pod's own slack over its scored samples
	Usage    []float64 // every sample
	Limit    []float64 // the limit in force at every sample (NaN where none)
	Times    []int64
	// Explained: the reason of the limit in force at each breach, for a
	// policy that explains itself.
	Explained []Breach
}

// Breach is one scored sample above the limit in force, and why the limit
// was what it was.
type Breach struct {
	Time   int64   `json:"time"`
	Usage  float64 `json:"usage"`
	Limit  float64 `json:"limit"`
	Reason string  `json:"reason,omitempty"`
}

// Explainer is a Sizer that says why its last limit was what it was.
type Explainer interface {
	Reason() string
}

// Result is a policy's row, its breaches pod by pod, and, when asked for,
// its pods' series.
type Result struct {
	Row       Row
	Breaching []PodBreaches
	Pods      []PodResult
}

// PodBreaches are one pod's breaches.
type PodBreaches struct {
	Pod      string   `json:"pod"`
	Breaches []Breach `json:"breaches"`
}

// Options of a replay.
type Options struct {
	KeepPods func(pod string) bool // which pods' series to keep in Result.Pods (nil: none)
	Progress func(done, total int)
}

// Scored returns the series a replay scores: those with at least
// MinSamples samples.
func Scored(series []trace.UsageSeries) []trace.UsageSeries {
	var out []trace.UsageSeries
	for _, s := range series {
		if len(s.Samples) >= MinSamples {
			out = append(out, s)
		}
	}
	return out
}

// Replay scores one policy over the series.
func Replay(ctx context.Context, p Policy, series []trace.UsageSeries, o Options) (*Result, error) {
	res := &Result{Row: Row{Policy: p.Name()}}
	scored := Scored(series)
	var slack, limits float64
	for k, s := range scored {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pr, sl, li, err := replayPod(p, s, o.KeepPods != nil && o.KeepPods(s.Pod))
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", s.Pod, err)
		}
		slack, limits = slack+sl, limits+li
		res.Row.Pods++
		res.Row.BreachSamples += pr.Breaches
		if pr.Breaches > 0 {
			res.Row.PodsBreaching++
			res.Breaching = append(res.Breaching, PodBreaches{Pod: s.Pod, Breaches: pr.Explained})
		}
		if o.KeepPods != nil && o.KeepPods(s.Pod) {
			res.Pods = append(res.Pods, pr)
		}
		if o.Progress != nil {
			o.Progress(k+1, len(scored))
		}
	}
	if limits > 0 {
		res.Row.Slack = slack / limits
	}
	return res, nil
}

// replayPod replays one pod: it returns the pod's result and the sums of
// slack and limit over its scored samples.
func replayPod(p Policy, s trace.UsageSeries, keep bool) (PodResult, float64, float64, error) {
	sizer, err := p.NewSizer()
	if err != nil {
		return PodResult{}, 0, 0, err
	}
	pr := PodResult{Policy: p.Name(), Pod: s.Pod, Warmup: len(s.Samples) / 4}
	var slack, limits float64
	for i, smp := range s.Samples {
		limit, ok := sizer.Limit(smp.Time)
		obs := vertical.Sample{Time: smp.Time, Usage: smp.Value}
		if i >= pr.Warmup {
			if !ok {
				return pr, 0, 0, fmt.Errorf("%s gave no limit after %d samples of warm-up", p.Name(), pr.Warmup)
			}
			slack += limit - smp.Value
			limits += limit
			if smp.Value > limit {
				pr.Breaches++
				obs.OOMKilled, obs.Limit = true, limit
				b := Breach{Time: smp.Time, Usage: smp.Value, Limit: limit}
				if e, ok := sizer.(Explainer); ok {
					b.Reason = e.Reason()
				}
				pr.Explained = append(pr.Explained, b)
			}
		}
		if keep {
			if !ok || i < pr.Warmup {
				limit = math.NaN()
			}
			pr.Times = append(pr.Times, smp.Time)
			pr.Usage = append(pr.Usage, smp.Value)
			pr.Limit = append(pr.Limit, limit)
		}
		if err := sizer.Observe(obs); err != nil {
			return pr, 0, 0, err
		}
	}
	if limits > 0 {
		pr.Slack = slack / limits
	}
	return pr, slack, limits, nil
}
