package drivers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"
)

// ErrNotConfigured is returned by a Registration's Init when the node is
// not set up for the driver (no containerd socket, micro-VMs turned off):
// the driver is not offered, and a task that needs it fails saying what
// it requires.
var ErrNotConfigured = errors.New("not configured on this node")

// Registration is one task driver of the node's composition, as
// containerd's plugins register themselves (type, id, requires, init):
// the agent's composition is a list of these, not hand wiring, and adding
// a driver is one entry plus its package.
type Registration struct {
	// Name is the driver's name in Task.Driver and Node.Drivers.
	Name string
	// Requires says what the node needs to offer the driver ("a
	// containerd socket that answers (--containerd-socket)"): the reason
	// given when Init says ErrNotConfigured.
	Requires string
	// Init makes the driver. It must start no goroutine (a driver with
	// background work implements Runner). An error wrapping
	// ErrNotConfigured leaves the driver out quietly; another error is
	// logged and kept as the reason tasks of the driver fail.
	Init func() (Driver, error)
}

// Loaded is one driver of a Set with the optional capabilities it has;
// a nil field is a capability it lacks.
type Loaded struct {
	Name       string
	Driver     Driver
	Checkpoint Checkpointer
	Labels     Labeler
	Resize     Resizer
	Orphans    OrphanFinder
	Runner     Runner
	Closer     Closer
	// external: added by the set's user (Add), who runs and closes it.
	external bool
}

func load(name string, d Driver) *Loaded {
	l := &Loaded{Name: name, Driver: d}
	l.Checkpoint, _ = d.(Checkpointer)
	l.Labels, _ = d.(Labeler)
	l.Resize, _ = d.(Resizer)
	l.Orphans, _ = d.(OrphanFinder)
	l.Runner, _ = d.(Runner)
	l.Closer, _ = d.(Closer)
	return l
}

// Set is the node's task drivers, loaded once from the registrations, with
// their capabilities, and why each missing one is missing. It is safe for
// concurrent use once loaded (Add is for set-up only).
type Set struct {
	loaded  map[string]*Loaded
	missing map[string]error
}

// Load initializes every registration in order and returns the drivers
// the node offers.
func Load(regs []Registration, log *slog.Logger) *Set {
	s := &Set{loaded: map[string]*Loaded{}, missing: map[string]error{}}
	for _, r := range regs {
		d, err := r.Init()
		switch {
		case errors.Is(err, ErrNotConfigured):
			s.missing[r.Name] = fmt.Errorf("%w: it requires %s", err, r.Requires)
			log.Info("task driver not offered", "driver", r.Name, "requires", r.Requires, "why", err)
		case err != nil:
			s.missing[r.Name] = err
			log.Warn("task driver unavailable", "driver", r.Name, "err", err)
		default:
			s.loaded[r.Name] = load(r.Name, d)
		}
	}
	return s
}

// Add offers d under name, replacing a loaded driver of that name (tests
// and embedders bring their own). The caller owns d: the set neither runs
// nor closes it, so one driver value may serve agent after agent.
func (s *Set) Add(name string, d Driver) {
	l := load(name, d)
	l.external = true
	s.loaded[name] = l
	delete(s.missing, name)
}

// Get returns the driver of name, or nil when the node does not offer it.
func (s *Set) Get(name string) *Loaded { return s.loaded[name] }

// For returns the driver of name with its capabilities; a node without it
// gets a stand-in with none, whose starts fail saying why, so that the
// task fails with a reason instead of the agent refusing the allocation.
func (s *Set) For(name string) *Loaded {
	if l := s.loaded[name]; l != nil {
		return l
	}
	return &Loaded{Name: name, Driver: unavailable{name: name, err: s.missing[name]}}
}

// Names lists the drivers the node offers, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.loaded))
	for name := range s.loaded {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// All lists the loaded drivers, sorted by name.
func (s *Set) All() []*Loaded {
	out := make([]*Loaded, 0, len(s.loaded))
	for _, name := range s.Names() {
		out = append(out, s.loaded[name])
	}
	return out
}

// Run runs the background work (Runner) of every driver it loaded until
// ctx is done and returns once all of it returned.
func (s *Set) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, l := range s.All() {
		if l.Runner == nil || l.external {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Runner.Run(ctx)
		}()
	}
	wg.Wait()
}

// Close closes every driver it loaded that has something to close; the
// tasks run on.
func (s *Set) Close() error {
	var errs []error
	for _, l := range s.All() {
		if l.Closer != nil && !l.external {
			if err := l.Closer.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close driver %s: %w", l.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// unavailable stands in for a driver the node does not offer.
type unavailable struct {
	name string
	err  error
}

func (d unavailable) StartTask(_ context.Context, cfg *TaskConfig) (*TaskHandle, error) {
	if d.err != nil {
		return nil, fmt.Errorf("driver %q unavailable on this node: %w", d.name, d.err)
	}
	return nil, fmt.Errorf("driver %q unavailable on this node", d.name)
}
func (d unavailable) RecoverTask(*TaskHandle) error { return ErrTaskNotFound }
func (d unavailable) WaitTask(context.Context, string) (*ExitResult, error) {
	return nil, ErrTaskNotFound
}
func (d unavailable) StopTask(string, time.Duration) error { return nil }
func (d unavailable) DestroyTask(string) error             { return nil }
