package cli

import (
	"fmt"
	"io"
	"strconv"

	"github.com/strata-dev/strata/internal/sim"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// simTimeRows is how many times of a replay the text report lists.
const simTimeRows = 12

// printReplay is the text report of replay runs: one summary line per run
// (placed, waiting, pending-time percentiles, evictions by cause, final
// allocation), then per run its allocation over time and its pending
// times by priority, next to the trace's own.
func printReplay(w io.Writer, t *trace.Trace, rows []simRow) error {
	fmt.Fprintf(w, "replay of %d pods on %d nodes\n", len(t.Pods), len(t.Nodes))
	tb := newTable(w, "POLICY", "SEED", "PLACED", "WAITING", "PENDING P50/P90/P99", "MAX", "EVICTED MACHINE/RESIZED/TRACE", "CPU %", "MEM %", "GPU %", "TIME")
	for _, r := range rows {
		p, ev := r.Pending, r.Evictions
		tb.row(r.Policy, seedsLabel(r.Seeds), strconv.Itoa(r.Placed), strconv.Itoa(r.Waiting),
			fmt.Sprintf("%s/%s/%s", dur(p.P50), dur(p.P90), dur(p.P99)), dur(p.Max),
			fmt.Sprintf("%d/%d/%d", ev.Machine, ev.Resized, ev.Trace),
			ff1(r.CPUAlloc), ff1(r.MemAlloc), ff1(r.GPUAlloc), fmt.Sprintf("%.2fs", r.Seconds))
	}
	if err := tb.flush(); err != nil {
		return err
	}
	for _, r := range rows {
		fmt.Fprintf(w, "\n%s: of %d pods submitted in the window (%d more carried over from before it), %d ran, %d of them after waiting, %d never ran; %d request updates\n",
			r.Policy, r.Submitted-r.CarriedOver, r.CarriedOver, r.Pending.Scheduled, r.Pending.Waited, r.Pending.Unscheduled, r.Updates)
		if len(r.PendingByPriority) > 0 || r.TracePending != nil {
			bt := newTable(w, "  PENDING (s)", "PODS", "P50", "P90", "P99", "MAX", "MEAN")
			bt.row("  all", strconv.Itoa(r.Pending.Scheduled), dur(r.Pending.P50), dur(r.Pending.P90), dur(r.Pending.P99), dur(r.Pending.Max), dur(r.Pending.Mean))
			for _, b := range r.PendingByPriority {
				bt.row("  "+b.Band, strconv.Itoa(b.Scheduled), dur(b.P50), dur(b.P90), dur(b.P99), dur(b.Max), dur(b.Mean))
			}
			if tp := r.TracePending; tp != nil {
				bt.row("  in the trace itself", strconv.Itoa(tp.Scheduled), dur(tp.P50), dur(tp.P90), dur(tp.P99), dur(tp.Max), dur(tp.Mean))
			}
			if err := bt.flush(); err != nil {
				return err
			}
		}
		if len(r.Utilisation) == 0 {
			continue
		}
		fmt.Fprintf(w, "  over time (trace seconds; %% of the capacity up):\n")
		ut := newTable(w, "  TIME", "HOURS", "CPU %", "MEM %", "GPU %", "RUNNING", "WAITING", "EVICTED")
		t0 := r.Utilisation[0].Time
		for _, pt := range everyNth(r.Utilisation, simTimeRows) {
			ut.row("  "+strconv.FormatInt(pt.Time, 10), strconv.FormatFloat(float64(pt.Time-t0)/3600, 'f', 2, 64),
				ff1(pt.CPUAlloc), ff1(pt.MemAlloc), ff1(pt.GPUAlloc), strconv.Itoa(pt.Running), strconv.Itoa(pt.Pending), strconv.Itoa(pt.Evicted))
		}
		if err := ut.flush(); err != nil {
			return err
		}
	}
	return nil
}

// everyNth picks n points spread over pts, first and last included.
func everyNth(pts []sim.Point, n int) []sim.Point {
	if len(pts) <= n {
		return pts
	}
	out := make([]sim.Point, 0, n)
	for k := 0; k < n; k++ {
		out = append(out, pts[k*(len(pts)-1)/(n-1)])
	}
	return out
}

// dur writes seconds briefly: 45s, 12m30s, 3h05m.
func dur(s float64) string {
	v := int64(s + 0.5)
	switch {
	case v < 60:
		return strconv.FormatInt(v, 10) + "s"
	case v < 3600:
		return fmt.Sprintf("%dm%02ds", v/60, v%60)
	}
	return fmt.Sprintf("%dh%02dm", v/3600, v%3600/60)
}
