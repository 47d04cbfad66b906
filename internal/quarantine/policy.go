package quarantine

import (
	"fmt"
	"time"
)

// Policy is when the leader quarantines a node on its own. The zero value
// of a field takes its default (WithDefaults).
type Policy struct {
	// Off turns automatic quarantine off.
	Off bool `json:"off,omitempty"`
	// Window is how far back allocation outcomes are weighed (default 30m).
	Window time.Duration `json:"window,omitempty"`
	// MinFailures is the fewest failures in Window that can quarantine a
	// node (default 5): one failure, or a few, never does.
	MinFailures int `json:"minFailures,omitempty"`
	// MinWorkloads is the fewest distinct workloads those failures must
	// come from (default 2): one crash-looping workload is its own fault.
	MinWorkloads int `json:"minWorkloads,omitempty"`
	// MinRatio is how many times the rest of the cell's failure rate the
	// node's must be at least (default 3): significance alone would flag a
	// small excess on a busy node.
	MinRatio float64 `json:"minRatio,omitempty"`
	// Alpha is the chance (default 0.001), at each check, of quarantining
	// any node of a cell whose nodes all fail at one rate: each node's
	// binomial tail must be at most Alpha over the number of nodes tested
	// (Bonferroni).
	Alpha float64 `json:"alpha,omitempty"`
	// FlapWindow and MaxDowns: a node marked down MaxDowns times within
	// FlapWindow flaps (defaults 1h and 3).
	FlapWindow time.Duration `json:"flapWindow,omitempty"`
	MaxDowns   int           `json:"maxDowns,omitempty"`
	// MaxFraction caps the nodes quarantined automatically at once, those
	// already quarantined automatically included, at this fraction of the
	// cell's nodes, rounded down but at least one (default 0.1). When more
	// than this fraction flaps at once, no node is quarantined for
	// flapping: the cell (its network, its leader) is at fault.
	MaxFraction float64 `json:"maxFraction,omitempty"`
	// MinNodes: a cell of fewer nodes quarantines nothing automatically
	// (default 3): a node has too few peers to be judged against.
	MinNodes int `json:"minNodes,omitempty"`
}

// Defaults, documented in docs/nodes.md.
const (
	DefaultWindow       = 30 * time.Minute
	DefaultMinFailures  = 5
	DefaultMinWorkloads = 2
	DefaultMinRatio     = 3.0
	DefaultAlpha        = 0.001
	DefaultFlapWindow   = time.Hour
	DefaultMaxDowns     = 3
	DefaultMaxFraction  = 0.1
	DefaultMinNodes     = 3
)

// WithDefaults fills the zero fields with their defaults.
func (p Policy) WithDefaults() Policy {
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	setF := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	setD(&p.Window, DefaultWindow)
	set(&p.MinFailures, DefaultMinFailures)
	set(&p.MinWorkloads, DefaultMinWorkloads)
	setF(&p.MinRatio, DefaultMinRatio)
	setF(&p.Alpha, DefaultAlpha)
	setD(&p.FlapWindow, DefaultFlapWindow)
	set(&p.MaxDowns, DefaultMaxDowns)
	setF(&p.MaxFraction, DefaultMaxFraction)
	set(&p.MinNodes, DefaultMinNodes)
	return p
}

// Validate names the first field out of range, after defaults.
func (p Policy) Validate() error {
	p = p.WithDefaults()
	switch {
	case p.Window < 0:
		return fmt.Errorf("window: must be positive, got %s", p.Window)
	case p.MinFailures < 1:
		return fmt.Errorf("minFailures: must be at least 1, got %d", p.MinFailures)
	case p.MinWorkloads < 1:
		return fmt.Errorf("minWorkloads: must be at least 1, got %d", p.MinWorkloads)
	case p.MinRatio < 1:
		return fmt.Errorf("minRatio: must be at least 1, got %g", p.MinRatio)
	case p.Alpha <= 0 || p.Alpha >= 1:
		return fmt.Errorf("alpha: must be in (0, 1), got %g", p.Alpha)
	case p.FlapWindow < 0:
		return fmt.Errorf("flapWindow: must be positive, got %s", p.FlapWindow)
	case p.MaxDowns < 2:
		return fmt.Errorf("maxDowns: must be at least 2 (one down is not a flap), got %d", p.MaxDowns)
	case p.MaxFraction <= 0 || p.MaxFraction > 0.5:
		return fmt.Errorf("maxFraction: must be in (0, 0.5], got %g", p.MaxFraction)
	case p.MinNodes < 2:
		return fmt.Errorf("minNodes: must be at least 2, got %d", p.MinNodes)
	}
	return nil
}
