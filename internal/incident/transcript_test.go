package incident

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/transcript"
)

// Transcript tests: each file of testdata/ is a story of a cell's trouble
// and the incidents the engine makes of it. Directives:
//
//	cell racks=N nodes=N allocs=N [powerZones=N] [switches=N]
//	    a cell of racks r1..rN with nodes rI-nJ, each running allocs
//	    allocations rI-nJ-aK of workload wK (version wK@v1, driver exec);
//	    racks are split evenly over power zones pz1.. and switches s1..
//	deploy NAME version=V count=N [driver=D]
//	    N more allocations of workload NAME at NAME@vV (deployment
//	    NAME-dV), one per node in turn across the racks
//	at HH:MM:SS
//	    sets the clock for the signals that follow
//	trouble kind=K count=N [over=DUR] [KEY=VALUE...]
//	    N signals of kind K about the allocations (or, for node-down,
//	    the nodes) that carry every KEY=VALUE, taken one node after the
//	    other, spread evenly over DUR from the clock; prints their refs
//	noise kind=K count=N over=DUR seed=S
//	    N signals about allocations drawn at random from the whole cell
//	step [+DUR | HH:MM:SS]
//	    moves the clock and steps the engine, printing its changes
//	incidents
//	    prints the open and closed incidents in full
//	link REF
//	    prints the incident of a signal's reference
//
// Regenerate the expected outputs with
//
//	go test ./internal/incident -run Transcripts -rewrite
var rewrite = flag.Bool("rewrite", false, "rewrite the transcripts in testdata/ with the engine's output")

func TestTranscripts(t *testing.T) {
	transcript.RunDir(t, "testdata/*.txt", *rewrite, func(t *testing.T) func(transcript.Directive) string {
		s := &story{t: t, engine: New(Policy{}), census: NewCensus(), now: day(12, 0, 0)}
		return s.do
	})
}

func day(h, m, sec int) time.Time { return time.Date(2025, 1, 5, h, m, sec, 0, time.UTC) }

// unit is one allocation or node of the story's cell.
type unit struct {
	name  string
	attrs []Attr
}

type story struct {
	t      *testing.T
	engine *Engine
	census *Census
	allocs []unit
	nodes  []unit
	now    time.Time
	refs   int
}

func (s *story) do(d transcript.Directive) string {
	switch d.Cmd {
	case "cell":
		s.cell(d)
	case "deploy":
		s.deploy(d)
	case "at":
		s.now = s.clock(d, d.Args[0])
	case "trouble":
		return s.trouble(d)
	case "noise":
		return s.noise(d)
	case "step":
		if len(d.Args) > 0 {
			s.now = s.clock(d, d.Args[0])
		}
		return renderChanges(s.engine.Step(s.now))
	case "incidents":
		return s.incidents()
	case "link":
		id, ok := s.engine.IncidentOf(d.Args[0])
		if !ok {
			return d.Args[0] + ": no incident"
		}
		return d.Args[0] + ": " + id
	default:
		s.t.Fatalf("%s: unknown directive %q", d.Pos, d.Cmd)
	}
	return ""
}

func (s *story) cell(d transcript.Directive) {
	racks, nodes, allocs := s.int(d, "racks", 1), s.int(d, "nodes", 1), s.int(d, "allocs", 1)
	pzs, switches := s.int(d, "powerZones", 1), s.int(d, "switches", 1)
	for r := 1; r <= racks; r++ {
		rack := []Attr{
			{KeyRack, fmt.Sprintf("r%d", r)},
			{KeyPowerZone, fmt.Sprintf("pz%d", (r-1)*pzs/racks+1)},
			{KeySwitch, fmt.Sprintf("s%d", (r-1)*switches/racks+1)},
		}
		for n := 1; n <= nodes; n++ {
			name := fmt.Sprintf("r%d-n%d", r, n)
			nodeAttrs := append([]Attr{{KeyNode, name}}, rack...)
			s.nodes = append(s.nodes, unit{name, nodeAttrs})
			s.census.Add(UnitNode, nodeAttrs...)
			for a := 1; a <= allocs; a++ {
				w := fmt.Sprintf("w%d", a)
				s.addAlloc(fmt.Sprintf("%s-a%d", name, a), nodeAttrs, w, w+"@v1", "", "exec")
			}
		}
	}
	s.engine.SetCensus(s.census)
}

func (s *story) addAlloc(id string, nodeAttrs []Attr, workload, version, deployment, driver string) {
	attrs := append(slices.Clone(nodeAttrs), Attr{KeyWorkload, workload}, Attr{KeyVersion, version}, Attr{KeyDriver, driver})
	if deployment != "" {
		attrs = append(attrs, Attr{KeyDeployment, deployment})
	}
	s.allocs = append(s.allocs, unit{id, attrs})
	s.census.Add(UnitAlloc, attrs...)
}

func (s *story) deploy(d transcript.Directive) {
	name := d.Args[0]
	v := strconv.Itoa(s.int(d, "version", 2))
	driver, ok := d.Arg("driver")
	if !ok {
		driver = "exec"
	}
	order := s.acrossRacks(s.nodes)
	for i := range s.int(d, "count", 1) {
		n := order[i%len(order)]
		s.addAlloc(fmt.Sprintf("%s-v%s-%d", name, v, i), n.attrs, name, name+"@v"+v, name+"-d"+v, driver)
	}
}

// acrossRacks orders units so that consecutive ones sit on different
// nodes and, where they can, different racks; the allocations taken from
// successive nodes rotate through the nodes' workloads, so that trouble
// spread over a rack does not all fall on one workload.
func (s *story) acrossRacks(us []unit) []unit {
	type keyed struct {
		u         unit
		rank, pos int
	}
	group := func(u unit) string {
		if len(us) == len(s.nodes) {
			return attrOf(u.attrs, KeyRack)
		}
		return attrOf(u.attrs, KeyNode)
	}
	size, ordinal := map[string]int{}, map[string]int{}
	for _, u := range us {
		g := group(u)
		if _, ok := ordinal[g]; !ok {
			ordinal[g] = len(ordinal)
		}
		size[g]++
	}
	seen := map[string]int{}
	var ks []keyed
	for i, u := range us {
		g := group(u)
		ks = append(ks, keyed{u, (seen[g] + ordinal[g]) % size[g], i})
		seen[g]++
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return a.rank - b.rank })
	out := make([]unit, len(ks))
	for i, k := range ks {
		out[i] = k.u
	}
	return out
}

func attrOf(attrs []Attr, key string) string {
	v, _ := commonValue(attrs, key)
	return v
}

func (s *story) trouble(d transcript.Directive) string {
	kind := Kind(s.str(d, "kind"))
	pool := s.allocs
	if kind.Unit() == UnitNode {
		pool = s.nodes
	}
	var match []unit
	for _, u := range pool {
		ok := true
		for _, a := range d.Args {
			k, v, _ := strings.Cut(a, "=")
			if k == "kind" || k == "count" || k == "over" {
				continue
			}
			ok = ok && attrOf(u.attrs, k) == v
		}
		if ok {
			match = append(match, u)
		}
	}
	match = s.acrossRacks(match)
	count := s.int(d, "count", 1)
	if count > len(match) {
		s.t.Fatalf("%s: %d match, %d asked", d.Pos, len(match), count)
	}
	return s.emit(kind, match[:count], s.dur(d, "over"))
}

func (s *story) noise(d transcript.Directive) string {
	rng := rand.New(rand.NewPCG(uint64(s.int(d, "seed", 1)), 0))
	picked := make([]unit, s.int(d, "count", 1))
	for i := range picked {
		picked[i] = s.allocs[rng.IntN(len(s.allocs))]
	}
	return s.emit(Kind(s.str(d, "kind")), picked, s.dur(d, "over"))
}

// emit sends one signal per unit, spread evenly over the span, and lists
// the references and the incidents they joined at once.
func (s *story) emit(kind Kind, us []unit, over time.Duration) string {
	first := s.refs + 1
	joined := map[string]int{}
	var order []string
	for i, u := range us {
		at := s.now
		if len(us) > 1 {
			at = s.now.Add(over * time.Duration(i) / time.Duration(len(us)-1))
		}
		s.refs++
		id, err := s.engine.Observe(Signal{Time: at, Kind: kind, Subject: u.name, Attrs: u.attrs, Ref: fmt.Sprintf("e%d", s.refs)})
		if err != nil {
			s.t.Fatal(err)
		}
		if id != "" {
			if joined[id] == 0 {
				order = append(order, id)
			}
			joined[id]++
		}
	}
	s.now = s.now.Add(over)
	out := fmt.Sprintf("signals e%d..e%d", first, s.refs)
	for _, id := range order {
		out += fmt.Sprintf("; %d joined %s", joined[id], id)
	}
	return out
}

func (s *story) incidents() string {
	var b strings.Builder
	for _, in := range append(s.engine.Open(), s.engine.Closed()...) {
		state := "open"
		if !in.Open() {
			state = "closed " + in.Closed.Format("15:04:05")
		}
		fmt.Fprintf(&b, "%s (%s, %s..%s): %s\n", in.ID, state, in.Began.Format("15:04:05"), in.Last.Format("15:04:05"), in.Summary())
		fmt.Fprintf(&b, "  cause: %s: %s\n", in.Cause, in.Cause.Evidence())
		for _, a := range in.Alternatives {
			fmt.Fprintf(&b, "  also: %s: %s\n", a, a.Evidence())
		}
		for _, h := range in.History {
			fmt.Fprintf(&b, "  - %s\n", h)
		}
		fmt.Fprintf(&b, "  refs: %s\n", strings.Join(in.Refs, " "))
	}
	fmt.Fprintf(&b, "pending %d, dropped %d", s.engine.Pending(), s.engine.Dropped())
	return b.String()
}

func renderChanges(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		switch c.Kind {
		case Opened, Grew:
			fmt.Fprintf(&b, "%s %s: %s\n", c.Kind, c.Incident.ID, c.Incident.Summary())
		default:
			fmt.Fprintf(&b, "%s %s: %s\n", c.Kind, c.Incident.ID, c.Detail)
		}
	}
	return b.String()
}

func (s *story) clock(d transcript.Directive, v string) time.Time {
	if strings.HasPrefix(v, "+") {
		dur, err := time.ParseDuration(v[1:])
		if err != nil {
			s.t.Fatalf("%s: %v", d.Pos, err)
		}
		return s.now.Add(dur)
	}
	at, err := time.Parse("15:04:05", v)
	if err != nil {
		s.t.Fatalf("%s: %v", d.Pos, err)
	}
	return day(at.Hour(), at.Minute(), at.Second())
}

func (s *story) int(d transcript.Directive, key string, def int) int {
	v, ok := d.Arg(key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		s.t.Fatalf("%s: %s: %v", d.Pos, key, err)
	}
	return n
}

func (s *story) str(d transcript.Directive, key string) string {
	v, ok := d.Arg(key)
	if !ok {
		s.t.Fatalf("%s: %s= is missing", d.Pos, key)
	}
	return v
}

func (s *story) dur(d transcript.Directive, key string) time.Duration {
	v, ok := d.Arg(key)
	if !ok {
		return 0
	}
	dur, err := time.ParseDuration(v)
	if err != nil {
		s.t.Fatalf("%s: %s: %v", d.Pos, key, err)
	}
	return dur
}
