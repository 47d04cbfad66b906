package horizontal

import (
	"fmt"
	"math"
)

// A moment is what the autoscaler knows of the group at a decision that
// tells how far its work may rise before a replica started now is ready:
// the work in flight, the arrivals of the last minute (a burst under way)
// and of the last quarter of an hour (the rate the group runs at), and the
// seasonal forecast's level ahead (how busy this time of day and week
// usually is).
type moment struct {
	inFlight    int
	lastMinute  int // arrivals
	lastQuarter int // arrivals
	level       int // replicas the seasonal forecast expects ahead, 0 when idle
}

// The buckets a moment is counted in. Each bucket holds enough moments of
// a fortnight of a busy service to be estimated; the edges are the
// bucket's upper bounds, the last bucket open.
var (
	inFlightBuckets    = []int{0, 1, 2, 3, 4, 5} // 0 … 5, 6+
	lastMinuteBuckets  = []int{0, 1, 2, 4}       // 0, 1, 2, 3–4, 5+
	lastQuarterBuckets = []int{0, 2, 6, 15, 30}  // 0, 1–2, 3–6, 7–15, 16–30, 31+
	levelBuckets       = []int{0, 1, 2}          // idle, 1, 2, 3+ replicas
)

const (
	// maxRise is the largest rise counted: a rise above it counts as
	// maxRise, and no more than maxRise spares are ever asked for.
	maxRise = 8
	// priorWeight is how many moments of the coarser estimate a cell's
	// own moments are weighed against (shrinkage towards the coarser
	// cell while a cell has seen few moments).
	priorWeight = 5
)

func bucketOf(x int, edges []int) int {
	for k, e := range edges {
		if x <= e {
			return k
		}
	}
	return len(edges)
}

// The three cells a moment is counted in, finest first: the whole
// moment; the moment without its last minute; the work in flight alone.
func (m moment) cells() [3]int32 {
	nIn, nMin, nQ, nLvl := len(inFlightBuckets)+1, len(lastMinuteBuckets)+1, len(lastQuarterBuckets)+1, len(levelBuckets)+1
	in, mi, q, lv := bucketOf(m.inFlight, inFlightBuckets), bucketOf(m.lastMinute, lastMinuteBuckets),
		bucketOf(m.lastQuarter, lastQuarterBuckets), bucketOf(m.level, levelBuckets)
	fine := ((in*nMin+mi)*nQ+q)*nLvl + lv
	mid := nIn*nMin*nQ*nLvl + (in*nQ+q)*nLvl + lv
	coarse := nIn*nMin*nQ*nLvl + nIn*nQ*nLvl + in
	return [3]int32{int32(fine), int32(mid), int32(coarse)}
}

func riseCells() int {
	nIn, nMin, nQ, nLvl := len(inFlightBuckets)+1, len(lastMinuteBuckets)+1, len(lastQuarterBuckets)+1, len(levelBuckets)+1
	return nIn*nMin*nQ*nLvl + nIn*nQ*nLvl + nIn
}

// riseCell is the decayed count of the moments of one cell and of those
// whose rise exceeded each d.
type riseCell struct {
	at    int64 // when the weights were last decayed
	total float32
	over  [maxRise]float32 // over[d]: weight of the moments whose rise exceeded d
}

func (c *riseCell) decay(now int64, halfLife float64) {
	if now > c.at && c.total > 0 {
		f := float32(math.Exp2(-float64(now-c.at) / halfLife))
		c.total *= f
		for d := range c.over {
			c.over[d] *= f
		}
	}
	c.at = max(c.at, now)
}

// riseModel learns from the group's own past how far its work in flight
// rises within a start-up time of a moment like the present one, and sizes
// the spare replicas from it: the fewest spares that the rise exceeded in
// at most Risk of such moments. It is a base stock (an inventory policy
// with a lead time) whose demand distribution is learnt per state:
// replicas are the stock, the start-up time the lead time.
//
// Each decision's moment waits until its lead time has passed; the highest
// work in flight seen meanwhile, less the work in flight at the decision,
// is its rise. The weights decay with a half-life, so the model follows a
// workload that changes. A cell that has seen few moments leans on the
// coarser one, and the coarsest on the reactive rule's belief: a rise of
// one, one spare.
type riseModel struct {
	halfLife float64 // seconds
	cells    []riseCell
	pending  []pendingRise
}

type pendingRise struct {
	until int64 // the moment's lead time has passed at this time
	base  int   // work in flight at the moment
	peak  int   // highest work in flight since
	cells [3]int32
}

func newRiseModel(halfLife float64) *riseModel {
	return &riseModel{halfLife: halfLife, cells: make([]riseCell, riseCells())}
}

// observe folds the highest work in flight since the previous decision
// into the moments waiting for their rise, and counts those whose lead
// time has passed.
func (r *riseModel) observe(now int64, peak int) {
	keep := r.pending[:0]
	for _, p := range r.pending {
		p.peak = max(p.peak, peak)
		if now < p.until {
			keep = append(keep, p)
			continue
		}
		rise := min(max(p.peak-p.base, 0), maxRise)
		for _, k := range p.cells {
			c := &r.cells[k]
			c.decay(now, r.halfLife)
			c.total++
			for d := 0; d < rise; d++ {
				c.over[d]++
			}
		}
	}
	r.pending = keep
}

// expect makes the moment wait for its rise, until the lead time has
// passed.
func (r *riseModel) expect(m moment, until int64) {
	r.pending = append(r.pending, pendingRise{until: until, base: m.inFlight, peak: m.inFlight, cells: m.cells()})
}

// exceeds is the estimated share of moments like m whose rise exceeded d.
func (r *riseModel) exceeds(m moment, d int, now int64) float64 {
	if d >= maxRise {
		return 0
	}
	p := 0.0 // the reactive rule's belief: a rise of exactly one
	if d == 0 {
		p = 1
	}
	cells := m.cells()
	for k := len(cells) - 1; k >= 0; k-- {
		c := &r.cells[cells[k]]
		c.decay(now, r.halfLife)
		p = (float64(c.over[d]) + priorWeight*p) / (float64(c.total) + priorWeight)
	}
	return p
}

// spares is what the model asks for at a moment: the fewest spare replicas
// whose rise was exceeded in at most risk of such moments.
type spares struct {
	replicas int
	exceeded float64 // share of such moments whose rise exceeded replicas
	below    float64 // share that exceeded replicas − 1 (above risk), 1 when replicas is 0
	seen     float64 // decayed count of moments in the finest cell
	// prior: no moment with this much work in flight was seen yet; the
	// spares are the reactive rule's belief, a rise of one.
	prior bool
}

func (r *riseModel) spares(m moment, risk float64, now int64) spares {
	s := spares{below: 1}
	for s.exceeded = r.exceeds(m, 0, now); s.exceeded > risk && s.replicas < maxRise; {
		s.replicas++
		s.below, s.exceeded = s.exceeded, r.exceeds(m, s.replicas, now)
	}
	cells := m.cells()
	s.seen = float64(r.cells[cells[0]].total)
	s.prior = r.cells[cells[2]].total < 1
	return s
}

func (m moment) String() string {
	return fmt.Sprintf("%d in flight, %d arrivals in the last minute and %d in 15 min, forecast level %d", m.inFlight, m.lastMinute, m.lastQuarter, m.level)
}
