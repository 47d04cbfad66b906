package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/replica"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
)

const tinyWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s}
spec:
  groups:
    - name: g
      tasks:
        - {name: t, driver: mock, command: ["x"], resources: {cpu: 100m, memory: 64Mi}}
`

func register(t *testing.T, cl *api.Client, name string) {
	t.Helper()
	if _, err := cl.RegisterWorkload(context.Background(), []byte(fmt.Sprintf(tinyWorkload, name))); err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
}

// names lists workload names as server i sees them with ?stale.
func staleNames(t *testing.T, c *servertest.Cell, i int) ([]string, error) {
	t.Helper()
	cl := api.NewClient(c.Addr(i))
	cl.RetryFor = time.Millisecond
	list, _, err := cl.Workloads(context.Background(), &api.Query{Stale: true})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, w := range list {
		out = append(out, w.Name)
	}
	slices.Sort(out)
	return out, nil
}

// waitStaleNames waits until server i's own state lists exactly want.
func waitStaleNames(t *testing.T, c *servertest.Cell, i int, want ...string) {
	t.Helper()
	slices.Sort(want)
	servertest.Eventually(t, 20*time.Second, fmt.Sprintf("server %d to hold %v", i+1, want), func() error {
		got, err := staleNames(t, c, i)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("has %v", got)
		}
		return nil
	})
}

func voters(t *testing.T, c *servertest.Cell) []api.RaftServer {
	t.Helper()
	conf, err := api.NewClientFor(c.Addrs()).RaftConfiguration(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return conf.Servers
}

// TestCellFormsFromBootstrapExpect: three servers given --bootstrap-expect 3
// and only the first's address form one cell (no hand-written files); every
// one of them becomes ready.
func TestCellFormsFromBootstrapExpect(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	l := c.Leader()
	servers := voters(t, c)
	if len(servers) != 3 {
		t.Fatalf("raft configuration %+v, want 3 voters", servers)
	}
	leaders := 0
	for _, s := range servers {
		if !s.Voter {
			t.Errorf("server %s does not vote", s.ID)
		}
		if s.Leader {
			leaders++
		}
	}
	if leaders != 1 {
		t.Errorf("%d leaders in %+v", leaders, servers)
	}
	register(t, api.NewClient(c.Addr(l)), "w1")
	for i := range c.Servers {
		waitStaleNames(t, c, i, "w1")
	}
}

// TestFollowerForwardsWritesAndReads: a write sent to a follower is
// applied (it used to answer 503); a plain read on a follower is answered
// by the leader; ?stale is answered by the follower, saying which leader it
// knows and when it last heard from it.
func TestFollowerForwardsWritesAndReads(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	l := c.Leader()
	f := c.Follower(l)
	register(t, api.NewClient(c.Addr(f)), "via-follower")

	resp, err := http.Get(c.Addr(f) + "/v1/workloads/via-follower")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Strata-Last-Contact") != "0" {
		t.Fatalf("consistent read on a follower: %d, last contact %q; want 200 from the leader (0)", resp.StatusCode, resp.Header.Get("X-Strata-Last-Contact"))
	}
	waitStaleNames(t, c, f, "via-follower")
	resp, err = http.Get(c.Addr(f) + "/v1/workloads?stale")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	contact, err := strconv.Atoi(resp.Header.Get("X-Strata-Last-Contact"))
	var leaderID string
	for _, s := range voters(t, c) {
		if s.Leader {
			leaderID = s.ID
		}
	}
	if resp.Header.Get("X-Strata-Known-Leader") != "true" || resp.Header.Get("X-Strata-Leader") != leaderID || err != nil || contact < 0 || contact > 5000 {
		t.Fatalf("stale read headers: known %q leader %q (want %s) last contact %q", resp.Header.Get("X-Strata-Known-Leader"),
			resp.Header.Get("X-Strata-Leader"), leaderID, resp.Header.Get("X-Strata-Last-Contact"))
	}
}

// TestBlockingQueryThroughFollower: a blocking query sent to a follower
// waits at the leader and returns when the data changes.
func TestBlockingQueryThroughFollower(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	l := c.Leader()
	f := c.Follower(l)
	register(t, api.NewClient(c.Addr(l)), "first")
	follower := api.NewClient(c.Addr(f))
	// Settle first: the evaluation of "first" ends blocked (no nodes).
	servertest.Eventually(t, 20*time.Second, "the first evaluation to end", func() error {
		st, _, err := follower.WorkloadStatus(context.Background(), "first", nil)
		if err != nil || st.LatestEval == nil || st.LatestEval.Status == api.EvalPending {
			return fmt.Errorf("status %+v %v", st, err)
		}
		return nil
	})
	_, meta, err := follower.Workloads(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		list []api.WorkloadSummary
		meta api.QueryMeta
		err  error
		took time.Duration
	}
	got := make(chan answer, 1)
	go func() {
		start := time.Now()
		list, m, err := follower.Workloads(context.Background(), &api.Query{Index: meta.Index, Wait: 20 * time.Second})
		got <- answer{list, m, err, time.Since(start)}
	}()
	select {
	case a := <-got:
		t.Fatalf("the blocking query returned before any change: %+v", a)
	case <-time.After(300 * time.Millisecond):
	}
	register(t, api.NewClient(c.Addr(l)), "second")
	select {
	case a := <-got:
		if a.err != nil || a.meta.Index <= meta.Index || len(a.list) != 2 {
			t.Fatalf("blocking query through a follower: %v, index %d→%d, %d workloads", a.err, meta.Index, a.meta.Index, len(a.list))
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the blocking query through a follower did not wake on a change")
	}
}

// TestServerJoinsRunningCell: `strata server --join ADDR` (no
// --bootstrap-expect) adds a server to a running cell.
func TestServerJoinsRunningCell(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	l := c.Leader()
	register(t, api.NewClient(c.Addr(l)), "before")
	cfg := server.Config{DataDir: t.TempDir(), HTTPAddr: servertest.FreeAddr(t), RaftAddr: servertest.FreeAddr(t),
		Join: []string{c.Configs[2].RaftAddr}, HeartbeatTTL: time.Hour, Workers: 1, Logger: servertest.Logger().With("server", 4)}
	added := c.Add(cfg)
	servertest.Eventually(t, 20*time.Second, "4 voters", func() error {
		if v := voters(t, c); len(v) != 4 {
			return fmt.Errorf("%+v", v)
		}
		return nil
	})
	waitStaleNames(t, c, added, "before")
}

// TestWipedServerRejoins: a follower whose data dir is lost comes back
// with a new id at the same address; it rejoins, and the old id is gone.
func TestWipedServerRejoins(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	l := c.Leader()
	f := c.Follower(l)
	register(t, api.NewClient(c.Addr(l)), "kept")
	var oldID string
	for _, v := range voters(t, c) {
		if v.Address == c.Configs[f].RaftAddr {
			oldID = v.ID
		}
	}
	c.Stop(f)
	if err := os.RemoveAll(c.Configs[f].DataDir); err != nil {
		t.Fatal(err)
	}
	c.Configs[f].BootstrapExpect = 0 // a replacement joins; it does not form a cell
	c.Configs[f].Join = []string{c.Configs[l].RaftAddr}
	c.StartServer(f)
	servertest.Eventually(t, 30*time.Second, "the wiped server back under a new id", func() error {
		v := voters(t, c)
		if len(v) != 3 {
			return fmt.Errorf("%+v", v)
		}
		for _, s := range v {
			if s.ID == oldID {
				return fmt.Errorf("old id %s still in %+v", oldID, v)
			}
		}
		return nil
	})
	waitStaleNames(t, c, f, "kept")
}

// TestRestartedServerCatchesUp: a follower restarted on its data dir after
// writes it missed rejoins by itself and catches up.
func TestRestartedServerCatchesUp(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	l := c.Leader()
	f := c.Follower(l)
	register(t, api.NewClient(c.Addr(l)), "early")
	waitStaleNames(t, c, f, "early")
	c.Stop(f)
	register(t, api.NewClient(c.Addr(l)), "missed")
	c.StartServer(f)
	waitStaleNames(t, c, f, "early", "missed")
	if v := voters(t, c); len(v) != 3 {
		t.Fatalf("voters after a restart: %+v", v)
	}
}

// TestLeaderFailoverThroughClient: with the leader stopped, a client that
// knows every server gets its write acknowledged by the new leader.
func TestLeaderFailoverThroughClient(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	l := c.Leader()
	cl := api.NewClientFor(c.Addrs())
	register(t, cl, "before")
	c.Stop(l)
	// The stopping leader may close a kept-alive connection under a write
	// just sent (EOF): its outcome is unknown, and the caller, not the
	// client, decides to send it again. Registering one spec twice is
	// harmless, so the test does, as a user would rerun `strata run`.
	_, err := cl.RegisterWorkload(context.Background(), []byte(fmt.Sprintf(tinyWorkload, "after")))
	if errors.Is(err, api.ErrOutcomeUnknown) {
		t.Logf("first attempt: %v; sending it again", err)
		_, err = cl.RegisterWorkload(context.Background(), []byte(fmt.Sprintf(tinyWorkload, "after")))
	}
	if err != nil {
		t.Fatalf("register after: %v", err)
	}
	nl := c.Leader()
	if nl == l {
		t.Fatalf("server %d leads after it stopped", l+1)
	}
	waitStaleNames(t, c, nl, "before", "after")
}

// TestRemovePeer: a server that is gone is removed by address; an unknown
// one is a 404 that names the servers there are.
func TestRemovePeer(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	l := c.Leader()
	f := c.Follower(l)
	c.Stop(f)
	cl := api.NewClientFor(c.Addrs())
	out, err := cl.RemoveRaftPeer(context.Background(), c.Configs[f].RaftAddr)
	if err != nil || out.Removed.Address != c.Configs[f].RaftAddr {
		t.Fatalf("remove-peer: %+v %v", out, err)
	}
	if v := voters(t, c); len(v) != 2 {
		t.Fatalf("voters after remove-peer: %+v", v)
	}
	_, err = cl.RemoveRaftPeer(context.Background(), "no-such-server")
	var e *api.Error
	if !errors.As(err, &e) || e.StatusCode != http.StatusNotFound || !bytes.Contains([]byte(e.Message), []byte(c.Configs[l].RaftAddr)) {
		t.Fatalf("remove-peer of an unknown server: %v", err)
	}
	// The cell still commits with two voters.
	register(t, cl, "after-remove")
}

// TestSnapshotSaveAndRestore: a saved snapshot restores the state it was
// taken at on every server; a damaged file is refused and changes nothing.
func TestSnapshotSaveAndRestore(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	c.Leader()
	cl := api.NewClientFor(c.Addrs())
	register(t, cl, "saved")
	var file bytes.Buffer
	if _, err := cl.SaveSnapshot(context.Background(), &file); err != nil {
		t.Fatal(err)
	}
	info, err := replica.CheckSnapshotFile(bytes.NewReader(file.Bytes()))
	if err != nil || info.Index == 0 {
		t.Fatalf("saved snapshot: %+v %v", info, err)
	}
	register(t, cl, "later")

	damaged := bytes.Clone(file.Bytes())
	damaged[len(damaged)-10] ^= 0x20
	for name, body := range map[string][]byte{
		"flipped byte": damaged,
		"truncated":    file.Bytes()[:file.Len()/2],
		"not a file":   []byte("hello\n"),
	} {
		_, err := cl.RestoreSnapshot(context.Background(), func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil })
		var e *api.Error
		if !errors.As(err, &e) || e.StatusCode != http.StatusBadRequest || e.Code != "bad-snapshot" {
			t.Fatalf("restore of a %s file: %v, want 400 bad-snapshot", name, err)
		}
	}
	for i := range c.Servers {
		waitStaleNames(t, c, i, "saved", "later")
	}

	path := filepath.Join(t.TempDir(), "backup.snap")
	if err := os.WriteFile(path, file.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.RestoreSnapshot(context.Background(), func() (io.ReadCloser, error) { return os.Open(path) }); err != nil {
		t.Fatalf("restore: %v", err)
	}
	for i := range c.Servers {
		waitStaleNames(t, c, i, "saved")
	}
	// The restored cell takes writes.
	register(t, cl, "after-restore")
}

// TestLostQuorum: with two of three servers gone, the survivor stops
// acknowledging writes (503 not-leader once the hold for a leader is over,
// no-quorum once it has known no leader for long, never a success), and
// still lists the cell's servers with ?stale, for the operator working out
// what happened.
func TestLostQuorum(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	l := c.Leader()
	survivor := c.Follower(l)
	c.WaitReady(survivor)
	for i := range c.Servers {
		if i != survivor {
			c.Stop(i)
		}
	}
	cl := api.NewClient(c.Addr(survivor))
	cl.RetryFor = time.Second
	// Right after the stops the survivor may still forward to the old
	// leader over a connection it had open, which fails mid-request
	// ("forward-failed": the outcome is unknown to it, though a stopped
	// leader applied nothing). Once it knows there is no leader it must
	// answer not-leader; it must never acknowledge the write.
	var err error
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err = cl.RegisterWorkload(context.Background(), []byte(fmt.Sprintf(tinyWorkload, "lost")))
		var e *api.Error
		if err == nil || !errors.As(err, &e) || e.Code != "forward-failed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// not-leader, or no-quorum once the survivor has known no leader for
	// NoQuorumAfter: both say the write was not applied.
	var e *api.Error
	if !errors.As(err, &e) || (e.Code != "not-leader" && e.Code != api.CodeNoQuorum) {
		t.Fatalf("a write without a quorum: %v, want 503 not-leader or no-quorum", err)
	}
	conf, err := cl.RaftConfiguration(context.Background(), &api.Query{Stale: true})
	if err != nil || len(conf.Servers) != 3 {
		t.Fatalf("stale raft configuration without a quorum: %+v %v", conf, err)
	}
}

// TestForwardedRequestsOutliveTheAPITimeouts: a blocking query that waits
// longer than the API's write timeout, sent to a follower, is answered when
// its wait ends rather than cut by the follower's own timeouts.
func TestForwardedRequestsOutliveTheAPITimeouts(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, func(_ int, cfg *server.Config) {
		cfg.HTTP.WriteTimeout = 300 * time.Millisecond
		cfg.HTTP.ReadTimeout = 300 * time.Millisecond
	})
	l := c.Leader()
	f := c.Follower(l)
	follower := api.NewClient(c.Addr(f))
	_, meta, err := follower.Nodes(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	follower.RetryFor = time.Millisecond // one attempt: a cut answer must not be retried away
	start := time.Now()
	_, _, err = follower.Nodes(context.Background(), &api.Query{Index: meta.Index, Wait: 1500 * time.Millisecond})
	if took := time.Since(start); err != nil || took < 1400*time.Millisecond {
		t.Fatalf("a 1.5s blocking query through a follower with a 300ms write timeout: %v after %v", err, took)
	}
}
