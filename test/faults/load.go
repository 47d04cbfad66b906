package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/test/faultnet"
	"github.com/strata-dev/strata/test/history"
)

// LoadOptions shape a recorded load.
type LoadOptions struct {
	Workers int // concurrent clients, each one operation at a time; default 6
	Keys    int // workloads the workers share; default 12
	// OpTimeout bounds one operation, its retries included; default 15s.
	OpTimeout time.Duration
	// Seed makes the choice of operations repeatable; 0: 1.
	Seed uint64
}

// Load runs workers that create, update, stop, purge and read workloads
// and read their allocations through the API, each operation recorded in
// a history for the porcupine check.
type Load struct {
	o      LoadOptions
	client *api.Client
	rec    *history.Recorder
	stop   atomic.Bool
	wg     sync.WaitGroup
	ops    atomic.Int64

	mu       sync.Mutex
	acks     []ack          // acknowledged writes
	outcomes map[string]int // by outcome class, for the report
	bad      []string       // answers no fault explains (a 400, say)
}

type ack struct{ sent, at time.Time }

// Worker ids at and above probeWorker are the scenarios' own probes.
const probeWorker = 1000

// StartLoad starts the workers, using client for every operation.
func StartLoad(client *api.Client, o LoadOptions) *Load {
	if o.Workers == 0 {
		o.Workers = 6
	}
	if o.Keys == 0 {
		o.Keys = 12
	}
	if o.OpTimeout == 0 {
		o.OpTimeout = 15 * time.Second
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	l := &Load{o: o, client: client, rec: history.NewRecorder(), outcomes: map[string]int{}}
	for w := range o.Workers {
		l.wg.Add(1)
		go l.work(w)
	}
	return l
}

// Key is the workload name of key k.
func Key(k int) string { return fmt.Sprintf("h-k%02d", k) }

func (l *Load) work(w int) {
	defer l.wg.Done()
	rng := rand.New(rand.NewPCG(l.o.Seed, uint64(w)))
	for seq := 0; !l.stop.Load(); seq++ {
		key := Key(rng.IntN(l.o.Keys))
		var in history.Input
		switch p := rng.IntN(100); {
		case p < 40:
			in = history.Input{Kind: history.Put, Key: key, Value: fmt.Sprintf("w%d-%d", w, seq)}
		case p < 65:
			in = history.Input{Kind: history.Get, Key: key}
		case p < 80:
			in = history.Input{Kind: history.Allocs, Key: key}
		case p < 90:
			in = history.Input{Kind: history.Stop, Key: key}
		default:
			in = history.Input{Kind: history.Delete, Key: key}
		}
		l.Do(l.client, w, in)
	}
}

// Stop stops the workers and waits for their operations in flight.
func (l *Load) Stop() {
	l.stop.Store(true)
	l.wg.Wait()
}

// Ops is how many operations the workers and probes completed (answered
// or not).
func (l *Load) Ops() int64 { return l.ops.Load() }

// WaitOps waits until at least n operations were done.
func (l *Load) WaitOps(n int64, timeout time.Duration) error {
	_, err := faultnet.Await(timeout, func() error {
		if got := l.Ops(); got < n {
			return fmt.Errorf("%d of %d operations done", got, n)
		}
		return nil
	})
	return err
}

// History is what was recorded so far.
func (l *Load) History() history.History { return l.rec.History() }

// Outcome is how one operation ended.
type Outcome int

// The outcomes of an operation.
const (
	Acknowledged  Outcome = iota // a definite answer (a 404 included)
	NotApplied                   // the server guarantees it did nothing (503 not-leader, no-quorum or not-ready)
	Indeterminate                // no definite answer: a write may or may not have happened
	Unexpected                   // an answer no fault explains (a 400): the test fails
)

// Do performs one operation with client as worker w, records it and
// returns how it ended.
func (l *Load) Do(client *api.Client, w int, in history.Input) Outcome {
	defer l.ops.Add(1)
	server := strings.TrimPrefix(strings.TrimPrefix(client.Addr(), "http://"), "https://")
	call := l.rec.Invoke(w, server, in)
	sent := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), l.o.OpTimeout)
	defer cancel()
	out := history.Output{Found: true}
	var err error
	switch in.Kind {
	case history.Put:
		var resp *api.RegisterResponse
		resp, err = client.RegisterWorkload(ctx, workloadDoc(in.Key, in.Value))
		if err == nil {
			out.Version = resp.Version
		}
	case history.Stop, history.Delete:
		_, err = client.StopWorkload(ctx, in.Key, in.Kind == history.Delete)
	case history.Get:
		var st *api.WorkloadStatus
		st, _, err = client.WorkloadStatus(ctx, in.Key, nil)
		if err == nil {
			out.Value, out.Version, out.Stopped = st.Workload.Labels["hist"], st.Workload.Version, st.Workload.Stopped
		}
	case history.Allocs:
		var allocs []*api.Allocation
		allocs, _, err = client.Allocations(ctx, in.Key, nil)
		if err == nil {
			out.Values = allocValues(allocs)
		}
	}
	if api.IsNotFound(err) && in.Kind != history.Put {
		out, err = history.Output{}, nil
	}
	o := classify(in.Kind, err)
	l.mu.Lock()
	l.outcomes[outcomeClass(o, err)]++
	if o == Acknowledged && in.Kind.Write() {
		l.acks = append(l.acks, ack{sent: sent, at: time.Now()})
	}
	if o == Unexpected {
		l.bad = append(l.bad, fmt.Sprintf("%s(%s): %v", in.Kind, in.Key, err))
	}
	l.mu.Unlock()
	switch o {
	case Acknowledged:
		call.Return(out)
	case Indeterminate:
		call.Indeterminate(err)
	default:
		call.Discard()
	}
	return o
}

// classify decides what an operation's error says about its effect.
func classify(kind history.Kind, err error) Outcome {
	if err == nil {
		return Acknowledged
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		switch {
		case ae.StatusCode == http.StatusServiceUnavailable && (ae.Code == "not-leader" || ae.Code == "not-ready" || ae.Code == api.CodeNoQuorum):
			// Guaranteed for the last attempt only: a stop is retried after
			// a failure in flight (it is idempotent), so an earlier attempt
			// may have been applied.
			if kind == history.Stop {
				return Indeterminate
			}
			return NotApplied
		case ae.StatusCode >= 400 && ae.StatusCode < 500 && ae.StatusCode != http.StatusTooManyRequests:
			return Unexpected
		}
	}
	if !kind.Write() {
		return NotApplied // a read without an answer says nothing
	}
	return Indeterminate
}

func outcomeClass(o Outcome, err error) string {
	switch o {
	case Acknowledged:
		return "ok"
	case Unexpected:
		return "unexpected"
	}
	var ae *api.Error
	switch {
	case errors.As(err, &ae):
		if ae.Code != "" {
			return fmt.Sprintf("%d %s", ae.StatusCode, ae.Code)
		}
		return fmt.Sprint(ae.StatusCode)
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Client.Timeout"):
		return "timeout"
	case errors.Is(err, api.ErrOutcomeUnknown):
		return "failed in flight"
	}
	return "transport error"
}

// Outcomes counts the operations by how they ended ("ok", "timeout",
// "503 not-leader", ...), sorted, for logs and docs.
func (l *Load) Outcomes() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(l.outcomes))
	for k := range l.outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, l.outcomes[k]))
	}
	return strings.Join(parts, ", ")
}

// Unexpected lists the answers no fault explains.
func (l *Load) Unexpected() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.bad)
}

// WriteAckedAfter waits until a write sent after t0 is acknowledged and
// returns how long after t0 that was: the time the cell took to take
// writes again after a fault injected at t0.
func (l *Load) WriteAckedAfter(t0 time.Time, timeout time.Duration) (time.Duration, error) {
	var took time.Duration
	_, err := faultnet.Await(timeout, func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		found := false
		for _, a := range l.acks {
			if a.sent.After(t0) && (!found || a.at.Sub(t0) < took) {
				took, found = a.at.Sub(t0), true
			}
		}
		if !found {
			return fmt.Errorf("no write sent after the fault acknowledged yet")
		}
		return nil
	})
	return took, err
}

// FinalReads reads every key once more with client, retrying until each
// read gets a definite answer: the final state the lost-write check
// compares acknowledged writes with.
func (l *Load) FinalReads(client *api.Client, timeout time.Duration) error {
	for k := range l.o.Keys {
		in := history.Input{Kind: history.Get, Key: Key(k)}
		if _, err := faultnet.Await(timeout, func() error {
			if l.Do(client, probeWorker-1, in) != Acknowledged {
				return fmt.Errorf("final read of %s: no answer", in.Key)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// workloadDoc is the spec a put writes: value is its label and its task's
// environment, so the allocations made from it carry it.
func workloadDoc(name, value string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: %s
  labels: {hist: %s}
spec:
  groups:
    - name: g
      replicas: 1
      tasks:
        - name: t
          driver: mock
          command: ["mock"]
          env: {HIST: %s}
          resources: {cpu: 10m, memory: 4Mi}
`, name, value, value))
}

// allocValues are the distinct values of the specs allocations run.
func allocValues(allocs []*api.Allocation) []string {
	var out []string
	for _, a := range allocs {
		if a.TaskGroup == nil {
			continue
		}
		for _, t := range a.TaskGroup.Tasks {
			if v := t.Env["HIST"]; v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	sort.Strings(out)
	return out
}
