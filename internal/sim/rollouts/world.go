package rollouts

import (
	"container/heap"
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/incident"
	"github.com/strata-dev/strata/internal/rolloutguard"
)

// node is one machine of the simulated cell.
type node struct {
	index, rack int
	name        string
	up          bool
	attrs       []incident.Attr
	classes     []rolloutguard.Class
}

func (n *node) hasClass(c string) bool {
	for _, cl := range n.classes {
		if cl.String() == c {
			return true
		}
	}
	return false
}

// Versions of a copy.
const (
	background = 0
	oldVersion = 1
	newVersion = 2
)

// copyOf is one allocation: of the workload under rollout ("web") or of a
// background workload.
type copyOf struct {
	id       string
	workload string
	version  int
	slot     int
	node     *node
	alloc    *api.Allocation // web's, as rollout.Decide reads it
	running  bool
	done     bool // failed, lost or stopped for good
	gen      int  // bumped at every start and stop: stale events are dropped
	crashes  int
	started  time.Duration
	healthy  bool // no check failing now
	everGood bool // was healthy by the deployment's rule once (progress)
}

func (c *copyOf) web() bool { return c.workload == "web" }

func (c *copyOf) attrs() []incident.Attr {
	out := append([]incident.Attr{}, c.node.attrs...)
	out = append(out, incident.Attr{Key: incident.KeyWorkload, Value: c.workload}, incident.Attr{Key: incident.KeyDriver, Value: "exec"})
	if c.web() {
		out = append(out, incident.Attr{Key: incident.KeyVersion, Value: fmt.Sprintf("web@v%d", c.version)})
		if c.version == newVersion {
			out = append(out, incident.Attr{Key: incident.KeyDeployment, Value: "web-d2"})
		}
	} else {
		out = append(out, incident.Attr{Key: incident.KeyVersion, Value: c.workload + "@v1"})
	}
	return out
}

// evKind is what a scheduled event does.
type evKind int

const (
	evStart    evKind = iota // a copy starts running
	evCrash                  // a copy's task dies (kind: restarted or OOM-killed)
	evHazard                 // a copy's base trouble process fires
	evFlip                   // a copy failing requests has a check turn failing
	evFlipEnd                // a failing check passes again
	evNoiseHit               // rack network or bad node trouble hits a copy
	evNoise                  // a noise event begins or ends
)

type event struct {
	at    time.Duration
	seq   int
	kind  evKind
	copy  *copyOf
	gen   int
	what  incident.Kind
	noise int
	end   bool
	// injected: the bad version's own fault, not the base rate's.
	injected bool
}

// events is a heap of events by time, then by the order they were made.
type events []*event

func (h events) Len() int { return len(h) }
func (h events) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h events) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *events) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func (w *world) schedule(e *event) {
	w.seq++
	e.seq = w.seq
	heap.Push(&w.queue, e)
}

// slot is one replica index of web under the rollout.
type slot struct {
	old, new, failed *copyOf
	oldGone          bool // the rollout stopped its old copy
}
