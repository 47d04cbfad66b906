package trace

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// GoogleScale converts the Google 2011 trace's normalized capacities (the
// largest machine is 1.0) into absolute units.
type GoogleScale struct {
	CPUMilli  float64 // milli-CPU for a normalized CPU of 1.0
	MemoryMiB float64 // MiB for a normalized memory of 1.0
}

// DefaultGoogleScale maps 1.0 CPU to 64 cores and 1.0 memory to 256 GiB.
var DefaultGoogleScale = GoogleScale{CPUMilli: 64000, MemoryMiB: 262144}

// Google 2011 task event types (published schema).
const (
	taskSubmit        = 0
	taskSchedule      = 1
	taskEvict         = 2
	taskFail          = 3
	taskFinish        = 4
	taskKill          = 5
	taskLost          = 6
	taskUpdatePending = 7
	taskUpdateRunning = 8
)

// Column positions of task_events and machine_events (the files have no header).
const (
	teTime, teJob, teTask, teType, tePriority, teClass, teCPU, teMem, teDistinct = 0, 2, 3, 5, 8, 7, 9, 10, 12
	teColumns                                                                    = 13
	meTime, meMachine, meType, meCPU, meMem                                      = 0, 1, 2, 4, 5
	meColumns                                                                    = 6
)

var taskColumnNames = [teColumns]string{"timestamp", "missing_info", "job_id", "task_index", "machine_id",
	"event_type", "user", "scheduling_class", "priority", "cpu_request", "memory_request", "disk_request",
	"different_machine"}

var machineColumnNames = [meColumns]string{"timestamp", "machine_id", "event_type", "platform_id", "cpus", "memory"}

// openMaybeGzip opens path, transparently decompressing gzip (detected by
// its magic bytes, so the extension does not matter).
func openMaybeGzip(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		return zr, func() error { zr.Close(); return f.Close() }, nil
	}
	return br, f.Close, nil
}

// positional reads a header-less CSV with a fixed published schema.
type positional struct {
	file  string
	names []string
	r     *csv.Reader
	line  int
	row   []string
}

func newPositional(file string, r io.Reader, names []string) *positional {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	return &positional{file: file, names: names, r: cr}
}

func (p *positional) next() (bool, error) {
	for {
		row, err := p.r.Read()
		if err == io.EOF {
			return false, nil
		}
		p.line++
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return false, &ParseError{File: p.file, Line: pe.Line, Column: strconv.Itoa(pe.Column), Err: pe.Err}
			}
			return false, &ParseError{File: p.file, Line: p.line, Column: "-", Err: err}
		}
		if len(row) < len(p.names) {
			return false, &ParseError{File: p.file, Line: p.line, Column: p.names[len(row)],
				Err: fmt.Errorf("row has %d columns, schema has %d", len(row), len(p.names))}
		}
		// Tolerate a header line that names the schema's first column.
		if p.line == 1 && strings.EqualFold(strings.TrimSpace(row[0]), p.names[0]) {
			continue
		}
		p.row = row
		return true, nil
	}
}

func (p *positional) errf(col int, format string, args ...any) error {
	return &ParseError{File: p.file, Line: p.line, Column: p.names[col], Err: fmt.Errorf(format, args...)}
}

func (p *positional) int(col int) (int64, error) {
	s := strings.TrimSpace(p.row[col])
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, p.errf(col, "not an integer: %q", s)
	}
	return v, nil
}

// float parses a normalized value; empty (missing in the trace) yields ok=false.
func (p *positional) float(col int) (v float64, ok bool, err error) {
	s := strings.TrimSpace(p.row[col])
	if s == "" {
		return 0, false, nil
	}
	v, err = strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false, p.errf(col, "not a non-negative number: %q", s)
	}
	return v, true, nil
}

// googleSeconds converts a trace timestamp (µs) to seconds.
func googleSeconds(us int64) int64 { return us / 1_000_000 }

func scale(v, factor float64) int64 { return int64(math.Round(v * factor)) }

// ReadGoogleTaskEvents parses task_events rows into pods, one per attempt
// of a task: an attempt starts at a SUBMIT and ends at the next EVICT,
// FAIL, FINISH, KILL or LOST of the same task; a task resubmitted after it
// ended becomes a new pod ("job-task#2"). Requests come from the SUBMIT row
// or, if it has none, the first UPDATE that does; later UPDATEs with
// requests are the pod's Updates. An attempt that FINISHes or FAILs after
// a SCHEDULE runs for as long as the trace ran it (RunsFor); the others end
// at their event's time. A task first seen in a later state was pending or
// running when the window began: its pod is CarriedOver, created at the
// window's start (the earliest event read). The different_machine column
// is DistinctNode, the job id Job. Pods are returned sorted by creation
// time. Times are whole seconds of the trace's microseconds.
func ReadGoogleTaskEvents(name string, r io.Reader, sc GoogleScale) ([]Pod, error) {
	var b googleTaskBuilder
	if err := b.read(name, r, sc); err != nil {
		return nil, err
	}
	return b.finish(), nil
}

type taskKey struct{ job, task int64 }

type googleTaskBuilder struct {
	pods     []Pod
	open     map[taskKey]int // task -> index of its live attempt
	attempts map[taskKey]int
	hasReq   []bool
	start    int64 // earliest timestamp read, µs
	started  bool
}

func (b *googleTaskBuilder) read(name string, r io.Reader, sc GoogleScale) error {
	if b.open == nil {
		b.open, b.attempts = map[taskKey]int{}, map[taskKey]int{}
	}
	p := newPositional(name, r, taskColumnNames[:])
	for {
		ok, err := p.next()
		if err != nil || !ok {
			return err
		}
		ts, err := p.int(teTime)
		if err != nil {
			return err
		}
		job, err := p.int(teJob)
		if err != nil {
			return err
		}
		task, err := p.int(teTask)
		if err != nil {
			return err
		}
		typ, err := p.int(teType)
		if err != nil {
			return err
		}
		if typ < taskSubmit || typ > taskUpdateRunning {
			return p.errf(teType, "unknown event type %d", typ)
		}
		cpu, hasCPU, err := p.float(teCPU)
		if err != nil {
			return err
		}
		mem, hasMem, err := p.float(teMem)
		if err != nil {
			return err
		}
		if !b.started || ts < b.start {
			b.start, b.started = ts, true
		}
		k := taskKey{job, task}
		idx, isOpen := b.open[k]
		if !isOpen || typ == taskSubmit {
			if isOpen { // resubmitted while we thought it ran: close the old one here
				b.pods[idx].Deletion = googleSeconds(ts)
				b.pods[idx].RunsFor = false
			}
			idx = b.begin(k, ts, p, typ)
		}
		pod := &b.pods[idx]
		if hasCPU && hasMem {
			cpuMilli, memMiB := scale(cpu, sc.CPUMilli), scale(mem, sc.MemoryMiB)
			switch {
			case !b.hasReq[idx]:
				pod.CPUMilli, pod.MemoryMiB, b.hasReq[idx] = cpuMilli, memMiB, true
			case typ == taskUpdatePending || typ == taskUpdateRunning:
				prio, _ := strconv.Atoi(strings.TrimSpace(p.row[tePriority]))
				pod.Updates = append(pod.Updates, Update{Time: googleSeconds(ts), CPUMilli: cpuMilli, MemoryMiB: memMiB, Priority: prio})
			}
		}
		switch typ {
		case taskSchedule:
			if pod.Scheduled == Absent {
				pod.Scheduled = googleSeconds(ts)
			}
			pod.Phase = "Running"
		case taskEvict, taskFail, taskFinish, taskKill, taskLost:
			pod.Deletion = googleSeconds(ts)
			pod.Phase = [...]string{taskEvict: "Evicted", taskFail: "Failed", taskFinish: "Succeeded",
				taskKill: "Killed", taskLost: "Lost"}[typ]
			if (typ == taskFinish || typ == taskFail) && pod.Scheduled != Absent {
				pod.RunsFor, pod.Runtime = true, pod.Deletion-pod.Scheduled
			}
			delete(b.open, k)
		}
	}
}

// begin opens a new attempt of task k at the row p, of type typ: a SUBMIT
// (pending from ts) or, for a task not seen before in a later state, an
// attempt carried over from before the window.
func (b *googleTaskBuilder) begin(k taskKey, ts int64, p *positional, typ int64) int {
	b.attempts[k]++
	name := fmt.Sprintf("%d-%d", k.job, k.task)
	if n := b.attempts[k]; n > 1 {
		name += "#" + strconv.Itoa(n)
	}
	prio, _ := strconv.Atoi(strings.TrimSpace(p.row[tePriority]))
	class := strings.TrimSpace(p.row[teClass])
	pod := Pod{Name: name, Creation: googleSeconds(ts), Deletion: Absent, Scheduled: Absent,
		Priority: prio, Phase: "Pending", Job: k.job, DistinctNode: strings.TrimSpace(p.row[teDistinct]) == "1"}
	if class != "" {
		pod.QoS = "class" + class
	}
	if typ != taskSubmit {
		pod.CarriedOver = true
		if typ != taskSchedule && typ != taskUpdatePending {
			pod.Phase = "Running" // it ran before the window
		}
	}
	b.pods = append(b.pods, pod)
	b.hasReq = append(b.hasReq, false)
	b.open[k] = len(b.pods) - 1
	return len(b.pods) - 1
}

// finish dates the carried-over attempts from the window's start and sorts
// the pods by creation time.
func (b *googleTaskBuilder) finish() []Pod {
	for i := range b.pods {
		if b.pods[i].CarriedOver {
			b.pods[i].Creation = googleSeconds(b.start)
		}
	}
	slices.SortStableFunc(b.pods, func(x, y Pod) int {
		switch {
		case x.Creation < y.Creation:
			return -1
		case x.Creation > y.Creation:
			return 1
		}
		return 0
	})
	return b.pods
}

// LoadGoogleTaskEvents reads task_events parts in the order given (the
// published trace splits them into part-NNNNN-of-00500.csv.gz, in time order).
func LoadGoogleTaskEvents(sc GoogleScale, paths ...string) ([]Pod, error) {
	var b googleTaskBuilder
	for _, path := range paths {
		r, closeFn, err := openMaybeGzip(path)
		if err != nil {
			return nil, fmt.Errorf("open task events: %w", err)
		}
		err = b.read(filepath.Base(path), r, sc)
		closeFn()
		if err != nil {
			return nil, err
		}
	}
	return b.finish(), nil
}

// ReadGoogleMachineEvents parses machine_events into one node per machine ID
// (in first-seen order, capacities from its first ADD) and a node event per
// row. Machines added at time 0 are the initial cell; later ADDs bring a node
// up, REMOVEs take it down, UPDATEs change its capacity.
func ReadGoogleMachineEvents(name string, r io.Reader, sc GoogleScale) ([]Node, []NodeEvent, error) {
	p := newPositional(name, r, machineColumnNames[:])
	index := map[int64]int{}
	var nodes []Node
	var events []NodeEvent
	for {
		ok, err := p.next()
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			break
		}
		ts, err := p.int(meTime)
		if err != nil {
			return nil, nil, err
		}
		id, err := p.int(meMachine)
		if err != nil {
			return nil, nil, err
		}
		typ, err := p.int(meType)
		if err != nil {
			return nil, nil, err
		}
		if typ < int64(NodeAdd) || typ > int64(NodeUpdate) {
			return nil, nil, p.errf(meType, "unknown event type %d", typ)
		}
		cpu, _, err := p.float(meCPU)
		if err != nil {
			return nil, nil, err
		}
		mem, _, err := p.float(meMem)
		if err != nil {
			return nil, nil, err
		}
		n, seen := index[id]
		if !seen {
			n = len(nodes)
			index[id] = n
			nodes = append(nodes, Node{Name: strconv.FormatInt(id, 10),
				CPUMilli: scale(cpu, sc.CPUMilli), MemoryMiB: scale(mem, sc.MemoryMiB),
				Labels: map[string]string{"platform": strings.TrimSpace(p.row[3])}})
		}
		events = append(events, NodeEvent{Time: googleSeconds(ts), Node: n, Kind: NodeEventKind(typ),
			CPUMilli: scale(cpu, sc.CPUMilli), MemoryMiB: scale(mem, sc.MemoryMiB)})
	}
	slices.SortStableFunc(events, func(a, b NodeEvent) int {
		switch {
		case a.Time < b.Time:
			return -1
		case a.Time > b.Time:
			return 1
		}
		return 0
	})
	return nodes, events, nil
}

// LoadGoogleMachineEvents reads a machine_events file (plain or gzipped).
func LoadGoogleMachineEvents(path string, sc GoogleScale) ([]Node, []NodeEvent, error) {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open machine events: %w", err)
	}
	defer closeFn()
	return ReadGoogleMachineEvents(filepath.Base(path), r, sc)
}

// ReadMachineCSV parses a fixed machine set given as a CSV with the header
// machine_id,cpu,memory (normalized capacities, as in the Google trace).
func ReadMachineCSV(name string, r io.Reader, sc GoogleScale) ([]Node, error) {
	t, err := newTable(name, r)
	if err != nil {
		return nil, err
	}
	if err := t.require("machine_id", "cpu", "memory"); err != nil {
		return nil, err
	}
	var nodes []Node
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nodes, nil
		}
		n := Node{Name: t.str("machine_id")}
		if n.Name == "" {
			return nil, t.errf("machine_id", "empty machine id")
		}
		for _, c := range []struct {
			col    string
			factor float64
			dst    *int64
		}{{"cpu", sc.CPUMilli, &n.CPUMilli}, {"memory", sc.MemoryMiB, &n.MemoryMiB}} {
			v, err := strconv.ParseFloat(t.str(c.col), 64)
			if err != nil || v < 0 {
				return nil, t.errf(c.col, "not a non-negative number: %q", t.str(c.col))
			}
			*c.dst = scale(v, c.factor)
		}
		nodes = append(nodes, n)
	}
}

// LoadMachineCSV reads a machine_id,cpu,memory file (plain or gzipped).
func LoadMachineCSV(path string, sc GoogleScale) ([]Node, error) {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return nil, fmt.Errorf("open machines: %w", err)
	}
	defer closeFn()
	return ReadMachineCSV(filepath.Base(path), r, sc)
}

// Window is the span of the task events read, in seconds: from the
// earliest pod creation to the latest time any pod's events name
// (creation, scheduling, end, update). ok=false when pods is empty.
func Window(pods []Pod) (start, end int64, ok bool) {
	for i := range pods {
		p := &pods[i]
		for _, t := range []int64{p.Creation, p.Scheduled, p.Deletion} {
			if t == Absent {
				continue
			}
			if !ok {
				start, end, ok = t, t, true
			}
			start, end = min(start, t), max(end, t)
		}
		for _, u := range p.Updates {
			end = max(end, u.Time)
		}
	}
	return start, end, ok
}

// ClipNodeEvents fits a machine-event list that spans the whole trace (the
// 2011 trace's machine_events covers 29 days) to a window of task events:
// the events before start are moved to start, in order, so that the cell
// is as it was when the window opens, and those after end are dropped.
// events must be sorted by time; the result is too.
func ClipNodeEvents(events []NodeEvent, start, end int64) []NodeEvent {
	out := make([]NodeEvent, 0, len(events))
	for _, ev := range events {
		if ev.Time > end {
			break
		}
		ev.Time = max(ev.Time, start)
		out = append(out, ev)
	}
	return out
}
