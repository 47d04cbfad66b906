package history

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// Kind names an operation a client performs on one workload.
type Kind string

// The operations of the model, one per API call.
const (
	// Put registers a workload (POST /v1/workloads): it creates the
	// workload at version 1, or replaces its spec and bumps its version.
	Put Kind = "put"
	// Stop stops a workload (DELETE /v1/workloads/{name}); it keeps the
	// workload and its version.
	Stop Kind = "stop"
	// Delete purges a workload (DELETE /v1/workloads/{name}?purge=true).
	Delete Kind = "delete"
	// Get reads a workload (GET /v1/workloads/{name}).
	Get Kind = "get"
	// Allocs reads a workload's allocations
	// (GET /v1/workloads/{name}/allocations).
	Allocs Kind = "allocs"
)

// Write reports whether the kind changes state.
func (k Kind) Write() bool { return k == Put || k == Stop || k == Delete }

// Input is what a client asked.
type Input struct {
	Kind Kind   `json:"kind"`
	Key  string `json:"key"` // the workload name
	// Value is the unique value a put writes (a label of the workload and
	// an environment variable of its task, so its allocations carry it).
	Value string `json:"value,omitempty"`
}

// Output is what the server answered. An indeterminate answer has Unknown
// set and nothing else.
type Output struct {
	Unknown bool `json:"unknown,omitempty"`
	// Found is false for a 404: get and allocs saw no workload, stop and
	// delete found none to act on. A put's answer always has it set.
	Found   bool   `json:"found"`
	Value   string `json:"value,omitempty"`   // get: the workload's value
	Version uint64 `json:"version,omitempty"` // put: the version it made; get: the version read
	Stopped bool   `json:"stopped,omitempty"` // get
	// Values are the distinct values of the specs the workload's
	// allocations run (allocs), sorted.
	Values []string `json:"values,omitempty"`
}

// state is the model's state of one workload. It is never modified in
// place: Step returns a new one.
type state struct {
	exists  bool
	value   string
	version uint64
	stopped bool
	// written holds every value a put linearized so far wrote on this
	// key, sorted: an allocation can run only a spec that was written.
	written []string
}

func (s state) withWritten(v string) []string {
	i, found := slices.BinarySearch(s.written, v)
	if found {
		return s.written
	}
	out := make([]string, 0, len(s.written)+1)
	out = append(out, s.written[:i]...)
	out = append(out, v)
	return append(out, s.written[i:]...)
}

func (s state) hasWritten(v string) bool {
	_, found := slices.BinarySearch(s.written, v)
	return found
}

// step is the sequential specification of one workload: whether out is a
// possible answer to in from state s, and the state after it.
func step(s state, in Input, out Output) (bool, state) {
	switch in.Kind {
	case Put:
		next := state{exists: true, value: in.Value, version: 1, written: s.withWritten(in.Value)}
		if s.exists {
			next.version = s.version + 1
		}
		return out.Unknown || out.Version == next.version, next
	case Stop:
		next := s
		next.stopped = s.exists
		if out.Unknown {
			return true, next
		}
		return out.Found == s.exists, next
	case Delete:
		next := state{written: s.written}
		if out.Unknown {
			return true, next
		}
		return out.Found == s.exists, next
	case Get:
		if !out.Found {
			return !s.exists, s
		}
		return s.exists && out.Value == s.value && out.Version == s.version && out.Stopped == s.stopped, s
	case Allocs:
		if !out.Found {
			return !s.exists, s
		}
		if len(out.Values) == 0 && !s.exists {
			return false, s // the server answers 404 when there is neither
		}
		for _, v := range out.Values {
			if !s.hasWritten(v) {
				return false, s // an allocation of a spec not (yet) written
			}
		}
		return true, s
	}
	return false, s
}

// Model is the porcupine model of the workload table, partitioned by
// workload name (workloads are independent).
var Model = porcupine.Model{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range ops {
			k := op.Input.(Input).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return state{} },
	Step: func(s, in, out any) (bool, any) {
		return step(s.(state), in.(Input), out.(Output))
	},
	Equal: func(a, b any) bool {
		x, y := a.(state), b.(state)
		return x.exists == y.exists && x.value == y.value && x.version == y.version &&
			x.stopped == y.stopped && slices.Equal(x.written, y.written)
	},
	Hash: func(s any) uint64 {
		x := s.(state)
		h := fnv.New64a()
		fmt.Fprintf(h, "%t|%s|%d|%t|%d", x.exists, x.value, x.version, x.stopped, len(x.written))
		for _, v := range x.written {
			h.Write([]byte(v))
			h.Write([]byte{0})
		}
		return h.Sum64()
	},
	DescribeOperation: func(in, out any) string { return describe(in.(Input), out.(Output)) },
	DescribeState: func(s any) string {
		x := s.(state)
		if !x.exists {
			return fmt.Sprintf("absent (%d values written)", len(x.written))
		}
		st := ""
		if x.stopped {
			st = " stopped"
		}
		return fmt.Sprintf("%s v%d%s (%d values written)", x.value, x.version, st, len(x.written))
	},
	DescribeOperationMetadata: func(m any) string {
		if n, ok := m.(Note); ok {
			return n.String()
		}
		return ""
	},
}

// describe renders one operation, e.g. "put(wl-1, c3-17) → v5".
func describe(in Input, out Output) string {
	var call string
	if in.Kind == Put {
		call = fmt.Sprintf("put(%s, %s)", in.Key, in.Value)
	} else {
		call = fmt.Sprintf("%s(%s)", in.Kind, in.Key)
	}
	var res string
	switch {
	case out.Unknown:
		res = "? (indeterminate)"
	case in.Kind == Put:
		res = fmt.Sprintf("v%d", out.Version)
	case !out.Found:
		res = "404"
	case in.Kind == Get:
		res = fmt.Sprintf("%s v%d", out.Value, out.Version)
		if out.Stopped {
			res += " stopped"
		}
	case in.Kind == Allocs:
		res = "[" + strings.Join(out.Values, " ") + "]"
	default:
		res = "ok"
	}
	return call + " → " + res
}
