package leader

import (
	"math"
	"slices"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/incident"
	"github.com/strata-dev/strata/internal/rollout"
	"github.com/strata-dev/strata/internal/rolloutguard"
	"github.com/strata-dev/strata/internal/state"
)

// The rollout guard of each deployment under way (internal/rolloutguard,
// docs/incidents.md): it is told what its copies, old and new, did — when
// each started and stopped running, and their trouble — and judges every
// pass; a halt fails the deployment with the guard's reason, which reverts
// it to the last stable version when its groups ask for autoRevert (the
// auto-revert loop does that) and stops it where it stands otherwise.

// deploymentGuard is one deployment's guard and what it was told.
type deploymentGuard struct {
	guard   *rolloutguard.Guard
	running map[string]time.Time // copies told running, since when
	halted  bool
}

// guardInput is one thing to tell a guard, in time order.
type guardInput struct {
	at      time.Time
	order   int // at one time: trouble, then stops, then starts
	trouble *rolloutguard.Trouble
	start   *rolloutguard.Alloc
	stop    string
}

// judgeRollouts tells every deployment's guard what happened since the
// last pass and returns the fail-deployment commands of those it halts.
func (c *correlation) judgeRollouts(snap *state.Snapshot, d *describer, sigs []incident.Signal, now time.Time) []any {
	l := c.l
	var cmds []any
	under := map[string]bool{}
	for _, dep := range snap.Deployments(nil) {
		if api.DeploymentTerminal(dep.Status) || l.cfg.RolloutGuard.Off {
			continue
		}
		under[dep.ID] = true
		g := c.guards[dep.ID]
		if g == nil {
			g = &deploymentGuard{guard: rolloutguard.New(c.deploymentOf(snap, dep, now), l.cfg.RolloutGuard.Policy), running: map[string]time.Time{}}
			c.guards[dep.ID] = g
		}
		if g.halted {
			continue
		}
		for _, in := range c.guardInputs(snap, dep, g, sigs, now) {
			switch {
			case in.trouble != nil:
				g.guard.Trouble(*in.trouble)
			case in.start != nil:
				g.guard.Start(in.at, *in.start)
			default:
				g.guard.Stop(in.at, in.stop)
			}
		}
		explain := func(tr rolloutguard.Trouble) bool {
			a := snap.Alloc(tr.AllocID)
			if a == nil {
				return false
			}
			in, ok := c.engine.Explain(d.allocSignal(a, tr.Kind, tr.At, ""))
			return ok && in.Workloads >= 2 // infrastructure trouble that hit others too
		}
		v := g.guard.Judge(now, explain)
		if !v.Halt {
			continue
		}
		g.halted = true
		l.logger.Warn("rollout guard: halting a deployment", "deployment", dep.ID, "workload", dep.Workload, "test", v.Test, "reason", v.Reason)
		cmds = append(cmds, l.make.Revert(snap, dep, "halted by the rollout guard: "+v.Reason, dep.AutoRevert()))
	}
	for id := range c.guards {
		if !under[id] {
			delete(c.guards, id)
		}
	}
	return cmds
}

// guardInputs is what a deployment's guard must be told, in time order:
// the trouble of its workload's copies among the pass's signals, and the
// copies that started or stopped running since the last pass.
func (c *correlation) guardInputs(snap *state.Snapshot, dep *api.Deployment, g *deploymentGuard, sigs []incident.Signal, now time.Time) []guardInput {
	var out []guardInput
	mine := map[string]*api.Allocation{}
	for _, a := range snap.AllocsByWorkload(dep.Namespace, dep.Workload) {
		mine[a.ID] = a
		running := a.ClientStatus == api.AllocRunning && !a.Terminal()
		since := rollout.RunningSince(a)
		was, told := g.running[a.ID]
		switch {
		case running && (!told || since.After(was)):
			alloc := c.guardAlloc(snap, dep, a)
			out = append(out, guardInput{at: since, order: 2, start: &alloc})
			g.running[a.ID] = since
		case !running && told:
			at := a.ClientStatusTime
			if at.IsZero() || at.After(now) {
				at = now
			}
			out = append(out, guardInput{at: at, order: 1, stop: a.ID})
			delete(g.running, a.ID)
		}
	}
	for _, s := range sigs {
		if a := mine[s.Subject]; a != nil {
			out = append(out, guardInput{at: s.Time, trouble: &rolloutguard.Trouble{At: s.Time, AllocID: a.ID, Kind: s.Kind, Ref: s.Ref}})
		}
	}
	slices.SortStableFunc(out, func(x, y guardInput) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return x.order - y.order
	})
	return out
}

// guardAlloc is a copy as the guard knows it: its version side, its node
// and the node's classes (Config.GuardClasses).
func (c *correlation) guardAlloc(snap *state.Snapshot, dep *api.Deployment, a *api.Allocation) rolloutguard.Alloc {
	out := rolloutguard.Alloc{ID: a.ID, New: a.WorkloadVersion >= dep.Version, Node: a.NodeName}
	if n := snap.Node(a.NodeID); n != nil {
		out.Node = n.Name
		for _, k := range c.l.cfg.RolloutGuard.Classes {
			if v := n.Labels[k]; v != "" {
				out.Classes = append(out.Classes, rolloutguard.Class{Key: k, Value: v})
			}
		}
	}
	return out
}

// deploymentOf is the guard's view of a deployment: its versions, the old
// version's record from the copies the state still holds, and how many
// node classes the cell has.
func (c *correlation) deploymentOf(snap *state.Snapshot, dep *api.Deployment, now time.Time) rolloutguard.Deployment {
	window := c.l.cfg.RolloutGuard.Policy.WithDefaults().StartWindow
	out := rolloutguard.Deployment{ID: dep.ID, Version: dep.Version, FromVersion: dep.FromVersion}
	for _, a := range snap.AllocsByWorkload(dep.Namespace, dep.Workload) {
		if a.WorkloadVersion >= dep.Version {
			continue
		}
		b := &out.Baseline
		restarts, started, finished, failed := 0, time.Time{}, time.Time{}, false
		for _, ts := range a.TaskStates {
			if ts == nil {
				continue
			}
			restarts += ts.Restarts
			failed = failed || ts.Failed
			if started.IsZero() || (!ts.StartedAt.IsZero() && ts.StartedAt.Before(started)) {
				started = ts.StartedAt
			}
			if ts.FinishedAt.After(finished) {
				finished = ts.FinishedAt
			}
		}
		if started.IsZero() && a.ClientStatus != api.AllocPending {
			started = rollout.RunningSince(a) // an agent that reports no task states
		}
		if started.IsZero() || a.ClientStatus == api.AllocPending {
			continue // never ran
		}
		end := now
		if a.Terminal() {
			end = finished
			if end.IsZero() {
				end = a.ClientStatusTime
			}
		}
		failedStart := a.ClientStatus == api.AllocFailed && end.Sub(started) < window
		b.Starts += 1 + restarts
		b.Events += restarts
		if failedStart {
			b.FailedStarts++
		} else if a.ClientStatus == api.AllocFailed || failed {
			b.Events++
		}
		if end.After(started) {
			b.Exposure += end.Sub(started)
		}
	}
	classes := map[rolloutguard.Class]bool{}
	for _, n := range snap.Nodes() {
		for _, k := range c.l.cfg.RolloutGuard.Classes {
			if v := n.Labels[k]; v != "" {
				classes[rolloutguard.Class{Key: k, Value: v}] = true
			}
		}
	}
	out.Classes = len(classes)
	return out
}

// Guard is what the rollout guard of a deployment under way has seen, for
// `strata deployment status`; nil when none judges it (it finished, the
// guard is off, or this server does not lead).
func (l *Leader) Guard(deploymentID string) *api.DeploymentGuard {
	c := l.correlation
	c.mu.Lock()
	g := c.guards[deploymentID]
	var st rolloutguard.Status
	if g != nil {
		st = g.guard.Status()
	}
	c.mu.Unlock()
	if g == nil {
		return nil
	}
	out := &api.DeploymentGuard{
		StartTrials: st.StartTrials, StartFailures: st.StartFailures, BaselineStartRate: st.BaselineStartRate,
		EventsNew: st.EventsNew, EventsOld: st.EventsOld, ExpectedNew: st.ExpectedNew,
		ExposureHours: st.ExposureHours, HistoryEvents: st.HistoryEvents, Explained: st.Explained, Waiting: st.Waiting,
		Halted: st.Verdict.Reason,
	}
	if !math.IsInf(st.BaselineRate, 1) {
		out.BaselineRate = st.BaselineRate
	}
	return out
}

// GuardConfig configures the rollout guard of deployments.
type GuardConfig struct {
	// Off turns it off: deployments are judged by their health gate
	// alone.
	Off    bool
	Policy rolloutguard.Policy
	// Classes are the node labels whose values are judged apart: a
	// version bad on one CPU feature or one kind of machine (default
	// DefaultGuardClasses; empty: none).
	Classes []string
}

// DefaultGuardClasses are the node labels the guard judges apart by
// default: the CPU architecture, AVX-512 (the feature builds most often
// assume), and a free-form "class" an operator may give machines.
func DefaultGuardClasses() []string {
	return []string{api.LabelCPUArch, api.LabelCPUFeaturePfx + "avx512f", "class"}
}
