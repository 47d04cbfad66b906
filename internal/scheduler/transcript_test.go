package scheduler

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/transcript"
)

// Transcript tests, in the style of etcd-raft's data-driven tests: each
// file of testdata/explain holds directives and the output the scheduler
// gives for them, separated by "----":
//
//	node n1 cpu=4000 mem=8Gi rack=r1
//	----
//
//	schedule web replicas=2 cpu=1500 mem=1Gi require=rack!=r3
//	----
//	group g: wanted 2, placed 2; examined 3, feasible 2
//	  ...
//
// Directives:
//
//	node ID [cpu=M] [mem=SIZE] [gpus=MODELxN] [status=down|draining] [KEY=VALUE...]
//	    adds a node (cpu in millicores; other key=value pairs are labels)
//	schedule NAME [replicas=N] [cpu=M] [mem=SIZE] [gpus=N] [share=M]
//	    [model=M] [exclusive] [prio=N] [require=KEYopVALUE] [spread=KEY]
//	    [anti=KEY] [gang=N] [seed=N] [sample=N]
//	    submits workload NAME (one group g) and schedules it, printing the
//	    plan's explanations, failures, placements and preemptions
//	apply
//	    commits the last plan
//
// The expected outputs are regenerated with
//
//	go test ./internal/scheduler -run Transcript -rewrite
//
// and the diff reviewed like code: it is what users read in
// `strata status`.
func TestTranscripts(t *testing.T) {
	transcript.RunDir(t, "testdata/explain/*.txt", *rewrite, func(t *testing.T) func(transcript.Directive) string {
		f := newFake()
		var last *api.Plan
		return func(d transcript.Directive) string { return runDirective(t, f, d.Line, &last) }
	})
}

func runDirective(t *testing.T, f *fakeState, line string, last **api.Plan) string {
	fields := strings.Fields(line)
	cmd, args := fields[0], fields[1:]
	switch cmd {
	case "node":
		f.addNode(transcriptNode(t, args))
		return ""
	case "schedule":
		w, seed, sample := transcriptWorkload(t, args)
		f.putWorkload(w)
		plan := Schedule(f, &api.Evaluation{ID: "eval-" + w.Name, Workload: w.Name}, Options{Seed: seed, FeasibleSample: sample})
		*last = plan
		return renderPlan(f, plan)
	case "apply":
		if *last == nil {
			t.Fatal("apply before schedule")
		}
		f.apply(*last, false)
		return ""
	}
	t.Fatalf("unknown directive %q", cmd)
	return ""
}

// addNode adds n, keeping the nodes sorted by ID.
func (f *fakeState) addNode(n *api.Node) {
	f.nodes = append(f.nodes, n)
	slices.SortFunc(f.nodes, func(a, b *api.Node) int { return strings.Compare(a.ID, b.ID) })
	f.index++
}

func transcriptNode(t *testing.T, args []string) *api.Node {
	b := node(args[0]).cpu(4000).mem("8Gi")
	for _, a := range args[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "cpu":
			b.cpu(atoi(t, v))
		case "mem":
			b.mem(v)
		case "status":
			b.status(v)
		case "gpus":
			model, n, _ := strings.Cut(v, "x")
			for g := range int(atoi(t, n)) {
				b.gpu(strconv.Itoa(g), model, -1)
			}
		default:
			b.label(k, v)
		}
	}
	return b.n
}

func transcriptWorkload(t *testing.T, args []string) (w *api.Workload, seed int64, sample int) {
	g := taskGroup("g").replicas(1).cpu(1000).mem("1Gi")
	prio, seed := 50, 1
	for _, a := range args[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "replicas":
			g.replicas(int(atoi(t, v)))
		case "cpu":
			g.cpu(atoi(t, v))
		case "mem":
			g.mem(v)
		case "gpus":
			g.gpus(atoi(t, v))
		case "share":
			g.gpuMilli(atoi(t, v))
		case "model":
			g.models(v)
		case "exclusive":
			g.exclusive()
		case "prio":
			prio = int(atoi(t, v))
		case "require":
			for _, op := range []string{"!=", "="} {
				if key, val, ok := strings.Cut(v, op); ok {
					g.require(key, op, val)
					break
				}
			}
		case "spread":
			g.g.Placement.Spread = append(g.g.Placement.Spread, api.SpreadRule{Key: v, MaxSkew: 1, Mode: api.ModeHard})
		case "anti":
			g.g.Placement.AntiAffinity = append(g.g.Placement.AntiAffinity, api.AffinityRule{Key: v, Mode: api.ModeHard})
		case "gang":
			g.gang(int(atoi(t, v)), "")
		case "seed":
			seed = atoi(t, v)
		case "sample":
			sample = int(atoi(t, v))
		default:
			t.Fatalf("schedule: unknown argument %q", a)
		}
	}
	w = workload(args[0], g)
	w.Priority = prio
	return w, seed, sample
}

func atoi(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

// renderPlan is the plan as a user reads it: per group what the
// scheduler saw and chose, then what it placed, stopped and could not
// place.
func renderPlan(f *fakeState, p *api.Plan) string {
	var lines []string
	for _, e := range p.Explanations {
		lines = append(lines, fmt.Sprintf("group %s: wanted %d, placed %d; examined %d, feasible %d",
			e.Group, e.Wanted, e.Placed, e.NodesExamined, e.NodesFeasible))
		for _, fc := range e.Filtered {
			lines = append(lines, fmt.Sprintf("  filter %s: %s (%d)", fc.Filter, fc.Reason, fc.Nodes))
		}
		if c := e.Chosen; c != nil {
			var parts []string
			for _, sc := range c.Components {
				parts = append(parts, fmt.Sprintf("%s %.4g", sc.Name, sc.Score))
			}
			lines = append(lines, fmt.Sprintf("  chose %s, score %.4g: %s", c.Node, c.Score, strings.Join(parts, ", ")))
		}
	}
	nodes := make([]string, 0, len(p.Place))
	for id := range p.Place {
		nodes = append(nodes, id)
	}
	slices.Sort(nodes)
	for _, id := range nodes {
		lines = append(lines, fmt.Sprintf("place %s: %d", id, len(p.Place[id])))
	}
	stopNodes := make([]string, 0, len(p.Stop))
	for id := range p.Stop {
		stopNodes = append(stopNodes, id)
	}
	slices.Sort(stopNodes)
	for _, id := range stopNodes {
		for _, s := range p.Stop[id] {
			line := fmt.Sprintf("stop %s on %s: %s", f.alloc(s.AllocID).Workload, id, s.Reason)
			if s.PreemptedBy != "" {
				line += " (preempted)"
			}
			lines = append(lines, line)
		}
	}
	for _, fl := range p.Failures {
		lines = append(lines, fmt.Sprintf("failed %s: %d missing of %d nodes: %s", fl.Group, fl.Missing, fl.NodesEvaluated, fl.Summary))
	}
	return strings.Join(lines, "\n")
}
