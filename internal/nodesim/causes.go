package nodesim

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Why requests fail matters more than how many do: "640 errors" says
// nothing, "640: node <node> is registered by another agent" says what to
// do. Failures are counted by cause, the error's text with the node's id
// taken out (so that one cause of many nodes counts once), and the first
// failure of each cause is logged at warn, the default level; the rest
// show in the progress lines and the totals.

// maxCauses bounds the distinct causes kept per kind; later ones are
// counted under otherCause.
const maxCauses = 16

// otherCause counts the failures beyond maxCauses distinct causes.
const otherCause = "other causes"

// Cause is one reason requests of a kind failed, and how many did.
type Cause struct {
	Cause string `json:"cause"`
	Count int64  `json:"count"`
}

// causes counts one kind of request's failures by cause; safe for
// concurrent use.
type causes struct {
	mu     sync.Mutex
	counts map[string]int64
}

// add counts one failure of node id with error text and reports whether
// it is the first of its cause.
func (c *causes) add(id string, err error) (cause string, first bool) {
	cause = causeOf(id, err)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = make(map[string]int64)
	}
	if _, ok := c.counts[cause]; !ok && len(c.counts) >= maxCauses {
		cause = otherCause
	}
	c.counts[cause]++
	return cause, c.counts[cause] == 1
}

// snapshot lists the causes, the most frequent first.
func (c *causes) snapshot() []Cause {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Cause, 0, len(c.counts))
	for cause, n := range c.counts {
		out = append(out, Cause{Cause: cause, Count: n})
	}
	slices.SortFunc(out, func(a, b Cause) int {
		if a.Count != b.Count {
			return int(b.Count - a.Count)
		}
		return strings.Compare(a.Cause, b.Cause)
	})
	return out
}

// causeOf is err's text with node id replaced by "<node>".
func causeOf(id string, err error) string {
	return strings.ReplaceAll(err.Error(), id, "<node>")
}

// failed counts a failed request of node id in kind and logs its cause at
// warn the first time it is seen.
func (s *Sim) failed(kind *causes, what, id string, err error) {
	cause, first := kind.add(id, err)
	if first {
		s.cfg.Logger.Warn(what+" failed; retrying (later failures of this cause are counted, not logged)", "cause", cause, "node", id)
		return
	}
	s.cfg.Logger.Debug(what+" failed; retrying", "node", id, "err", err)
}

// topCause words the most frequent cause of failures: "640: node <node>
// is registered by another agent", or "" when there were none.
func topCause(cs []Cause) string {
	if len(cs) == 0 {
		return ""
	}
	s := strconv.FormatInt(cs[0].Count, 10) + ": " + cs[0].Cause
	if len(cs) > 1 {
		s += " (and " + strconv.Itoa(len(cs)-1) + " other causes)"
	}
	return s
}
