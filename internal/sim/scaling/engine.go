package scaling

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/strata-dev/strata/internal/autopilot/horizontal"
	"github.com/strata-dev/strata/internal/sim/eventq"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// Scaler is an autoscaler under test: asked every sync period, it returns
// the replica count the group should have.
type Scaler interface {
	Name() string
	Decide(t horizontal.Telemetry) horizontal.Decision
}

// Config of one replay.
type Config struct {
	Requests []trace.Request // in arrival order
	Startup  []float64       // start-up delays to draw from, seconds
	Seed     int64           // of the start-up draws
	Sync     float64         // seconds between decisions (default 15)
	Min, Max int             // replica bounds; every scaler must keep within them
	// ScoreFrom: only requests arriving at or after it, and minutes and
	// replica time from it on, are scored (0: all). The scaler still sees
	// and learns from everything before.
	ScoreFrom int64
	// Tail is how long the replay runs after the last arrival, seconds
	// (default 3600); nothing after it is simulated or scored.
	Tail     float64
	Progress func(done, total int)
}

// ErrOutOfBounds is returned when a scaler asks for fewer than Min or more
// than Max replicas.
var ErrOutOfBounds = errors.New("scaler decided a replica count out of bounds")

// Row is one scaler's score.
type Row struct {
	Policy                  string `json:"policy"`
	UnderProvisionedMinutes int    `json:"underProvisionedMinutes"`
	// UnderProvisionedAfterIdle counts those of them that follow
	// IdleMinutes or more minutes without an arrival: cold starts, which a
	// forecast can see coming; the rest fall inside traffic.
	UnderProvisionedAfterIdle int     `json:"underProvisionedAfterIdle"`
	ReplicaHours              float64 `json:"replicaHours"`
	WaitP50                   float64 `json:"waitP50"` // seconds
	WaitP99                   float64 `json:"waitP99"`
	WaitMax                   float64 `json:"waitMax"`
	Requests                  int     `json:"requests"`
	Waited                    int     `json:"waited"` // requests that waited at all
	ScaleOuts                 int     `json:"scaleOuts"`
	ScaleIns                  int     `json:"scaleIns"`
	Held                      int     `json:"held,omitempty"` // decisions held for want of telemetry
}

// Minute is one minute of a replay: the highest work in flight and the
// highest replica count (starting ones included) in it.
type Minute struct {
	Time     int64 `json:"time"`
	InFlight int   `json:"inFlight"`
	Replicas int   `json:"replicas"`
	Waiting  bool  `json:"waiting,omitempty"`
}

// Result of one replay.
type Result struct {
	Row     Row
	Minutes []Minute
	// Reasons counts the decisions by source (forecast, reactive, …).
	Sources map[string]int
}

type eventKind uint8

// Simultaneous events: completions free replicas and replicas become ready
// before the decision looks, and arrivals come last.
const (
	evComplete eventKind = iota
	evReady
	evTick
	evArrive
)

type event struct {
	time float64
	kind eventKind
	seq  int
	ref  int
}

// before orders events: time, then kind, then insertion.
func before(a, b *event) bool {
	if a.time != b.time {
		return a.time < b.time
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}

type replicaState uint8

const (
	starting replicaState = iota
	ready
	gone
)

type replica struct {
	state    replicaState
	started  float64
	busy     bool
	draining bool // finishes its request, then goes
}

// run is the state of one replay.
type run struct {
	cfg      Config
	scaler   Scaler
	events   *eventq.Queue[event]
	seq      int
	rng      *rand.Rand
	replicas []*replica
	queue    []int // waiting requests, FIFO
	head     int
	inFlight int
	now      float64

	// Since the previous decision.
	peak                     int
	arrivals                 int
	busySec, readySec        float64
	startups                 []float64
	lastMinute, markedMinute int64
	minutes                  map[int64]*Minute
	waits                    []float64
	res                      Result
	replicaSeconds           float64
}

// Replay runs one scaler over the requests.
func Replay(ctx context.Context, cfg Config, s Scaler) (*Result, error) {
	if len(cfg.Requests) == 0 {
		return nil, errors.New("no requests to replay")
	}
	if len(cfg.Startup) == 0 {
		return nil, errors.New("no start-up delays to draw from")
	}
	if cfg.Sync <= 0 {
		cfg.Sync = 15
	}
	if cfg.Tail <= 0 {
		cfg.Tail = 3600
	}
	if cfg.Min < 0 || cfg.Max < cfg.Min || cfg.Max == 0 {
		return nil, fmt.Errorf("replica bounds: want 0 ≤ min ≤ max and max ≥ 1, got min %d max %d", cfg.Min, cfg.Max)
	}
	r := &run{cfg: cfg, scaler: s, events: eventq.New(before), rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5ca1e)),
		minutes: map[int64]*Minute{}, res: Result{Row: Row{Policy: s.Name()}, Sources: map[string]int{}}}
	start := math.Floor(float64(cfg.Requests[0].Arrival)/cfg.Sync) * cfg.Sync
	end := float64(cfg.Requests[len(cfg.Requests)-1].Arrival) + cfg.Tail
	r.now = start
	for k := 0; k < cfg.Min; k++ {
		r.replicas = append(r.replicas, &replica{state: ready, started: start})
	}
	for k, q := range cfg.Requests {
		r.push(float64(q.Arrival), evArrive, k)
	}
	r.push(start, evTick, 0)
	ticks, total := 0, int((end-start)/cfg.Sync)+1
	for r.events.Len() > 0 {
		e := r.events.Pop()
		if e.time > end {
			break
		}
		r.advance(e.time)
		switch e.kind {
		case evArrive:
			r.arrive(e.ref)
		case evComplete:
			r.complete(e.ref)
		case evReady:
			r.becomeReady(e.ref)
		case evTick:
			if err := r.tick(); err != nil {
				return nil, err
			}
			ticks++
			if ticks%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				if cfg.Progress != nil {
					cfg.Progress(min(ticks, total), total)
				}
			}
			r.push(r.now+cfg.Sync, evTick, 0)
		}
	}
	r.advance(end)
	if cfg.Progress != nil {
		cfg.Progress(total, total)
	}
	r.finish()
	return &r.res, nil
}

func (r *run) push(t float64, k eventKind, ref int) {
	r.events.Push(event{time: t, kind: k, seq: r.seq, ref: ref})
	r.seq++
}

// advance moves the clock to t, integrating replica time and marking the
// minutes in which a request waited.
func (r *run) advance(t float64) {
	if t <= r.now {
		return
	}
	from := math.Max(r.now, float64(r.cfg.ScoreFrom))
	provisioned, readyN, busyN := 0, 0, 0
	for _, rp := range r.replicas {
		if rp.state == gone {
			continue
		}
		provisioned++
		if rp.state == ready {
			readyN++
			if rp.busy {
				busyN++
			}
		}
	}
	dt := t - r.now
	r.busySec += float64(busyN) * dt
	r.readySec += float64(readyN) * dt
	if t > from {
		r.replicaSeconds += float64(provisioned) * (t - from)
	}
	if r.waiting() > 0 {
		for m := int64(math.Floor(r.now / 60)); float64(m)*60 < t; m++ {
			if float64(m+1)*60 > from {
				r.minute(m).Waiting = true
			}
		}
	}
	for m := int64(math.Floor(r.now / 60)); float64(m)*60 < t; m++ {
		mm := r.minute(m)
		mm.Replicas = max(mm.Replicas, provisioned)
		mm.InFlight = max(mm.InFlight, r.inFlight)
	}
	r.now = t
}

func (r *run) minute(m int64) *Minute {
	mm, ok := r.minutes[m]
	if !ok {
		mm = &Minute{Time: m * 60}
		r.minutes[m] = mm
	}
	return mm
}

func (r *run) waiting() int { return len(r.queue) - r.head }

func (r *run) arrive(k int) {
	r.queue = append(r.queue, k)
	r.inFlight++
	r.arrivals++
	r.peak = max(r.peak, r.inFlight)
	r.minute(int64(math.Floor(r.now / 60))).InFlight = max(r.minute(int64(math.Floor(r.now/60))).InFlight, r.inFlight)
	r.dispatch()
}

func (r *run) complete(k int) {
	rp := r.replicas[k]
	rp.busy = false
	r.inFlight--
	if rp.draining {
		rp.state = gone
		return
	}
	r.dispatch()
}

func (r *run) becomeReady(k int) {
	rp := r.replicas[k]
	if rp.state != starting {
		return // scaled in before it was ready
	}
	rp.state = ready
	r.startups = append(r.startups, r.now-rp.started)
	r.dispatch()
}

// dispatch gives waiting requests to free replicas, oldest request first.
func (r *run) dispatch() {
	for r.waiting() > 0 {
		k := r.free()
		if k < 0 {
			return
		}
		q := r.cfg.Requests[r.queue[r.head]]
		r.head++
		rp := r.replicas[k]
		rp.busy = true
		wait := r.now - float64(q.Arrival)
		if q.Arrival >= r.cfg.ScoreFrom {
			r.waits = append(r.waits, wait)
		}
		r.push(r.now+q.Exec, evComplete, k)
	}
	if r.head > 1024 && r.head*2 > len(r.queue) {
		r.queue = append(r.queue[:0], r.queue[r.head:]...)
		r.head = 0
	}
}

func (r *run) free() int {
	for k, rp := range r.replicas {
		if rp.state == ready && !rp.busy && !rp.draining {
			return k
		}
	}
	return -1
}

// tick asks the scaler and applies its answer.
func (r *run) tick() error {
	readyN, startingN := 0, 0
	for _, rp := range r.replicas {
		switch {
		case rp.state == ready && !rp.draining:
			readyN++
		case rp.state == starting:
			startingN++
		}
	}
	t := horizontal.Telemetry{Now: int64(r.now), Ready: readyN, Starting: startingN, InFlight: r.inFlight,
		Waiting: r.waiting(), PeakInFlight: max(r.peak, r.inFlight), Arrivals: r.arrivals,
		BusySeconds: r.busySec, ReadySeconds: r.readySec, StartupSeconds: r.startups}
	d := r.scaler.Decide(t)
	r.peak, r.arrivals, r.busySec, r.readySec, r.startups = r.inFlight, 0, 0, 0, nil
	if d.Replicas < r.cfg.Min || d.Replicas > r.cfg.Max {
		return fmt.Errorf("%w: %s asked for %d replicas at %d, bounds [%d, %d]", ErrOutOfBounds, r.scaler.Name(), d.Replicas, t.Now, r.cfg.Min, r.cfg.Max)
	}
	if int64(r.now) >= r.cfg.ScoreFrom {
		r.res.Sources[d.Source]++
		if d.Held {
			r.res.Row.Held++
		}
	}
	r.scaleTo(d.Replicas)
	return nil
}

// scaleTo adds or removes replicas: a scale-out first takes back replicas
// still draining, then starts new ones; a scale-in first cancels replicas
// still starting (the newest first), then stops idle ones, then lets busy
// ones drain.
func (r *run) scaleTo(n int) {
	have := 0
	for _, rp := range r.replicas {
		if rp.state == starting || (rp.state == ready && !rp.draining) {
			have++
		}
	}
	scored := int64(r.now) >= r.cfg.ScoreFrom
	if n > have && scored {
		r.res.Row.ScaleOuts++
	}
	if n < have && scored {
		r.res.Row.ScaleIns++
	}
	for ; have < n; have++ {
		if k := r.find(func(rp *replica) bool { return rp.state == ready && rp.draining }); k >= 0 {
			r.replicas[k].draining = false
			continue
		}
		delay := r.cfg.Startup[r.rng.IntN(len(r.cfg.Startup))]
		r.replicas = append(r.replicas, &replica{state: starting, started: r.now})
		r.push(r.now+delay, evReady, len(r.replicas)-1)
	}
	for ; have > n; have-- {
		if k := r.findLast(func(rp *replica) bool { return rp.state == starting }); k >= 0 {
			r.replicas[k].state = gone
			continue
		}
		if k := r.find(func(rp *replica) bool { return rp.state == ready && !rp.busy && !rp.draining }); k >= 0 {
			r.replicas[k].state = gone
			continue
		}
		if k := r.find(func(rp *replica) bool { return rp.state == ready && !rp.draining }); k >= 0 {
			r.replicas[k].draining = true
		}
	}
	r.dispatch()
}

func (r *run) find(ok func(*replica) bool) int {
	for k, rp := range r.replicas {
		if ok(rp) {
			return k
		}
	}
	return -1
}

func (r *run) findLast(ok func(*replica) bool) int {
	for k := len(r.replicas) - 1; k >= 0; k-- {
		if ok(r.replicas[k]) {
			return k
		}
	}
	return -1
}

func (r *run) finish() {
	row := &r.res.Row
	row.ReplicaHours = r.replicaSeconds / 3600
	row.Requests = len(r.waits)
	sort.Float64s(r.waits)
	for _, w := range r.waits {
		if w > 0 {
			row.Waited++
		}
	}
	row.WaitP50, row.WaitP99 = quantile(r.waits, 0.5), quantile(r.waits, 0.99)
	if n := len(r.waits); n > 0 {
		row.WaitMax = r.waits[n-1]
	}
	keys := make([]int64, 0, len(r.minutes))
	for m := range r.minutes {
		keys = append(keys, m)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	arrivals := map[int64]bool{}
	for _, q := range r.cfg.Requests {
		arrivals[int64(math.Floor(float64(q.Arrival)/60))] = true
	}
	for _, m := range keys {
		mm := r.minutes[m]
		if mm.Waiting && mm.Time+60 > r.cfg.ScoreFrom {
			row.UnderProvisionedMinutes++
			idle := 0
			for j := m - 1; j >= m-IdleMinutes && !arrivals[j]; j-- {
				idle++
			}
			if idle >= IdleMinutes {
				row.UnderProvisionedAfterIdle++
			}
		}
		r.res.Minutes = append(r.res.Minutes, *mm)
	}
}

// IdleMinutes is how many minutes without an arrival make the next
// under-provisioned minute one "after idle".
const IdleMinutes = 5

// quantile of sorted values (nearest rank).
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(k, len(sorted)-1))]
}
