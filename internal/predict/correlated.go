package predict

import (
	"errors"
	"fmt"
	"slices"
	"sort"
)

// Correlated failure: a failure raises the risk that its node, and other
// nodes of its rack and room, fail soon after (Alibaba's SSD tickets,
// FAST '21: 12% of failures are followed by another on the same node
// within 7 days, 32% in the same rack). Correlated learns by how much,
// from the failures it has seen and nothing later.
//
// For each failure domain — node, rack, room — it estimates the
// probability that the domain has a failure within Window, given how
// long ago its latest failure was and how many it had in the last 90
// days: an empirical hazard table, filled by sampling every domain with a
// past failure once a day and resolving each sample when its window has
// passed (so an estimate uses only failures older than now). Nodes that
// never failed get the base rate of first failures. A node's risk
// combines its own hazard with its share of its rack's and room's.

// Level is a failure domain's level.
type Level uint8

// The levels.
const (
	LevelNode Level = iota
	LevelRack
	LevelRoom
	numLevels
)

func (l Level) String() string { return [...]string{"node", "rack", "room"}[l] }

// Place is where a node sits.
type Place struct {
	Node string `json:"node"`
	Rack string `json:"rack"`
	Room string `json:"room,omitempty"`
}

// ErrUnknownNode: a failure or a question about a node the topology does
// not hold.
var ErrUnknownNode = errors.New("node not in the topology")

// CorrelatedConfig tunes Correlated. Times are seconds.
type CorrelatedConfig struct {
	// Window is the horizon a risk speaks of.
	Window int64
	// Sample is how often every domain with a past failure is sampled.
	Sample int64
	// Prior is the weight (in samples) of the level's overall rate in
	// every cell of the table, so that a sparse cell stays near it.
	Prior float64
}

// DefaultCorrelated: a week's risk, sampled daily.
var DefaultCorrelated = CorrelatedConfig{Window: 7 * day, Sample: day, Prior: 20}

const day = 86400

// sinceEdges are the upper edges of the time-since-last-failure bins.
var sinceEdges = []int64{3600, 6 * 3600, day, 3 * day, 7 * day, 14 * day, 30 * day, 90 * day}

// countEdges bin the failures of the last 90 days: 1, 2, 3 or more.
const countBins = 3
const recent = 90 * day

var numSinceBins = len(sinceEdges) + 1

func cellOf(since int64, count int) int {
	b := sort.Search(len(sinceEdges), func(i int) bool { return since < sinceEdges[i] })
	c := min(max(count, 1), countBins) - 1
	return b*countBins + c
}

// domain is one node, rack or room: its failures in time order and how
// many nodes it holds.
type domain struct {
	failures []int64
	nodes    int
	// h is the domain's share of hazard at hAt (Risks' cache).
	h   float64
	hAt int64
	hOK bool
}

func (d *domain) last() (int64, bool) {
	if len(d.failures) == 0 {
		return 0, false
	}
	return d.failures[len(d.failures)-1], true
}

// recentCount is the failures in (t-recent, t].
func (d *domain) recentCount(t int64) int {
	i := sort.Search(len(d.failures), func(i int) bool { return d.failures[i] > t-recent })
	j := sort.Search(len(d.failures), func(i int) bool { return d.failures[i] > t })
	return j - i
}

// failedIn reports a failure in (from, to].
func (d *domain) failedIn(from, to int64) bool {
	i := sort.Search(len(d.failures), func(i int) bool { return d.failures[i] > from })
	return i < len(d.failures) && d.failures[i] <= to
}

type sample struct {
	level Level
	dom   *domain
	cell  int
	at    int64
}

type tally struct{ n, followed float64 }

// Correlated is the correlated-failure model of one fleet. Failures must
// be observed in time order. It is not safe for concurrent use.
type Correlated struct {
	cfg    CorrelatedConfig
	places map[string]Place
	doms   [numLevels]map[string]*domain
	// fleet[i] are the domains of the i-th node of the fleet (nil where
	// the place names none), for Risks.
	fleet   [][numLevels]*domain
	table   [numLevels][]tally
	overall [numLevels]tally
	// base: nodes that never failed, sampled like the domains.
	base        tally
	failedNodes int
	firsts      []int64 // each failed node's first failure, in order
	baseSamples []baseSample
	pending     []sample
	now         int64
	nextSample  int64
	started     bool
	epoch       int64 // of the latest Risks call
}

type baseSample struct {
	at      int64
	healthy float64 // nodes without a failure at the sample
}

// NewCorrelated returns the model of a fleet of nodes at the given places.
func NewCorrelated(cfg CorrelatedConfig, fleet []Place) (*Correlated, error) {
	if cfg.Window <= 0 || cfg.Sample <= 0 || cfg.Prior < 0 {
		return nil, fmt.Errorf("correlated: window and sample must be positive, prior not negative")
	}
	c := &Correlated{cfg: cfg, places: make(map[string]Place, len(fleet))}
	for l := range numLevels {
		c.doms[l] = map[string]*domain{}
		c.table[l] = make([]tally, numSinceBins*countBins)
	}
	for _, p := range fleet {
		if p.Node == "" {
			return nil, fmt.Errorf("correlated: a node without a name")
		}
		if _, dup := c.places[p.Node]; dup {
			return nil, fmt.Errorf("correlated: node %s listed twice", p.Node)
		}
		c.places[p.Node] = p
		var doms [numLevels]*domain
		for l, id := range c.ids(p) {
			if id == "" {
				continue
			}
			d := c.doms[l][id]
			if d == nil {
				d = &domain{}
				c.doms[l][id] = d
			}
			d.nodes++
			doms[l] = d
		}
		c.fleet = append(c.fleet, doms)
	}
	return c, nil
}

func (c *Correlated) ids(p Place) [numLevels]string { return [numLevels]string{p.Node, p.Rack, p.Room} }

// Advance moves the model's clock to now: samples due before it are
// taken and those whose window closed are resolved. A time before the
// model's clock is ignored.
func (c *Correlated) Advance(now int64) {
	if !c.started {
		c.started, c.nextSample = true, now
	}
	for c.nextSample <= now {
		c.resolve(c.nextSample)
		c.take(c.nextSample)
		c.nextSample += c.cfg.Sample
	}
	c.resolve(now)
	c.now = max(c.now, now)
}

// take samples every domain with a past failure, and the healthy nodes.
func (c *Correlated) take(at int64) {
	for l := range numLevels {
		for _, d := range c.doms[l] {
			if last, ok := d.last(); ok && last < at {
				c.pending = append(c.pending, sample{level: l, dom: d, cell: cellOf(at-last, d.recentCount(at)), at: at})
			}
		}
	}
	c.baseSamples = append(c.baseSamples, baseSample{at: at, healthy: float64(len(c.places) - c.failedNodes)})
}

// resolve counts the samples whose window ended by now. Domains are
// visited in map order, but a tally is a sum of counts: the result does
// not depend on it.
func (c *Correlated) resolve(now int64) {
	keep := c.pending[:0]
	for _, s := range c.pending {
		if s.at+c.cfg.Window > now {
			keep = append(keep, s)
			continue
		}
		followed := 0.0
		if s.dom.failedIn(s.at, s.at+c.cfg.Window) {
			followed = 1
		}
		c.table[s.level][s.cell].n++
		c.table[s.level][s.cell].followed += followed
		c.overall[s.level].n++
		c.overall[s.level].followed += followed
	}
	c.pending = keep
	k := 0
	for ; k < len(c.baseSamples); k++ {
		b := c.baseSamples[k]
		if b.at+c.cfg.Window > now {
			break
		}
		c.base.n += b.healthy
		c.base.followed += float64(c.firstsIn(b.at, b.at+c.cfg.Window))
	}
	c.baseSamples = c.baseSamples[k:]
}

// firstsIn counts nodes whose first failure lies in (from, to].
func (c *Correlated) firstsIn(from, to int64) int {
	i := sort.Search(len(c.firsts), func(i int) bool { return c.firsts[i] > from })
	j := sort.Search(len(c.firsts), func(i int) bool { return c.firsts[i] > to })
	return j - i
}

// Observe records a failure of the node at p.Node at time t. Failures must
// come in time order; the clock advances to t.
func (c *Correlated) Observe(node string, t int64) error {
	p, ok := c.places[node]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownNode, node)
	}
	if c.started && t < c.now {
		return fmt.Errorf("%w: failure of %s at %d after %d", ErrOutOfOrder, node, t, c.now)
	}
	c.Advance(t)
	for li, id := range c.ids(p) {
		if id == "" {
			continue
		}
		d := c.doms[li][id]
		if Level(li) == LevelNode && len(d.failures) == 0 {
			c.failedNodes++
			c.firsts = append(c.firsts, t)
		}
		d.failures = append(d.failures, t)
	}
	return nil
}

// rate is the smoothed hazard of a level's table cell.
func (c *Correlated) rate(l Level, cell int) float64 {
	o := c.overall[l]
	prior := 0.0
	if o.n > 0 {
		prior = o.followed / o.n
	}
	t := c.table[l][cell]
	if t.n+c.cfg.Prior == 0 {
		return 0
	}
	return (t.followed + c.cfg.Prior*prior) / (t.n + c.cfg.Prior)
}

// BaseRate is the learned probability that a node that never failed
// fails within Window.
func (c *Correlated) BaseRate() float64 {
	if c.base.n == 0 {
		return 0
	}
	return c.base.followed / c.base.n
}

// Risk is the probability that node fails within Window after now, as
// far as the failures observed so far tell: its own hazard (the base
// rate when it never failed), and its share of its rack's and room's.
func (c *Correlated) Risk(node string, now int64) (float64, error) {
	p, ok := c.places[node]
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrUnknownNode, node)
	}
	var doms [numLevels]*domain
	for l, id := range c.ids(p) {
		if id != "" {
			doms[l] = c.doms[l][id]
		}
	}
	return c.risk(doms, now, c.BaseRate(), false), nil
}

// Risks is Risk of every node of the fleet, in the order NewCorrelated
// was given them, appended to dst. A domain's hazard is computed once
// for all its nodes.
func (c *Correlated) Risks(now int64, dst []float64) []float64 {
	c.epoch++
	base := c.BaseRate()
	for _, doms := range c.fleet {
		dst = append(dst, c.risk(doms, now, base, true))
	}
	return dst
}

func (c *Correlated) risk(doms [numLevels]*domain, now int64, base float64, cache bool) float64 {
	survive := 1.0
	for li, d := range doms {
		if d == nil {
			continue
		}
		l := Level(li)
		last, failed := d.last()
		if !failed || last > now {
			if l == LevelNode {
				survive *= 1 - base
			}
			continue
		}
		var h float64
		if cache && d.hOK && d.hAt == c.epoch {
			h = d.h
		} else {
			h = c.rate(l, cellOf(now-last, d.recentCount(now)))
			if l != LevelNode {
				h /= float64(d.nodes)
			}
			d.h, d.hAt, d.hOK = h, c.epoch, cache
		}
		survive *= 1 - h
	}
	return 1 - survive
}

// Hazards is the learned table of one level, for reports: per bin of time
// since the latest failure (upper edge in seconds, 0 for the last, open
// bin) and count of failures in the last 90 days, the samples and the
// share followed by a failure within Window.
func (c *Correlated) Hazards(l Level) []Hazard {
	var out []Hazard
	for b := range numSinceBins {
		edge := int64(0)
		if b < len(sinceEdges) {
			edge = sinceEdges[b]
		}
		for k := range countBins {
			t := c.table[l][b*countBins+k]
			if t.n == 0 {
				continue
			}
			out = append(out, Hazard{SinceBelow: edge, Recent: k + 1, Samples: int(t.n), Rate: t.followed / t.n})
		}
	}
	return slices.Clip(out)
}

// Hazard is one cell of a level's table.
type Hazard struct {
	SinceBelow int64   `json:"sinceBelowSeconds"`
	Recent     int     `json:"recentFailures"` // 3 means 3 or more
	Samples    int     `json:"samples"`
	Rate       float64 `json:"rate"`
}
