package agent

import (
	"fmt"
	"sync"
	"time"

	"github.com/strata-dev/strata/internal/agent/state"
)

// Stamp is what a server's answer says about the cell (invariant 7): the
// cell's identity and the raft index the answering server has applied.
type Stamp struct {
	CellID string
	Index  uint64
	// Server is the address of the server that answered, when known: in
	// the logs, and skipped (ServerSkipper) when the answer is refused.
	Server string
}

// Beat is a server's answer to a heartbeat.
type Beat struct {
	Stamp Stamp
	// Interval is how often the server wants heartbeats (it grows with the
	// cell, so the cell's heartbeat rate stays bounded); 0 keeps the
	// configured one.
	Interval time.Duration
	// Lease is how long, from when the heartbeat was sent, the node may run
	// fenced copies (atMostOnce, disconnect.stopAfter) without another
	// answer; 0 grants none, and fenced groups do not start.
	Lease time.Duration
}

// ServerSkipper is implemented by a ServerAPI that talks to several
// servers: the agent asks it to move on from a server whose answer it
// refused, so that it finds a server of its cell among the others (a
// server restarted on an empty data dir answers successfully, so a client
// would otherwise stay with it).
type ServerSkipper interface {
	SkipServer(addr string)
}

// refusalLogEvery is how often a refusal is logged again while it lasts.
const refusalLogEvery = 10 * time.Second

// maxNotices bounds the notices kept for the next registration (the
// server takes at most 64).
const maxNotices = 32

// cellVerdict is judgeStamp's answer.
type cellVerdict struct {
	Accept bool
	// Join: accepting makes the agent belong to the stamp's cell (first
	// contact, or a move the operator asked for).
	Join   bool
	Reason string // why it refuses, or what joining means
}

// judgeStamp decides whether the agent may act on an answer stamped s,
// given the cell it remembers. It is a pure function: the rules of
// docs/agent-safety.md, one case each.
func judgeStamp(known state.CellMemory, s Stamp, joinNewCell bool) cellVerdict {
	switch {
	case s.CellID == "":
		return cellVerdict{Reason: "the server's answer names no cell: not acting on a server without a cell identity"}
	case known.CellID == "":
		return cellVerdict{Accept: true, Join: true, Reason: fmt.Sprintf("this node joined cell %s", s.CellID)}
	case s.CellID != known.CellID && joinNewCell:
		return cellVerdict{Accept: true, Join: true, Reason: fmt.Sprintf(
			"this node left cell %s (index %d) for cell %s, as --join-new-cell asked", known.CellID, known.Index, s.CellID)}
	case s.CellID != known.CellID:
		return cellVerdict{Reason: fmt.Sprintf(
			"the server belongs to cell %s but this node to cell %s (a server started on an empty data dir makes a new cell): "+
				"not acting on its desired state, tasks keep running; restart the agent with --join-new-cell to move the node on purpose",
			s.CellID, known.CellID)}
	case s.Index < known.Index && joinNewCell:
		return cellVerdict{Accept: true, Join: true, Reason: fmt.Sprintf(
			"this node accepted cell %s at index %d, behind index %d it had acted on (state restored from an older copy), as --join-new-cell asked",
			s.CellID, s.Index, known.Index)}
	case s.Index < known.Index:
		return cellVerdict{Reason: fmt.Sprintf(
			"the server's state is at index %d, behind index %d this node has already acted on (a server restored from an old copy of its data): "+
				"not acting on its desired state, tasks keep running", s.Index, known.Index)}
	}
	return cellVerdict{Accept: true}
}

// cellGuard holds the agent's view of its cell and of any refusal going on.
// It is safe for concurrent use.
type cellGuard struct {
	mu        sync.Mutex
	mem       state.CellMemory // the cell and the highest index accepted
	persisted state.CellMemory // what the database holds
	joinNew   bool             // Config.JoinNewCell, until used once

	refusal  string // the current refusal, "" when none
	since    time.Time
	refused  int // answers refused since
	lastLog  time.Time
	lastSeen Stamp // the last refused answer's stamp

	notices []string // for the next registration
}

// CellStatus is the agent's view of its cell, as its HTTP status shows it.
type CellStatus struct {
	CellID string `json:"cellId,omitempty"`
	Index  uint64 `json:"index"`
	// Refusing says why the agent does not act on what servers answer;
	// empty while it does.
	Refusing     string    `json:"refusing,omitempty"`
	RefusedSince time.Time `json:"refusedSince,omitzero"`
	Refused      int       `json:"refusedAnswers,omitempty"`
	ServerCellID string    `json:"serverCellId,omitempty"`
	ServerIndex  uint64    `json:"serverIndex,omitempty"`
	Server       string    `json:"server,omitempty"` // the last refused server
}

// acceptStamp judges an answer (what names it: "registration",
// "heartbeat", "allocation list"). It returns whether the agent may act on
// it, and whether this answer ended a refusal (the caller then registers
// again, which carries the notice of the refusal to the cell's events).
func (a *Agent) acceptStamp(s Stamp, what string) (ok, recovered bool) {
	g := &a.cell
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	v := judgeStamp(g.mem, s, g.joinNew)
	if !v.Accept {
		if g.refusal == "" {
			g.since = now
			g.lastLog = time.Time{}
		}
		g.refusal, g.lastSeen = v.Reason, s
		g.refused++
		if now.Sub(g.lastLog) >= refusalLogEvery {
			g.lastLog = now
			a.log.Error("REFUSING desired state from the server", "why", v.Reason, "answer", what, "server", s.Server,
				"server_cell", s.CellID, "server_index", s.Index, "cell", g.mem.CellID, "index", g.mem.Index,
				"refused_answers", g.refused, "refusing_for", now.Sub(g.since).Round(time.Second))
		}
		if skipper, ok := a.cfg.API.(ServerSkipper); ok && s.Server != "" {
			skipper.SkipServer(s.Server)
		}
		return false, false
	}
	if v.Join {
		if g.mem.CellID != "" {
			// A move, or a deliberate step back in the same cell.
			a.log.Warn("moving to another cell", "why", v.Reason)
			g.addNotice(v.Reason)
		} else {
			a.log.Info("joined a cell", "cell", s.CellID, "index", s.Index)
		}
		g.mem = state.CellMemory{CellID: s.CellID, Index: s.Index}
		a.persistCellLocked()
	}
	if g.refusal != "" {
		from := ""
		if g.lastSeen.Server != "" {
			from = " from " + g.lastSeen.Server
		}
		msg := fmt.Sprintf("refused desired state%s for %s (%d answers) until a server of cell %s at index %d answered: %s",
			from, now.Sub(g.since).Round(time.Second), g.refused, s.CellID, s.Index, g.refusal)
		a.log.Warn("acting on desired state again", "after", msg)
		g.addNotice(msg)
		g.refusal, g.refused = "", 0
		recovered = true
	}
	// --join-new-cell moves the node once, to the cell of the first answer
	// it accepts; a later server of yet another cell is refused again.
	g.joinNew = false
	g.mem.Index = max(g.mem.Index, s.Index)
	return true, recovered
}

// actedOn persists the highest index accepted, once the agent acted on an
// answer at it (a reconciled allocation list, a registration).
func (a *Agent) actedOn() {
	a.cell.mu.Lock()
	defer a.cell.mu.Unlock()
	a.persistCellLocked()
}

func (a *Agent) persistCellLocked() {
	g := &a.cell
	if g.mem == g.persisted || a.db == nil {
		return
	}
	if err := a.db.PutCell(g.mem); err != nil {
		a.log.Error("persist cell memory", "err", err)
		return
	}
	g.persisted = g.mem
}

func (g *cellGuard) addNotice(text string) {
	g.notices = append(g.notices, text)
	if len(g.notices) > maxNotices {
		g.notices = g.notices[len(g.notices)-maxNotices:]
	}
}

// notice queues text for the cell's events (sent with the next
// registration) and asks for that registration.
func (a *Agent) notice(text string) {
	a.cell.mu.Lock()
	a.cell.addNotice(text)
	a.cell.mu.Unlock()
	a.kick(a.registerCh)
}

// pendingNotices returns the notices not yet delivered.
func (a *Agent) pendingNotices() []string {
	a.cell.mu.Lock()
	defer a.cell.mu.Unlock()
	return append([]string(nil), a.cell.notices...)
}

// noticesDelivered drops the first n notices, delivered by a
// registration; it reports whether none is left.
func (a *Agent) noticesDelivered(n int) bool {
	a.cell.mu.Lock()
	defer a.cell.mu.Unlock()
	a.cell.notices = a.cell.notices[min(n, len(a.cell.notices)):]
	return len(a.cell.notices) == 0
}

// refusing reports whether the agent currently refuses the servers' answers.
func (a *Agent) refusing() bool {
	a.cell.mu.Lock()
	defer a.cell.mu.Unlock()
	return a.cell.refusal != ""
}

// CellStatus returns the agent's view of its cell.
func (a *Agent) CellStatus() CellStatus {
	g := &a.cell
	g.mu.Lock()
	defer g.mu.Unlock()
	st := CellStatus{CellID: g.mem.CellID, Index: g.mem.Index}
	if g.refusal != "" {
		st.Refusing, st.RefusedSince, st.Refused = g.refusal, g.since, g.refused
		st.ServerCellID, st.ServerIndex, st.Server = g.lastSeen.CellID, g.lastSeen.Index, g.lastSeen.Server
	}
	return st
}
