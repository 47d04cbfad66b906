package agent

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/state"
)

func mockRunning(_ *api.AllocUpdate, ts *api.TaskState) bool { return ts.State == api.TaskRunning }

func TestJudgeStamp(t *testing.T) {
	known := state.CellMemory{CellID: "A", Index: 100}
	for _, tc := range []struct {
		name       string
		known      state.CellMemory
		stamp      Stamp
		join       bool
		accept     bool
		becomes    bool // the agent joins the stamp's cell
		reasonHint string
	}{
		{"same cell, ahead", known, Stamp{CellID: "A", Index: 101}, false, true, false, ""},
		{"same cell, same index", known, Stamp{CellID: "A", Index: 100}, false, true, false, ""},
		{"same cell, behind", known, Stamp{CellID: "A", Index: 99}, false, false, false, "behind index 100"},
		{"same cell, behind, asked to accept", known, Stamp{CellID: "A", Index: 99}, true, true, true, "accepted cell A at index 99, behind index 100"},
		{"other cell", known, Stamp{CellID: "B", Index: 5000}, false, false, false, "belongs to cell B but this node to cell A"},
		{"other cell, asked to move", known, Stamp{CellID: "B", Index: 3}, true, true, true, "left cell A"},
		{"no cell named", known, Stamp{CellID: "", Index: 500}, false, false, false, "names no cell"},
		{"no cell named, even when moving", known, Stamp{CellID: "", Index: 500}, true, false, false, "names no cell"},
		{"first contact", state.CellMemory{}, Stamp{CellID: "A", Index: 7}, false, true, true, "joined cell A"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judgeStamp(tc.known, tc.stamp, tc.join)
			if v.Accept != tc.accept || v.Join != tc.becomes {
				t.Fatalf("judge(%+v, %+v, join=%v) = %+v; want accept=%v join=%v", tc.known, tc.stamp, tc.join, v, tc.accept, tc.becomes)
			}
			if !strings.Contains(v.Reason, tc.reasonHint) {
				t.Errorf("reason %q does not say %q", v.Reason, tc.reasonHint)
			}
		})
	}
}

// TestAgentRefusesAnotherCellOrAServerBehind reproduces defect 4 of issue
// 7: a server started on an empty data dir answered the agent, which then
// stopped every task ("no longer listed"). The agent must refuse that
// answer, keep its tasks running, say why (its HTTP status), and act again
// once a server of its cell, at or past what it saw, answers; the node's
// events then tell the story.
func TestAgentRefusesAnotherCellOrAServerBehind(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(s *fakeServer)
		why    string
	}{
		{"a new cell on an empty data dir", func(s *fakeServer) {
			s.cellID, s.index, s.applied = "cell-new", 1, 0
		}, "belongs to cell cell-new"},
		{"a server of this cell behind", func(s *fakeServer) {
			s.index, s.applied = 1, 0
		}, "behind index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newFakeServer()
			srv.applied = 40
			ag := startAgent(t, srv, t.TempDir())
			alloc := newAlloc(ag.NodeID()).mockTask("t", nil).build()
			srv.put(alloc)
			waitTask(t, srv, alloc.ID, "t", "task running", mockRunning)
			good := ag.CellStatus()
			if good.CellID != srv.cellID || good.Refusing != "" {
				t.Fatalf("agent's cell %+v; want cell %s, no refusal", good, srv.cellID)
			}

			// The server loses its state: it forgets the node and lists
			// nothing for it.
			srv.mu.Lock()
			saved := srv.allocs
			cell := srv.cellID
			srv.allocs, srv.nodes = map[string]*api.Allocation{}, map[string]*api.Node{}
			tc.break_(srv)
			srv.bump()
			srv.mu.Unlock()

			eventually(t, 10*time.Second, "several refused answers", func() bool {
				st := ag.CellStatus()
				return st.Refused >= 5 && strings.Contains(st.Refusing, tc.why)
			})
			ag.mu.Lock()
			ar := ag.allocs[alloc.ID]
			ag.mu.Unlock()
			if ar == nil || ar.tasks[0].stopping() || ar.tasks[0].snapshot().State != api.TaskRunning {
				t.Fatalf("the agent acted on the refused answer: runner %v", ar)
			}
			var health struct {
				Cell CellStatus `json:"cell"`
			}
			resp, err := http.Get(ag.Node().HTTPAddr + "/v1/agent/health")
			if err != nil {
				t.Fatal(err)
			}
			json.NewDecoder(resp.Body).Decode(&health)
			resp.Body.Close()
			if !strings.Contains(health.Cell.Refusing, tc.why) || health.Cell.CellID != cell {
				t.Errorf("agent HTTP status %+v does not show the refusal", health.Cell)
			}

			// A server of the node's cell, caught up, answers again (a
			// failover to another server of the list).
			srv.mu.Lock()
			reportsBefore := len(srv.batches)
			srv.cellID, srv.allocs, srv.applied = cell, saved, 1000
			srv.bump()
			srv.mu.Unlock()
			eventually(t, 10*time.Second, "the refusal ends and is reported as a node event", func() bool {
				srv.mu.Lock()
				defer srv.mu.Unlock()
				for _, n := range srv.notices {
					if strings.Contains(n, "refused desired state") && strings.Contains(n, tc.why) {
						return ag.CellStatus().Refusing == ""
					}
				}
				return false
			})
			// The server that forgot the node gets its reports again.
			var again *api.AllocUpdate
			eventually(t, 10*time.Second, "the running task reported again", func() bool {
				srv.mu.Lock()
				defer srv.mu.Unlock()
				for _, batch := range srv.batches[reportsBefore:] {
					for _, u := range batch {
						if u.ID == alloc.ID {
							again = u
						}
					}
				}
				return again != nil
			})
			if ts := again.TaskStates["t"]; ts.State != api.TaskRunning || ts.Restarts != 0 {
				t.Errorf("task after the refusal: %+v; want running, never restarted", ts)
			}
			if st := ag.CellStatus(); st.Index < 1000 {
				t.Errorf("agent's index %d after acting at 1000", st.Index)
			}
		})
	}
}

// TestJoinNewCellMovesTheNodeOnPurpose: an agent that remembers a cell
// refuses another one, unless it is started with JoinNewCell.
func TestJoinNewCellMovesTheNodeOnPurpose(t *testing.T) {
	for _, join := range []bool{false, true} {
		t.Run(map[bool]string{false: "refuses", true: "moves"}[join], func(t *testing.T) {
			t.Parallel()
			dataDir := t.TempDir()
			db, err := state.Open(dataDir + "/agent.db")
			if err != nil {
				t.Fatal(err)
			}
			if err := db.PutCell(state.CellMemory{CellID: "old-cell", Index: 7}); err != nil {
				t.Fatal(err)
			}
			db.Close()
			srv := newFakeServer()
			ag := startAgent(t, srv, dataDir, func(c *Config) { c.JoinNewCell = join })
			eventually(t, 10*time.Second, "a verdict", func() bool {
				st := ag.CellStatus()
				return st.Refusing != "" || st.CellID == srv.cellID
			})
			st := ag.CellStatus()
			if !join {
				if st.CellID != "old-cell" || !strings.Contains(st.Refusing, "--join-new-cell") {
					t.Fatalf("without JoinNewCell: %+v; want a refusal that names the flag", st)
				}
				return
			}
			if st.CellID != srv.cellID || st.Refusing != "" {
				t.Fatalf("with JoinNewCell: %+v; want cell %s", st, srv.cellID)
			}
			eventually(t, 10*time.Second, "the move reported as a node event", func() bool {
				srv.mu.Lock()
				defer srv.mu.Unlock()
				return len(srv.notices) > 0 && strings.Contains(srv.notices[0], "left cell old-cell")
			})
			ag.stop()
			db, err = state.Open(dataDir + "/agent.db")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if m, _ := db.Cell(); m.CellID != srv.cellID {
				t.Errorf("remembered cell %+v after the move, want %s", m, srv.cellID)
			}
		})
	}
}

// TestJoinNewCellIsUsedOnce: the flag moves the node to the cell of the
// first answer it accepts, even when that is the cell it already had; a
// server of yet another cell later is refused.
func TestJoinNewCellIsUsedOnce(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	srv := newFakeServer()
	db, err := state.Open(dataDir + "/agent.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutCell(state.CellMemory{CellID: srv.cellID, Index: 0}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ag := startAgent(t, srv, dataDir, func(c *Config) { c.JoinNewCell = true })
	srv.mu.Lock()
	srv.cellID = "another-cell"
	srv.bump()
	srv.mu.Unlock()
	eventually(t, 10*time.Second, "the other cell refused", func() bool {
		return strings.Contains(ag.CellStatus().Refusing, "belongs to cell another-cell")
	})
}

// TestCellGuardNeverActsOnAnotherCellOrBehind: over any sequence of server
// answers, an accepted answer comes from the cell the agent belongs to, at
// or past the highest index it accepted, except for one deliberate move
// (the first answer to an agent with no cell, or one started with
// JoinNewCell); and every refusal is visible while it lasts.
func TestCellGuardNeverActsOnAnotherCellOrBehind(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cells := []string{"", "A", "B"}
		a := &Agent{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		start := state.CellMemory{CellID: rapid.SampledFrom(cells).Draw(t, "remembered"), Index: rapid.Uint64Range(0, 20).Draw(t, "index")}
		if start.CellID == "" {
			start.Index = 0
		}
		join := rapid.Bool().Draw(t, "joinNewCell")
		a.cell.mem, a.cell.joinNew = start, join
		belongs, high := start.CellID, start.Index
		moveLeft := join || start.CellID == ""
		first := true
		for i, n := 0, rapid.IntRange(1, 30).Draw(t, "answers"); i < n; i++ {
			s := Stamp{CellID: rapid.SampledFrom(cells).Draw(t, "cell"), Index: rapid.Uint64Range(0, 40).Draw(t, "at")}
			ok, _ := a.acceptStamp(s, "answer")
			legit := s.CellID != "" && s.CellID == belongs && s.Index >= high
			switch {
			case ok && legit:
				high = s.Index
			case ok && first && moveLeft && s.CellID != "":
				belongs, high = s.CellID, s.Index // the one deliberate move
			case ok:
				t.Fatalf("answer %d %+v accepted; the agent belongs to %q at index %d (join=%v)", i, s, belongs, high, join)
			case legit && !(first && moveLeft):
				t.Fatalf("answer %d %+v from its own cell at or past %d refused", i, s, high)
			}
			if ok {
				first = false
			}
			st := a.CellStatus()
			if !ok && (st.Refusing == "" || st.ServerCellID != s.CellID || st.ServerIndex != s.Index) {
				t.Fatalf("refusal of %+v not visible: %+v", s, st)
			}
			if ok && (st.Refusing != "" || st.CellID != belongs || st.Index != high) {
				t.Fatalf("after accepting %+v the status says %+v; want cell %q index %d", s, st, belongs, high)
			}
		}
	})
}

// switchingServers is a ServerAPI over several fake servers, as the agent's
// client over several addresses: it sticks to one until told to skip it.
type switchingServers struct {
	mu      sync.Mutex
	servers []*fakeServer
	current int
}

var (
	_ ServerAPI     = (*switchingServers)(nil)
	_ ServerSkipper = (*switchingServers)(nil)
)

func (m *switchingServers) cur() *fakeServer {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.servers[m.current]
}

func (m *switchingServers) use(i int) {
	m.mu.Lock()
	m.current = i
	m.mu.Unlock()
}

func (m *switchingServers) SkipServer(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.servers[m.current].name == addr {
		m.current = (m.current + 1) % len(m.servers)
	}
}

func (m *switchingServers) RegisterNode(ctx context.Context, n *api.Node) (Stamp, error) {
	return m.cur().RegisterNode(ctx, n)
}

func (m *switchingServers) Heartbeat(ctx context.Context, id string) (Beat, error) {
	return m.cur().Heartbeat(ctx, id)
}

func (m *switchingServers) NodeAllocations(ctx context.Context, id string, min uint64, wait time.Duration) ([]*api.Allocation, uint64, Stamp, error) {
	return m.cur().NodeAllocations(ctx, id, min, wait)
}

func (m *switchingServers) UpdateAllocations(ctx context.Context, u []*api.AllocUpdate) error {
	return m.cur().UpdateAllocations(ctx, u)
}

// TestRefusedServerIsSkipped: of the agent's servers, one answers for a new
// cell (restarted on an empty data dir) and the client happens to use it;
// the agent refuses it and moves on to a server of its own cell by itself.
func TestRefusedServerIsSkipped(t *testing.T) {
	t.Parallel()
	good, wiped := newFakeServer(), newFakeServer()
	good.name, wiped.name = "http://good", "http://wiped"
	servers := &switchingServers{servers: []*fakeServer{good, wiped}}
	ag := startAgent(t, good, t.TempDir(), func(c *Config) { c.API = servers })
	alloc := newAlloc(ag.NodeID()).mockTask("t", nil).build()
	good.put(alloc)
	waitTask(t, good, alloc.ID, "t", "task running", mockRunning)

	servers.use(1) // say the good server was briefly unreachable
	eventually(t, 10*time.Second, "the refusal of the wiped server, then the good one again", func() bool {
		return noticesWith(good, "refused desired state from http://wiped") == 1 &&
			servers.cur() == good && ag.CellStatus().Refusing == ""
	})
	ag.mu.Lock()
	ar := ag.allocs[alloc.ID]
	ag.mu.Unlock()
	if ar == nil || ar.tasks[0].stopping() || ar.tasks[0].snapshot().State != api.TaskRunning {
		t.Fatalf("the agent acted on the wiped server's list")
	}
}
