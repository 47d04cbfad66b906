package drivers

import (
	"sync"
	"time"
)

// Checkpoint is what a driver wrote when it checkpointed a task.
type Checkpoint struct {
	Dir      string        // the image directory
	Bytes    int64         // total size of the image files
	Duration time.Duration // how long the task was frozen for the dump
}

// Undo holds one thing to undo later, at most once, from any goroutine:
// the CPU quota a driver lifted while criu restored a task, put back when
// the task is resumed (or at once when it was not restored stopped).
type Undo struct {
	mu sync.Mutex
	f  func() error
}

// Set replaces what Run will undo.
func (u *Undo) Set(f func() error) {
	u.mu.Lock()
	u.f = f
	u.mu.Unlock()
}

// Run undoes what was set, once; nil when nothing was.
func (u *Undo) Run() error {
	u.mu.Lock()
	f := u.f
	u.f = nil
	u.mu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}
