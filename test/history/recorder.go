package history

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Note is what an operation's row in the visualization says besides the
// call and the answer: which server answered and why an answer was not
// definite.
type Note struct {
	Server string `json:"server,omitempty"`
	Err    string `json:"err,omitempty"`
}

func (n Note) String() string {
	switch {
	case n.Err != "" && n.Server != "":
		return n.Server + ": " + n.Err
	case n.Err != "":
		return n.Err
	}
	return n.Server
}

// Op is one recorded operation. Call and Return are nanoseconds since the
// recorder started; an indeterminate operation returns at Never.
type Op struct {
	Process int    `json:"process"`
	Input   Input  `json:"input"`
	Output  Output `json:"output"`
	Call    int64  `json:"call"`
	Return  int64  `json:"return"`
	Note    Note   `json:"note,omitempty"`
}

// Never is the return time of an indeterminate operation: it may take
// effect at any time after its call, or not at all.
const Never = math.MaxInt64

// Recorder collects a history. It is safe for concurrent use.
//
// Each worker (a goroutine issuing one operation at a time) is a process
// of the history. After an indeterminate operation the worker continues as
// a new process, because the old one is still "in" that operation for
// ever; so a process never has two operations open at once.
type Recorder struct {
	start time.Time

	mu      sync.Mutex
	ops     []Op
	process map[int]int // worker → its current process id
	next    int
}

// NewRecorder starts an empty history; its clock starts now.
func NewRecorder() *Recorder {
	return &Recorder{start: time.Now(), process: map[int]int{}}
}

// Call is an operation in flight. Exactly one of Return, Indeterminate or
// Discard must be called on it.
type Call struct {
	r      *Recorder
	worker int
	in     Input
	call   int64
	server string
}

// Invoke records that worker calls in now, on server (for the notes).
func (r *Recorder) Invoke(worker int, server string, in Input) *Call {
	return &Call{r: r, worker: worker, in: in, call: r.now(), server: server}
}

func (r *Recorder) now() int64 { return time.Since(r.start).Nanoseconds() }

// Return records a definite answer, received now.
func (c *Call) Return(out Output) {
	ret := c.r.now()
	c.r.add(c.worker, Op{Input: c.in, Output: out, Call: c.call, Return: ret, Note: Note{Server: c.server}}, false)
}

// Indeterminate records that no definite answer came (a timeout, a reset
// connection, a 5xx that may follow a commit). A read without an answer
// constrains nothing and is dropped; a write may have happened.
func (c *Call) Indeterminate(err error) {
	if !c.in.Kind.Write() {
		c.Discard()
		return
	}
	c.r.add(c.worker, Op{Input: c.in, Output: Output{Unknown: true}, Call: c.call, Return: Never,
		Note: Note{Server: c.server, Err: errText(err)}}, true)
}

// Discard records nothing: the operation surely had no effect (a write
// the server refused before proposing it) or told nothing (a failed read).
func (c *Call) Discard() {}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (r *Recorder) add(worker int, op Op, retire bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.process[worker]
	if !ok {
		p = r.next
		r.next++
		r.process[worker] = p
	}
	op.Process = p
	r.ops = append(r.ops, op)
	if retire {
		delete(r.process, worker)
	}
}

// History returns a copy of what was recorded so far.
func (r *Recorder) History() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return History{Ops: append([]Op(nil), r.ops...)}
}

// History is a recorded sequence of operations.
type History struct {
	Ops []Op `json:"ops"`
}

func (h History) porcupine() []porcupine.Operation {
	out := make([]porcupine.Operation, len(h.Ops))
	for i, op := range h.Ops {
		out[i] = porcupine.Operation{ClientId: op.Process, Input: op.Input, Output: op.Output,
			Call: op.Call, Return: op.Return, Metadata: op.Note}
	}
	return out
}

// String describes an operation with its times in seconds, for messages.
func (op Op) String() string {
	ret := "never"
	if op.Return != Never {
		ret = fmt.Sprintf("%.3fs", float64(op.Return)/1e9)
	}
	s := fmt.Sprintf("process %d: %s [%.3fs..%s]", op.Process, describe(op.Input, op.Output), float64(op.Call)/1e9, ret)
	if n := op.Note.String(); n != "" {
		s += " (" + n + ")"
	}
	return s
}
