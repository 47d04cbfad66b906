package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Options tune Check.
type Options struct {
	// ArtifactDir is where a failed check writes its visualization and the
	// history (created if missing). Empty: a new directory under
	// $STRATA_ARTIFACTS, or the system temp dir.
	ArtifactDir string
	// Timeout bounds the linearizability search per workload; a search
	// that does not end in time is reported as undecided (a failure: the
	// history is not proven). Default 5 minutes.
	Timeout time.Duration
}

// Report is the outcome of Check.
type Report struct {
	Ops           int          // operations recorded (discarded ones are not)
	ByKind        map[Kind]int // of those, per kind
	Acknowledged  int          // writes with a definite answer
	Indeterminate int          // writes without one
	Keys          int          // workloads (porcupine partitions)

	// Illegal lists, per workload that is not linearizable, what the
	// checker found; Undecided the workloads it could not decide in time.
	Illegal   []Violation
	Undecided []string
	// Lost lists acknowledged writes the final state contradicts.
	Lost []LostWrite

	CheckTime time.Duration
	// Artifacts is the directory holding the visualization and history
	// of a failed check; empty when the check passed.
	Artifacts string
}

// Violation describes a workload whose history is not linearizable.
type Violation struct {
	Key string
	// Linearized is the longest prefix porcupine could order; State the
	// model's state after it; Stuck the earliest operations that cannot
	// follow it.
	Linearized    []Op
	State         string
	Stuck         []Op
	Visualization string // HTML file, porcupine's visualization
}

// LostWrite is an acknowledged write the final read of its workload does
// not reflect, though no other write could have been ordered after it.
type LostWrite struct {
	Write Op
	Final Op
}

// Err is nil when the history is linearizable and no acknowledged write
// was lost; otherwise it says what went wrong and where the artifacts are.
func (r *Report) Err() error {
	if len(r.Illegal) == 0 && len(r.Undecided) == 0 && len(r.Lost) == 0 {
		return nil
	}
	var b strings.Builder
	for _, v := range r.Illegal {
		fmt.Fprintf(&b, "workload %s is not linearizable: %d operations ordered, then the state is %s and none of these can follow:\n",
			v.Key, len(v.Linearized), v.State)
		for _, op := range v.Stuck {
			fmt.Fprintf(&b, "  %s\n", op)
		}
		if n := len(v.Linearized); n > 0 {
			fmt.Fprintf(&b, "  the last ordered operations were:\n")
			for _, op := range v.Linearized[max(0, n-5):] {
				fmt.Fprintf(&b, "    %s\n", op)
			}
		}
		fmt.Fprintf(&b, "  visualization: %s\n", v.Visualization)
	}
	for _, k := range r.Undecided {
		fmt.Fprintf(&b, "workload %s: the checker did not decide within its timeout\n", k)
	}
	for _, l := range r.Lost {
		fmt.Fprintf(&b, "acknowledged write lost: %s; final read: %s\n", l.Write, l.Final)
	}
	fmt.Fprintf(&b, "history (JSON, load with history.Load): %s", filepath.Join(r.Artifacts, "history.json"))
	return errors.New(b.String())
}

// Summary is a one-line description of the history and the verdict.
func (r *Report) Summary() string {
	verdict := "linearizable, 0 acknowledged writes lost"
	if r.Err() != nil {
		verdict = fmt.Sprintf("%d workloads not linearizable, %d undecided, %d acknowledged writes lost",
			len(r.Illegal), len(r.Undecided), len(r.Lost))
	}
	return fmt.Sprintf("%d operations on %d workloads (put %d, stop %d, delete %d, get %d, allocs %d; %d writes acknowledged, %d indeterminate), checked in %v: %s",
		r.Ops, r.Keys, r.ByKind[Put], r.ByKind[Stop], r.ByKind[Delete], r.ByKind[Get], r.ByKind[Allocs],
		r.Acknowledged, r.Indeterminate, r.CheckTime.Round(time.Millisecond), verdict)
}

// Check checks h for linearizability and lost acknowledged writes.
func Check(h History, o Options) (*Report, error) {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	start := time.Now()
	r := &Report{Ops: len(h.Ops), ByKind: map[Kind]int{}}
	byKey := map[string][]Op{}
	for _, op := range h.Ops {
		r.ByKind[op.Input.Kind]++
		if op.Input.Kind.Write() {
			if op.Output.Unknown {
				r.Indeterminate++
			} else {
				r.Acknowledged++
			}
		}
		byKey[op.Input.Key] = append(byKey[op.Input.Key], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	r.Keys = len(keys)

	results := make([]porcupine.CheckResult, len(keys))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = porcupine.CheckOperationsTimeout(Model, History{Ops: byKey[k]}.porcupine(), o.Timeout)
		}()
	}
	wg.Wait()
	for _, k := range keys {
		r.Lost = append(r.Lost, lostWrites(byKey[k])...)
	}
	var bad []string
	for i, k := range keys {
		switch results[i] {
		case porcupine.Illegal:
			bad = append(bad, k)
		case porcupine.Unknown:
			r.Undecided = append(r.Undecided, k)
		}
	}
	if len(bad) > 0 || len(r.Undecided) > 0 || len(r.Lost) > 0 {
		dir, err := artifactDir(o.ArtifactDir)
		if err != nil {
			return nil, err
		}
		r.Artifacts = dir
		if err := h.Save(filepath.Join(dir, "history.json")); err != nil {
			return nil, err
		}
		for _, k := range bad {
			v, err := explain(k, byKey[k], dir, o.Timeout)
			if err != nil {
				return nil, err
			}
			r.Illegal = append(r.Illegal, v)
		}
	}
	r.CheckTime = time.Since(start)
	return r, nil
}

// explain finds the longest linearizable prefix of one workload's illegal
// history, the state after it and the operations stuck behind it, and
// writes the visualization.
func explain(key string, ops []Op, dir string, timeout time.Duration) (Violation, error) {
	v := Violation{Key: key, Visualization: filepath.Join(dir, safeName(key)+".html")}
	_, info := porcupine.CheckOperationsVerbose(Model, History{Ops: ops}.porcupine(), timeout)
	if err := porcupine.VisualizePath(Model, info, v.Visualization); err != nil {
		return v, fmt.Errorf("write visualization of %s: %w", key, err)
	}
	type id struct {
		process int
		call    int64
	}
	byID := map[id]Op{}
	for _, op := range ops {
		byID[id{op.Process, op.Call}] = op
	}
	var longest []porcupine.Operation
	for _, part := range info.PartialLinearizationsOperations() {
		for _, l := range part {
			if len(l) > len(longest) {
				longest = l
			}
		}
	}
	s := Model.Init().(state)
	done := map[id]bool{}
	for _, p := range longest {
		op := byID[id{p.ClientId, p.Call}]
		v.Linearized = append(v.Linearized, op)
		done[id{op.Process, op.Call}] = true
		_, s = step(s, op.Input, op.Output)
	}
	v.State = Model.DescribeState(s)
	rest := make([]Op, 0, len(ops))
	for _, op := range ops {
		if !done[id{op.Process, op.Call}] {
			rest = append(rest, op)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].Call < rest[j].Call })
	v.Stuck = rest[:min(3, len(rest))]
	return v, nil
}

// lostWrites checks one workload's acknowledged writes against its final
// read (the last definite get): a write that no other write can be
// ordered after must show in it. Porcupine checks this too; this check
// names the write.
func lostWrites(ops []Op) []LostWrite {
	var final *Op
	for i := range ops {
		op := &ops[i]
		if op.Input.Kind == Get && !op.Output.Unknown && (final == nil || op.Call > final.Call) {
			final = op
		}
	}
	if final == nil {
		return nil
	}
	// canFollow reports whether a write of one of kinds may be ordered
	// after w: it did not return before w was called.
	canFollow := func(w Op, kinds ...Kind) bool {
		for _, o := range ops {
			if o.Call == w.Call && o.Process == w.Process {
				continue
			}
			for _, k := range kinds {
				if o.Input.Kind == k && o.Return >= w.Call {
					return true
				}
			}
		}
		return false
	}
	var lost []LostWrite
	for _, w := range ops {
		if !w.Input.Kind.Write() || w.Output.Unknown || w.Return >= final.Call {
			continue
		}
		reflected := true
		switch w.Input.Kind {
		case Put:
			// Versions only grow until a delete: the final read holds at
			// least this version.
			if !canFollow(w, Delete) {
				reflected = final.Output.Found && final.Output.Version >= w.Output.Version
			}
		case Delete:
			if w.Output.Found && !canFollow(w, Put) {
				reflected = !final.Output.Found
			}
		case Stop:
			if w.Output.Found && !canFollow(w, Put) {
				reflected = !final.Output.Found || final.Output.Stopped
			}
		}
		if !reflected {
			lost = append(lost, LostWrite{Write: w, Final: *final})
		}
	}
	return lost
}

// Save writes the history as JSON.
func (h History) Save(path string) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	return nil
}

// Load reads a history saved by Save, to check it again.
func Load(path string) (History, error) {
	var h History
	b, err := os.ReadFile(path)
	if err != nil {
		return h, fmt.Errorf("load history: %w", err)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("load history %s: %w", path, err)
	}
	return h, nil
}

func artifactDir(dir string) (string, error) {
	if dir != "" {
		return dir, os.MkdirAll(dir, 0o755)
	}
	base := os.Getenv("STRATA_ARTIFACTS")
	if base != "" {
		if err := os.MkdirAll(base, 0o755); err != nil {
			return "", err
		}
	}
	return os.MkdirTemp(base, "strata-history-")
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
