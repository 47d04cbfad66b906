package trace

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// The Alibaba GenAI serving trace (cluster-trace-v2026-GenAI) comes as
// several small CSV files. Three shapes are read here:
//
//   - per-pod usage series (pod_memory_util_anon.csv, pod_gpu_duty_cycle_anon.csv):
//     value,timestamp_anon,container_ip — one sample of one pod a row, in no
//     particular order;
//   - requests (lora_request_trace.csv): gmt_create, exec_time_seconds and
//     descriptive columns, one request a row;
//   - start-up latencies (basemodel_update_latency_anon.csv):
//     timestamp_anon,value,container_ip with value in milliseconds.

// UsageSample is one sample of a usage series: a time in seconds and a value
// in the file's unit (for the GenAI files a fraction: of the pod's hand-set
// memory limit, or of one GPU's time).
type UsageSample struct {
	Time  int64
	Value float64
}

// UsageSeries is one pod's samples in time order.
type UsageSeries struct {
	Pod     string
	Samples []UsageSample
}

// ReadUsageSeries reads a per-pod usage file (value,timestamp_anon,container_ip)
// and returns one series per pod, pods sorted by name, samples sorted by time
// (samples at the same time keep the file's order).
func ReadUsageSeries(name string, r io.Reader) ([]UsageSeries, error) {
	t, err := newTable(name, r)
	if err != nil {
		return nil, err
	}
	if err := t.require("value", "timestamp_anon", "container_ip"); err != nil {
		return nil, err
	}
	byPod := map[string][]UsageSample{}
	err = t.each(func() error {
		v, err := t.float("value")
		if err != nil {
			return err
		}
		// The GenAI files hold a few values a hair below zero (-1e-5):
		// measurement noise around an idle pod, read as zero.
		v = math.Max(v, 0)
		ts, err := t.seconds("timestamp_anon")
		if err != nil {
			return err
		}
		pod := t.str("container_ip")
		if pod == "" {
			return t.errf("container_ip", "empty pod id")
		}
		byPod[pod] = append(byPod[pod], UsageSample{Time: ts, Value: v})
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]UsageSeries, 0, len(byPod))
	for pod, s := range byPod {
		sort.SliceStable(s, func(i, j int) bool { return s[i].Time < s[j].Time })
		out = append(out, UsageSeries{Pod: pod, Samples: s})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return out, nil
}

// LoadUsageSeries reads a per-pod usage file, plain or gzipped.
func LoadUsageSeries(path string) ([]UsageSeries, error) {
	return load(path, "usage file", ReadUsageSeries)
}

// Request is one request of a serving trace: when it arrived (seconds) and
// how long it kept one replica busy.
type Request struct {
	Arrival  int64
	Exec     float64 // seconds
	Type     string
	Status   string
	Group    string
	Model    string
	Sequence int // position in the file, for a stable order of equal arrivals
}

// requestTimeLayout is gmt_create's format (UTC).
const requestTimeLayout = "2006-01-02 15:04:05"

// ReadRequests reads a request trace (lora_request_trace.csv): gmt_create
// and exec_time_seconds are required, predict_type, predict_status, groupId
// and checkpoint_model_version_id are kept when present. Requests are
// returned in arrival order.
func ReadRequests(name string, r io.Reader) ([]Request, error) {
	t, err := newTable(name, r)
	if err != nil {
		return nil, err
	}
	if err := t.require("gmt_create", "exec_time_seconds"); err != nil {
		return nil, err
	}
	var out []Request
	err = t.each(func() error {
		at, err := time.Parse(requestTimeLayout, t.str("gmt_create"))
		if err != nil {
			return t.errf("gmt_create", "want %q, got %q", requestTimeLayout, t.str("gmt_create"))
		}
		exec := 0.0
		if t.str("exec_time_seconds") != "" {
			if exec, err = t.float("exec_time_seconds"); err != nil {
				return err
			}
			if exec < 0 {
				return t.errf("exec_time_seconds", "negative execution time %v", exec)
			}
		}
		out = append(out, Request{Arrival: at.Unix(), Exec: exec, Type: t.str("predict_type"),
			Status: t.str("predict_status"), Group: t.str("groupId"), Model: t.str("checkpoint_model_version_id"),
			Sequence: len(out)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Arrival < out[j].Arrival })
	return out, nil
}

// LoadRequests reads a request trace, plain or gzipped.
func LoadRequests(path string) ([]Request, error) { return load(path, "request trace", ReadRequests) }

// ReadStartupLatencies reads a start-up latency file
// (basemodel_update_latency_anon.csv: timestamp_anon,value,container_ip, the
// value in milliseconds) and returns the latencies in seconds, in file order.
func ReadStartupLatencies(name string, r io.Reader) ([]float64, error) {
	t, err := newTable(name, r)
	if err != nil {
		return nil, err
	}
	if err := t.require("value"); err != nil {
		return nil, err
	}
	var out []float64
	err = t.each(func() error {
		ms, err := t.float("value")
		if err != nil {
			return err
		}
		if ms < 0 {
			return t.errf("value", "negative latency %v ms", ms)
		}
		out = append(out, ms/1000)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &ParseError{File: name, Line: t.line, Column: "value", Err: fmt.Errorf("no latencies in the file")}
	}
	return out, nil
}

// LoadStartupLatencies reads a start-up latency file, plain or gzipped.
func LoadStartupLatencies(path string) ([]float64, error) {
	return load(path, "start-up latency file", ReadStartupLatencies)
}

// each calls fn for every data row of t, stopping at its first error.
func (t *table) each(fn func() error) error {
	for {
		ok, err := t.next()
		if err != nil || !ok {
			return err
		}
		if err := fn(); err != nil {
			return err
		}
	}
}

// load opens path (plain or gzipped) and reads it with read.
func load[T any](path, what string, read func(string, io.Reader) (T, error)) (T, error) {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("open %s: %w", what, err)
	}
	defer closeFn()
	return read(filepath.Base(path), r)
}

// float parses a column as a finite float.
func (t *table) float(col string) (float64, error) {
	s := t.str(col)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, t.errf(col, "not a number: %q", s)
	}
	return v, nil
}

// seconds parses a column of (possibly fractional) seconds, rounded to whole
// seconds.
func (t *table) seconds(col string) (int64, error) {
	v, err := t.float(col)
	if err != nil {
		return 0, err
	}
	return int64(math.Round(v)), nil
}
