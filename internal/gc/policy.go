package gc

import (
	"fmt"
	"time"
)

// Policy is how long terminal objects are kept. A zero field takes its
// default (WithDefaults).
type Policy struct {
	// Off turns garbage collection off.
	Off bool `json:"off,omitempty"`
	// Allocations: a terminal allocation is kept this long after it ended
	// (default 1h).
	Allocations time.Duration `json:"allocations,omitempty"`
	// Evaluations: a finished evaluation is kept this long after it was
	// created, or after the time it waited for (default 1h).
	Evaluations time.Duration `json:"evaluations,omitempty"`
	// Deployments: a finished deployment is kept this long after its last
	// change (default 24h).
	Deployments time.Duration `json:"deployments,omitempty"`
}

// Defaults, documented in docs/gc.md.
const (
	DefaultAllocations = time.Hour
	DefaultEvaluations = time.Hour
	DefaultDeployments = 24 * time.Hour
	// KeptFailures is how many failed allocations of a replica's chain
	// (PreviousAlloc) are kept beyond their retention, so that the
	// reschedule policy's backoff counts as many failures as it needs.
	KeptFailures = 16
)

// WithDefaults fills the zero fields.
func (p Policy) WithDefaults() Policy {
	for _, f := range []struct {
		v *time.Duration
		d time.Duration
	}{{&p.Allocations, DefaultAllocations}, {&p.Evaluations, DefaultEvaluations}, {&p.Deployments, DefaultDeployments}} {
		if *f.v == 0 {
			*f.v = f.d
		}
	}
	return p
}

// Validate names the first retention out of range.
func (p Policy) Validate() error {
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"allocations", p.Allocations}, {"evaluations", p.Evaluations}, {"deployments", p.Deployments}} {
		if f.v < 0 {
			return fmt.Errorf("%s: retention must not be negative, got %s", f.name, f.v)
		}
	}
	return nil
}
