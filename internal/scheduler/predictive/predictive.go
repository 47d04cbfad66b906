package predictive

import (
	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/scheduler/fgd"
)

// Name is the policy type this package implements.
const Name = api.PolicyPredictive

// Config is what the policy reads.
type Config struct {
	// GPU is the fgd configuration of the cell; nil (or a target without
	// GPU shapes) makes binpack the base.
	GPU *fgd.Config
	// Forecasts are the cell's predictions; nil: none.
	Forecasts scheduler.ForecastReader
	// RiskRef is the failure probability at which a node costs a group
	// the whole risk weight (DefaultRiskRef when 0).
	RiskRef float64
}

// DefaultRiskRef: a node with a one-in-twenty chance of failing within the
// horizon is as bad as the risk term gets.
const DefaultRiskRef = 0.05

// Weights of the terms against the base, whose scores lie in [0, 1] (one
// whole FGD step is 0.01).
const (
	// RiskWeightCritical is the risk weight of production and system
	// groups and of atMostOnce groups.
	RiskWeightCritical = 0.5
	// RiskWeight is every other group's.
	RiskWeight = 0.1
	// HeadroomWeight is the predicted-headroom term's, best-effort only:
	// as much as the whole base, so for best-effort work the predicted
	// peak, not the requests, leads.
	HeadroomWeight = 1
)

// criticalPriority is the lowest priority of the production class.
const criticalPriority = 1000

// bestEffortBelow is the first priority above the best-effort class.
const bestEffortBelow = 500

// New returns the policy for cfg.
func New(cfg *Config) scheduler.Policy {
	base := func(req *scheduler.Request) []scheduler.WeightedScorer {
		return []scheduler.WeightedScorer{{Name: api.PolicyBinpack, Scorer: scheduler.BinPack{}, Weight: 1}}
	}
	if cfg.GPU != nil && hasGPUWork(cfg.GPU) {
		base = fgd.New(cfg.GPU)
	}
	ref := cfg.RiskRef
	if ref <= 0 {
		ref = DefaultRiskRef
	}
	return func(req *scheduler.Request) []scheduler.WeightedScorer {
		out := base(req)
		if cfg.Forecasts == nil {
			return out
		}
		w := RiskWeight
		if critical(req) {
			w = RiskWeightCritical
		}
		out = append(out, scheduler.WeightedScorer{Name: "failure-risk", Scorer: riskScorer{f: cfg.Forecasts, ref: ref}, Weight: w})
		if bestEffort(req) {
			out = append(out, scheduler.WeightedScorer{Name: "predicted-headroom", Scorer: headroomScorer{f: cfg.Forecasts}, Weight: HeadroomWeight})
		}
		return out
	}
}

func hasGPUWork(c *fgd.Config) bool {
	for _, t := range c.Target.Types {
		if t.NumGPU > 0 {
			return true
		}
	}
	return false
}

func critical(req *scheduler.Request) bool {
	if req.Group != nil && req.Group.AtMostOnce {
		return true
	}
	return req.Workload != nil && req.Workload.Priority >= criticalPriority
}

func bestEffort(req *scheduler.Request) bool {
	return req.Workload != nil && req.Workload.Priority < bestEffortBelow
}

// riskScorer is minus the node's failure risk as a share of ref, in
// [-1, 0]; 0 for a node without a prediction.
type riskScorer struct {
	f   scheduler.ForecastReader
	ref float64
}

func (s riskScorer) Score(_ *scheduler.Request, n scheduler.NodeView) float64 {
	fc, ok := s.f.NodeForecast(n.Node.ID)
	if !ok || !fc.HasFailureRisk {
		return 0
	}
	return -min(max(fc.FailureRisk, 0)/s.ref, 1)
}

// headroomScorer is the share of the node's CPU left by its predicted
// peak plus the replica's request, in [-1, 1]; 0 without a prediction.
type headroomScorer struct{ f scheduler.ForecastReader }

func (s headroomScorer) Score(req *scheduler.Request, n scheduler.NodeView) float64 {
	fc, ok := s.f.NodeForecast(n.Node.ID)
	capacity := n.Node.Capacity.CPUMilli
	if !ok || !fc.HasPeak || capacity <= 0 {
		return 0
	}
	left := float64(capacity-max(fc.PeakCPUMilli, 0)-req.Resources.CPUMilli) / float64(capacity)
	return min(max(left, -1), 1)
}

var (
	_ scheduler.Scorer = riskScorer{}
	_ scheduler.Scorer = headroomScorer{}
)
