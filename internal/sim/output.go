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
var seriesHeader = []string{"time", "arrived_gpu_pct", "gpu_alloc_pct", "cpu_alloc_pct", "mem_alloc_pct", "pending"}

// WriteSeriesCSV writes the allocation series, one row per point.
func WriteSeriesCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(seriesHeader); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, p := range r.Series {
		row := []string{strconv.FormatInt(p.Time, 10), ff(p.ArrivedGPU), ff(p.GPUAlloc), ff(p.CPUAlloc), ff(p.MemAlloc), strconv.Itoa(p.Pending)}
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

// summaryHeader is the CSV header of WriteSummaryCSV.
var summaryHeader = []string{"policy", "mode", "seed", "submitted", "placed", "failed", "gpu_alloc_pct", "cpu_alloc_pct",
	"mem_alloc_pct", "frag_ratio_pct", "pending_p50_s", "pending_p90_s", "pending_p99_s", "unscheduled", "preemptions", "evicted"}

// WriteSummaryCSV writes one row of final figures per result.
func WriteSummaryCSV(w io.Writer, results ...*Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(summaryHeader); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, r := range results {
		row := []string{r.Policy, string(r.Mode), strconv.FormatInt(r.Seed, 10), strconv.Itoa(r.Submitted),
			strconv.Itoa(r.Placed), strconv.Itoa(r.Failed), ff(r.GPUAlloc), ff(r.CPUAlloc), ff(r.MemAlloc), ff(r.FragRatio),
			ff(r.Pending.P50), ff(r.Pending.P90), ff(r.Pending.P99), strconv.Itoa(r.Pending.Unscheduled),
			strconv.Itoa(r.Preemptions), strconv.Itoa(r.Evicted)}
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

func ff(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
