package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
)

// The test binary is also the shim and the exec helper: the agent under
// test runs [os.Args[0], "__shim"].
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "__shim":
			os.Exit(ShimMain(os.Args[2:]))
		case "__exec":
			os.Exit(ExecMain(os.Args[2:]))
		case "__task":
			os.Exit(TaskMain(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

var errUnreachable = errors.New("server unreachable")

// fakeServer is an in-memory ServerAPI that records what the agent sends.
type fakeServer struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	index   uint64
	allocs  map[string]*api.Allocation
	cellID  string // stamped on answers
	name    string // the answering server in stamps
	applied uint64 // added to index in the stamp: the raft index runs ahead of the table's

	nodes         map[string]*api.Node
	registrations int
	heartbeats    int
	forget        bool // the next heartbeat answers ErrNodeUnknown
	unreachable   bool // every call fails
	batches       [][]*api.AllocUpdate
	latest        map[string]*api.AllocUpdate
	notices       []string // the agent's notices, from registrations
}

func newFakeServer() *fakeServer {
	return &fakeServer{
		changed: make(chan struct{}),
		cellID:  "cell-" + newUUID(),
		allocs:  map[string]*api.Allocation{},
		nodes:   map[string]*api.Node{},
		latest:  map[string]*api.AllocUpdate{},
	}
}

var _ ServerAPI = (*fakeServer)(nil)

func (s *fakeServer) bump() {
	s.index++
	close(s.changed)
	s.changed = make(chan struct{})
}

// stamp is the answer's cell stamp; s.mu must be held.
func (s *fakeServer) stamp() Stamp {
	return Stamp{CellID: s.cellID, Index: s.index + s.applied, Server: s.name}
}

func (s *fakeServer) RegisterNode(_ context.Context, n *api.Node) (Stamp, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unreachable {
		return Stamp{}, errUnreachable
	}
	c := n.Copy()
	s.notices = append(s.notices, c.AgentNotices...)
	c.AgentNotices = nil
	s.nodes[n.ID] = c
	s.registrations++
	return s.stamp(), nil
}

func (s *fakeServer) Heartbeat(_ context.Context, nodeID string) (Beat, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unreachable {
		return Beat{}, errUnreachable
	}
	if _, ok := s.nodes[nodeID]; !ok || s.forget {
		s.forget = false
		delete(s.nodes, nodeID)
		return Beat{}, fmt.Errorf("heartbeat %s: %w", nodeID, ErrNodeUnknown)
	}
	s.heartbeats++
	return Beat{Stamp: s.stamp()}, nil
}

func (s *fakeServer) NodeAllocations(ctx context.Context, nodeID string, minIndex uint64, wait time.Duration) ([]*api.Allocation, uint64, Stamp, error) {
	timeout := time.After(wait)
	for {
		s.mu.Lock()
		if s.unreachable {
			s.mu.Unlock()
			return nil, 0, Stamp{}, errUnreachable
		}
		ch := s.changed
		s.mu.Unlock()
		if s.indexAbove(minIndex) {
			break
		}
		select {
		case <-ch:
			continue
		case <-timeout:
		case <-ctx.Done():
			return nil, 0, Stamp{}, ctx.Err()
		}
		break
	}
	// Like a real blocking query, the current list is returned whether the
	// index moved or the wait elapsed.
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*api.Allocation
	for _, a := range s.allocs {
		if a.NodeID == nodeID {
			out = append(out, a.Copy())
		}
	}
	return out, s.index, s.stamp(), nil
}

func (s *fakeServer) indexAbove(min uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.index > min
}

func (s *fakeServer) UpdateAllocations(_ context.Context, updates []*api.AllocUpdate) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unreachable {
		return errUnreachable
	}
	s.batches = append(s.batches, updates)
	for _, u := range updates {
		s.latest[u.ID] = u
	}
	return nil
}

func (s *fakeServer) put(a *api.Allocation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allocs[a.ID] = a
	s.bump()
}

func (s *fakeServer) setDesired(id, desired string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.allocs[id].Copy()
	c.DesiredStatus = desired
	s.allocs[id] = c
	s.bump()
}

func (s *fakeServer) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.allocs, id)
	s.bump()
}

func (s *fakeServer) setUnreachable(v bool) {
	s.mu.Lock()
	s.unreachable = v
	s.mu.Unlock()
}

// update returns the latest report for an allocation, or nil.
func (s *fakeServer) update(id string) *api.AllocUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest[id]
}

func (s *fakeServer) node(id string) *api.Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodes[id].Copy()
}

// eventually polls cond every 10ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitTask waits for a report in which task satisfies cond, and returns it.
func waitTask(t *testing.T, srv *fakeServer, allocID, task, what string, cond func(*api.AllocUpdate, *api.TaskState) bool) *api.AllocUpdate {
	t.Helper()
	var got *api.AllocUpdate
	eventually(t, 20*time.Second, what, func() bool {
		got = srv.update(allocID)
		if got == nil || got.TaskStates[task] == nil {
			return false
		}
		return cond(got, got.TaskStates[task])
	})
	return got
}

type testAgent struct {
	*Agent
	stop func() // cancels Run and waits for it to return
}

// startAgent runs an agent on dataDir. Cleanup stops it and then kills and
// removes every cgroup of the allocations in dataDir, so a failing test
// leaves nothing behind.
func startAgent(t *testing.T, srv *fakeServer, dataDir string, tweak ...func(*Config)) *testAgent {
	t.Helper()
	cfg := Config{
		DataDir:           dataDir,
		Name:              "test-node",
		API:               srv,
		HeartbeatInterval: 20 * time.Millisecond,
		WatchWait:         time.Second,
		UpdateBatch:       5 * time.Millisecond,
		ShimCommand:       []string{os.Args[0], "__shim"},
		GPUCommand:        []string{filepath.Join(t.TempDir(), "no-nvidia-smi")},
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("test", t.Name())
	}
	for _, f := range tweak {
		f(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Errorf("Run did not return after cancel")
			}
		})
	}
	t.Cleanup(func() {
		stop()
		cleanupCgroups(t, dataDir)
	})
	eventually(t, 10*time.Second, "node registration", func() bool { return srv.node(a.NodeID()) != nil })
	return &testAgent{Agent: a, stop: stop}
}

// cleanupCgroups kills and removes every task cgroup under the agent's
// parent (those of its data dir's allocations and any it lost track of),
// then the parent itself.
func cleanupCgroups(t *testing.T, dataDir string) {
	v, err := cgroup.Detect(cgroup.DefaultRoot)
	if err != nil {
		return
	}
	parent := defaultCgroupParent(dataDir)
	refs, err := cgroup.ListTasks(v, cgroup.DefaultRoot, parent)
	if err != nil {
		t.Errorf("cleanup: %v", err)
	}
	for _, ref := range refs {
		g, _ := cgroup.Open(v, cgroup.DefaultRoot, ref.Rel(parent))
		if err := g.Kill(5 * time.Second); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		// The shim writes exit.json once its task is dead; wait for it so
		// that t.TempDir's removal does not race the shim's last write.
		dir := filepath.Join(dataDir, "allocs", ref.AllocID, ref.Task)
		if _, err := os.Stat(filepath.Join(dir, "run.json")); err == nil && ref.Task != "" {
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				if _, err := os.Stat(filepath.Join(dir, "exit.json")); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		if err := g.Remove(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
	g, _ := cgroup.Open(v, cgroup.DefaultRoot, parent)
	for _, dir := range g.Dirs() {
		os.Remove(dir) // only the parent: "strata" may be another test's
	}
}

// allocBuilder builds test allocations.
type allocBuilder struct{ a *api.Allocation }

func newAlloc(nodeID string) *allocBuilder {
	return &allocBuilder{a: &api.Allocation{
		ID: newUUID(), Workload: "w", Group: "g", NodeID: nodeID,
		DesiredStatus: api.DesiredRun, ClientStatus: api.AllocPending,
		Assignment: api.Assignment{NUMANode: -1},
		TaskGroup:  &api.TaskGroup{Name: "g", RestartPolicy: api.RestartPolicy{Mode: api.RestartNever}},
	}}
}

func (b *allocBuilder) task(name string, res api.Resources, cmd ...string) *allocBuilder {
	b.a.TaskGroup.Tasks = append(b.a.TaskGroup.Tasks, &api.Task{Name: name, Driver: "exec", Command: cmd, Resources: res})
	return b
}

func (b *allocBuilder) mockTask(name string, env map[string]string) *allocBuilder {
	b.a.TaskGroup.Tasks = append(b.a.TaskGroup.Tasks, &api.Task{Name: name, Driver: "mock", Env: env})
	return b
}

func (b *allocBuilder) restart(p api.RestartPolicy) *allocBuilder {
	b.a.TaskGroup.RestartPolicy = p
	return b
}

func (b *allocBuilder) last(fn func(*api.Task)) *allocBuilder {
	fn(b.a.TaskGroup.Tasks[len(b.a.TaskGroup.Tasks)-1])
	return b
}

func (b *allocBuilder) build() *api.Allocation { return b.a }

// procAlive reports whether pid exists and is not a zombie.
func procAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

func needCgroups(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := cgroup.Detect(cgroup.DefaultRoot); err != nil {
		t.Skipf("needs cgroups: %v", err)
	}
}
