package scheduler

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/strata-dev/strata/api"
)

// groupStats is what placing a group saw: how many nodes the filters ran
// on, how many passed, and which filter rejected the others for what
// reason. The distinct reasons of a group are few, so a short slice
// searched linearly is cheaper than a map on the filter walk's hot path.
type groupStats struct {
	examined, feasible int
	rejected           []rejection
	chosen             *api.NodeScore
	// last is 1 + the rejection counted last: most nodes in a row are
	// rejected alike.
	last int
}

type rejection struct {
	filter int // position in group.filters
	reason string
	nodes  int
	names  []string // the first api.MaxNamedRejections nodes rejected, in walk order
}

// reject counts node i of c rejected by filter for reason; its name is
// read only while the rejection names nodes (the walk's hot path reads
// no node object for the others).
func (s *groupStats) reject(filter int, reason string, c *cell, i int) {
	r := s.add(filter, reason, 1)
	if len(r.names) < api.MaxNamedRejections {
		r.names = append(r.names, c.node(i).Name)
	}
}

func (s *groupStats) add(filter int, reason string, nodes int) *rejection {
	if j := s.last - 1; j >= 0 && j < len(s.rejected) && s.rejected[j].filter == filter && s.rejected[j].reason == reason {
		s.rejected[j].nodes += nodes
		return &s.rejected[j]
	}
	for k := range s.rejected {
		if r := &s.rejected[k]; r.filter == filter && r.reason == reason {
			r.nodes += nodes
			s.last = k + 1
			return r
		}
	}
	s.rejected = append(s.rejected, rejection{filter: filter, reason: reason, nodes: nodes})
	s.last = len(s.rejected)
	return &s.rejected[len(s.rejected)-1]
}

// merge adds what another feasible set of the same group saw.
func (s *groupStats) merge(o *groupStats) {
	s.examined += o.examined
	s.feasible += o.feasible
	for _, r := range o.rejected {
		m := s.add(r.filter, r.reason, r.nodes)
		for _, n := range r.names {
			if len(m.names) >= api.MaxNamedRejections {
				break
			}
			m.names = append(m.names, n)
		}
	}
	if s.chosen == nil {
		s.chosen = o.chosen
	}
}

// reasons is how many nodes each reason rejected, whatever the filter.
func (s *groupStats) reasons() map[string]int {
	out := make(map[string]int, len(s.rejected))
	for _, r := range s.rejected {
		out[r.reason] += r.nodes
	}
	return out
}

// clone copies the statistics, so that a gang trial can restore them.
func (s groupStats) clone() groupStats {
	s.rejected = slices.Clone(s.rejected)
	for k := range s.rejected {
		s.rejected[k].names = slices.Clone(s.rejected[k].names)
	}
	return s
}

// explanation turns the group's statistics into its api.Explanation.
func (g *group) explanation(wanted, placed int) api.Explanation {
	e := api.Explanation{
		Group: g.tg.Name, Wanted: wanted, Placed: placed,
		NodesExamined: g.stats.examined, NodesFeasible: g.stats.feasible,
		Chosen: g.stats.chosen,
	}
	for _, r := range g.stats.rejected {
		e.Filtered = append(e.Filtered, api.FilterCount{Filter: g.filters[r.filter].name(), Reason: r.reason, Nodes: r.nodes,
			NodeNames: slices.Clone(r.names)})
	}
	slices.SortStableFunc(e.Filtered, func(a, b api.FilterCount) int {
		if a.Nodes != b.Nodes {
			return b.Nodes - a.Nodes
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	return e
}

// componentExplainer is implemented by scorers whose score is a sum of
// parts worth naming (the label scorer: one part per matching rule).
type componentExplainer interface {
	components(req *Request, n NodeView) []api.ScoreComponent
}

// nodeScore breaks node i's score for one more replica of g into its
// weighted components, largest in size first, as the scheduler saw it
// just before placing there.
func (g *group) nodeScore(c *cell, i int) *api.NodeScore {
	n := c.node(i)
	view := g.view(c, i)
	ns := &api.NodeScore{Node: n.ID, NodeName: n.Name}
	for _, ws := range g.scorers {
		if ex, ok := ws.Scorer.(componentExplainer); ok {
			for _, part := range ex.components(&g.req, view) {
				part.Score *= ws.Weight
				ns.Components = append(ns.Components, part)
			}
			continue
		}
		ns.Components = append(ns.Components, api.ScoreComponent{Name: ws.Name, Score: ws.Weight * ws.Scorer.Score(&g.req, view)})
	}
	for _, terms := range [][]term{g.static, g.dynamic} {
		for _, t := range terms {
			if !t.required() {
				ns.Components = append(ns.Components, api.ScoreComponent{Name: t.label(), Score: t.score(c, i)})
			}
		}
	}
	for k := range ns.Components {
		ns.Components[k].Score = round4(ns.Components[k].Score)
		ns.Score += ns.Components[k].Score
	}
	ns.Score = round4(ns.Score)
	slices.SortStableFunc(ns.Components, func(a, b api.ScoreComponent) int {
		return cmp.Compare(math.Abs(b.Score), math.Abs(a.Score))
	})
	return ns
}

// round4 keeps explanations readable and stable in JSON.
func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }
