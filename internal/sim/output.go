package sim

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// WriteJSON writes r as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// seriesHeader is the CSV header of WriteSeriesCSV.
var seriesHeader = []string{"policy", "seed", "time", "arrived_gpu_pct", "gpu_alloc_pct", "cpu_alloc_pct", "mem_alloc_pct",
	"pending", "running", "evicted"}

// WriteSeriesCSV writes the allocation series of the runs, one row per
// point and run: time is virtual seconds (replay) or pods submitted
// (inflation); pending and running count pods, evicted the evictions so
// far.
func WriteSeriesCSV(w io.Writer, runs ...*Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(seriesHeader); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, r := range runs {
		seed := strconv.FormatInt(r.Seed, 10)
		for _, p := range r.Series {
			row := []string{r.Policy, seed, strconv.FormatInt(p.Time, 10), ff(p.ArrivedGPU), ff(p.GPUAlloc), ff(p.CPUAlloc), ff(p.MemAlloc),
				strconv.Itoa(p.Pending), strconv.Itoa(p.Running), strconv.Itoa(p.Evicted)}
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("write csv: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// summaryHeader is the CSV header of WriteSummaryCSV.
var summaryHeader = []string{"policy", "mode", "seed", "submitted", "placed", "failed", "gpu_alloc_pct", "cpu_alloc_pct",
	"mem_alloc_pct", "frag_ratio_pct", "pending_p50_s", "pending_p90_s", "pending_p99_s", "unscheduled", "preemptions", "evicted",
	"pending_max_s", "pending_mean_s", "scheduled", "waited", "waiting_at_end", "running_at_end",
	"evicted_machine", "evicted_resized", "evicted_trace", "updates", "trace_pending_p50_s", "trace_pending_p90_s", "trace_pending_p99_s",
	"carried_over"}

// WriteSummaryCSV writes one row of final figures per result: allocation,
// pending-time percentiles (seconds, pods placed at least once), evictions
// by cause, and the trace's own pending times where it has them (empty
// otherwise).
func WriteSummaryCSV(w io.Writer, results ...*Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(summaryHeader); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, r := range results {
		tp := []string{"", "", ""}
		if t := r.TracePending; t != nil {
			tp = []string{ff(t.P50), ff(t.P90), ff(t.P99)}
		}
		row := []string{r.Policy, string(r.Mode), strconv.FormatInt(r.Seed, 10), strconv.Itoa(r.Submitted),
			strconv.Itoa(r.Placed), strconv.Itoa(r.Failed), ff(r.GPUAlloc), ff(r.CPUAlloc), ff(r.MemAlloc), ff(r.FragRatio),
			ff(r.Pending.P50), ff(r.Pending.P90), ff(r.Pending.P99), strconv.Itoa(r.Pending.Unscheduled),
			strconv.Itoa(r.Preemptions), strconv.Itoa(r.Evicted),
			ff(r.Pending.Max), ff(r.Pending.Mean), strconv.Itoa(r.Pending.Scheduled), strconv.Itoa(r.Pending.Waited),
			strconv.Itoa(r.Waiting), strconv.Itoa(r.Running),
			strconv.Itoa(r.Evictions.Machine), strconv.Itoa(r.Evictions.Resized), strconv.Itoa(r.Evictions.Trace),
			strconv.Itoa(r.Updates), tp[0], tp[1], tp[2], strconv.Itoa(r.CarriedOver)}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// Utilisation samples the run's series at n evenly spaced times from its
// first point to its last (the state in force at each time: the series is
// a step function), for summaries; the whole series when it is shorter.
func Utilisation(r *Result, n int) []Point {
	if len(r.Series) <= n || n < 2 {
		return r.Series
	}
	first, last := r.Series[0].Time, r.Series[len(r.Series)-1].Time
	if r.Mode == ModeReplay && len(r.Series) > 1 {
		first = r.Series[1].Time // the first point is the empty cell before any event
	}
	out := make([]Point, 0, n)
	k := 0
	for j := 0; j < n; j++ {
		t := first + (last-first)*int64(j)/int64(n-1)
		for k+1 < len(r.Series) && r.Series[k+1].Time <= t {
			k++
		}
		pt := r.Series[k]
		pt.Time = t
		out = append(out, pt)
	}
	return out
}

func ff(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
