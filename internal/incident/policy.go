package incident

import "time"

// Key is one attribute the engine may name as a cause.
type Key struct {
	// Name is the attribute's key in signals and the census.
	Name string
	// Noun is how a cause of this key reads: "rack" for "rack r7".
	Noun string
	// Infra: the key is a part of the machine room (node, rack, power
	// zone, switch, …), not of the software. An infrastructure cause
	// explains away the failures of the workloads it hit (the rollout
	// guard does not blame a version for them), and only infrastructure
	// incidents merge into wider domains.
	Infra bool
}

// The keys of DefaultKeys.
const (
	KeyNode       = "node"
	KeyRack       = "rack"
	KeySwitch     = "switch"
	KeyPowerZone  = "powerZone"
	KeyRow        = "row"
	KeyZone       = "zone"
	KeyWorkload   = "workload"
	KeyVersion    = "version"
	KeyDeployment = "deployment"
	KeyDriver     = "driver"
)

// DefaultKeys are the causes a cell is searched for, narrowest first
// within each kind; the order breaks exact ties.
func DefaultKeys() []Key {
	return []Key{
		{Name: KeyNode, Noun: "node", Infra: true},
		{Name: KeyRack, Noun: "rack", Infra: true},
		{Name: KeySwitch, Noun: "switch", Infra: true},
		{Name: KeyPowerZone, Noun: "power zone", Infra: true},
		{Name: KeyRow, Noun: "row", Infra: true},
		{Name: KeyZone, Noun: "zone", Infra: true},
		{Name: KeyVersion, Noun: "version"},
		{Name: KeyDeployment, Noun: "deployment"},
		{Name: KeyWorkload, Noun: "workload"},
		{Name: KeyDriver, Noun: "driver"},
	}
}

// Policy tunes the engine. Zero fields take the defaults of WithDefaults.
type Policy struct {
	// Keys are the attributes searched for causes (DefaultKeys).
	Keys []Key
	// Window is how long an unexplained signal waits for company before
	// it is dropped (10 min).
	Window time.Duration
	// Quiet closes an incident no signal joined for this long (10 min).
	Quiet time.Duration
	// MinSupport is how many troubled subjects must share a cause (3).
	MinSupport int
	// MinNodes is how many nodes a cause other than a node must span (2):
	// trouble on one node is the node's.
	MinNodes int
	// MinLift is how many times its share of the cell a cause must be
	// over-represented among the troubled (2: with MaxShare at one half,
	// every value a cause may be can reach it).
	MinLift float64
	// MaxShare: a value holding more than this share of the cell is the
	// cell, not a cause (0.5).
	MaxShare float64
	// Alpha is the p-value a cause must reach after the Bonferroni
	// correction over the values tested (1e-3).
	Alpha float64
	// MaxPending bounds the unexplained signals kept (20,000).
	MaxPending int
	// MaxOpen bounds the open incidents (256); past it the stalest closes.
	MaxOpen int
	// MaxClosed bounds the closed incidents kept (512).
	MaxClosed int
	// MaxTracked bounds the distinct subjects and nodes an incident
	// remembers (1,000); past it, counts are lower bounds.
	MaxTracked int
	// MaxRefs bounds the event references an incident keeps (64), and
	// MaxLinks the events the engine can map back to their incident
	// (10,000, the state's event history).
	MaxRefs, MaxLinks int
}

// WithDefaults returns p with its zero fields defaulted.
func (p Policy) WithDefaults() Policy {
	if len(p.Keys) == 0 {
		p.Keys = DefaultKeys()
	}
	orDefault(&p.Window, 10*time.Minute)
	orDefault(&p.Quiet, 10*time.Minute)
	orDefault(&p.MinSupport, 3)
	orDefault(&p.MinNodes, 2)
	orDefault(&p.MinLift, 2)
	orDefault(&p.MaxShare, 0.5)
	orDefault(&p.Alpha, 1e-3)
	orDefault(&p.MaxPending, 20000)
	orDefault(&p.MaxOpen, 256)
	orDefault(&p.MaxClosed, 512)
	orDefault(&p.MaxTracked, 1000)
	orDefault(&p.MaxRefs, 64)
	orDefault(&p.MaxLinks, 10000)
	return p
}

func (p Policy) key(name string) (Key, bool) {
	for _, k := range p.Keys {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// orDefault sets *v to d when it is zero or less (unset).
func orDefault[T int | float64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}
