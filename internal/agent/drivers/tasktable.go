package drivers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
)

// ErrClosed is returned by a Table's Wait once the driver closed: the task
// runs on, and a new driver (a new agent) re-attaches to it.
var ErrClosed = errors.New("driver closed")

// Table is a driver's tasks by id, and the goroutines it runs for them:
// the one copy of what every driver (exec, containerd, microvm, mock) kept
// as a map, a lookup that names ErrTaskNotFound, a "done" channel and a
// result per task, and goroutines nobody waited for. T is the driver's own
// state of a task (a pointer).
//
// It is safe for concurrent use. Close ends it: Closed's channel is
// closed, every goroutine started with Go is waited for, and Wait returns
// ErrClosed; the tasks themselves (processes, containers, VMs) are not
// touched.
type Table[T any] struct {
	mu     sync.Mutex
	tasks  map[string]*Entry[T]
	wg     sync.WaitGroup
	closed chan struct{}
	once   sync.Once
}

// Entry is one task of a Table: the driver's state and the task's exit,
// published once.
type Entry[T any] struct {
	ID   string
	Data T

	once   sync.Once
	done   chan struct{}
	result *ExitResult
}

// NewTable returns an empty table.
func NewTable[T any]() *Table[T] {
	return &Table[T]{tasks: map[string]*Entry[T]{}, closed: make(chan struct{})}
}

// Put records a task under id, replacing any earlier one of that id (a
// restart), and returns its entry.
func (t *Table[T]) Put(id string, data T) *Entry[T] {
	e := &Entry[T]{ID: id, Data: data, done: make(chan struct{})}
	t.mu.Lock()
	t.tasks[id] = e
	t.mu.Unlock()
	return e
}

// Get returns the task of id, or an error wrapping ErrTaskNotFound.
func (t *Table[T]) Get(id string) (*Entry[T], error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.tasks[id]
	if !ok {
		return nil, fmt.Errorf("task %s: %w", id, ErrTaskNotFound)
	}
	return e, nil
}

// Has reports whether a task of id is in the table.
func (t *Table[T]) Has(id string) bool {
	_, err := t.Get(id)
	return err == nil
}

// Delete forgets the task of id (no error when it is not there).
func (t *Table[T]) Delete(id string) {
	t.mu.Lock()
	delete(t.tasks, id)
	t.mu.Unlock()
}

// IDs lists the tasks' ids, sorted.
func (t *Table[T]) IDs() []string {
	t.mu.Lock()
	out := make([]string, 0, len(t.tasks))
	for id := range t.tasks {
		out = append(out, id)
	}
	t.mu.Unlock()
	sort.Strings(out)
	return out
}

// Wait blocks until the task of id has exited (its result, a copy), ctx
// is done, or the table closed (ErrClosed).
func (t *Table[T]) Wait(ctx context.Context, id string) (*ExitResult, error) {
	e, err := t.Get(id)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.done:
		return e.Result(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.closed:
		return nil, fmt.Errorf("wait %s: %w", id, ErrClosed)
	}
}

// Go runs f in a goroutine the table tracks: f must return soon after
// Closed's channel is closed, and Close waits for it. A Go after Close
// does not run f.
func (t *Table[T]) Go(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.closed:
		return
	default:
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		f()
	}()
}

// Closed is closed by Close: the driver's goroutines end.
func (t *Table[T]) Closed() <-chan struct{} { return t.closed }

// Close closes Closed's channel and waits for every goroutine started with
// Go. It is idempotent.
func (t *Table[T]) Close() {
	t.once.Do(func() {
		t.mu.Lock()
		close(t.closed)
		t.mu.Unlock()
	})
	t.wg.Wait()
}

// Exit publishes the task's result; only the first call counts.
func (e *Entry[T]) Exit(r *ExitResult) {
	e.once.Do(func() {
		e.result = r
		close(e.done)
	})
}

// Done is closed once the task's result is published.
func (e *Entry[T]) Done() <-chan struct{} { return e.done }

// Exited reports whether the task's result is published.
func (e *Entry[T]) Exited() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// Result is a copy of the task's result; nil before Exit.
func (e *Entry[T]) Result() *ExitResult {
	if !e.Exited() {
		return nil
	}
	r := *e.result
	return &r
}
