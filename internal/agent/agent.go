package agent

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/exec"
	"github.com/strata-dev/strata/internal/agent/fingerprint"
	"github.com/strata-dev/strata/internal/agent/migrate"
	"github.com/strata-dev/strata/internal/agent/state"
	"github.com/strata-dev/strata/internal/backoff"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/pki"
)

// Agent is one node's agent. Create it with New, which prepares and
// starts nothing, and run it with Run(ctx), which owns everything the
// agent runs until ctx is done and returns once all of it ended (the
// tasks run on).
//
// Lock order. A lock may be taken while holding those listed before it,
// never the reverse, and none is held across file or bbolt I/O, a
// driver's call, a hook or a send to the server:
//
//	coreKeeper.mu    the shared-core rewrite; reads the reservations (below)
//	Agent.mu         allocs, dirty, lastSent, orphans: map work only
//	allocRunner.mu   the server's copy, forgotten, migrating, incoming
//	taskRunner.mu    the task's state and handle
//
// Leaves, taken with nothing else held and holding nothing: cellGuard.mu,
// leaseKeeper.mu, migrate.Holds, resizeHook.mu. allocRunner.persistMu
// orders one allocation's bbolt writes; it is taken with no lock held and
// takes allocRunner.mu (then taskRunner.mu) only to copy the record.
type Agent struct {
	cfg Config
	// oomKills counts the tasks the kernel killed for memory (metrics.go).
	oomKills *prometheus.CounterVec
	log      *slog.Logger
	nodeID   string
	// nodeSecret proves the node (identity.go); it is never logged.
	nodeSecret string
	node       *api.Node // fingerprinted; HTTPAddr is set by Run
	devNodes   deviceNodes
	// migrator runs the node's side of migrations (package migrate).
	migrator *migrate.Migrator

	// drivers are the node's task drivers with their capabilities
	// (driverset.go).
	drivers *drivers.Set

	// Set by Run.
	ctx context.Context
	db  *state.DB
	wg  sync.WaitGroup

	mu       sync.Mutex
	allocs   map[string]*allocRunner
	dirty    map[string]bool
	lastSent map[string]string
	// orphans are tasks and cgroups found on the host at start that no
	// record names, by allocation, until the first allocation list
	// settles them (orphans.go).
	orphans map[string][]exec.Orphan

	dirtyCh    chan struct{}
	registerCh chan struct{}

	cell cellGuard // the cell this node belongs to; refusals

	// lease is the node's lease (lease.go); reconnected is signalled when a
	// heartbeat succeeds after failures, so the watch asks again at once.
	lease       *leaseKeeper
	reconnected chan struct{}

	// cores keeps exclusive cores out of shared tasks' cpusets
	// (sharedcores.go); nil without cgroups.
	cores *coreKeeper
	// statDisk reads a file system's free and total bytes
	// (diskpressure.go); tests replace it.
	statDisk func(path string) (free, total int64, err error)
}

// New fingerprints the node, loads (or creates) its identity in DataDir,
// probes criu and makes the drivers (a containerd driver connects to its
// daemon). It starts no goroutine and no task; what it holds, Run
// releases when it returns, so an agent is always run once New succeeded.
func New(cfg Config) (*Agent, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "allocs"), 0o755); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	id, secret, err := LoadIdentity(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	a := &Agent{
		cfg: cfg, nodeID: id, nodeSecret: secret,
		oomKills:    newOOMKills(),
		log:         cfg.Logger.With("node_id", id),
		allocs:      map[string]*allocRunner{},
		dirty:       map[string]bool{},
		lastSent:    map[string]string{},
		dirtyCh:     make(chan struct{}, 1),
		registerCh:  make(chan struct{}, 1),
		lease:       newLeaseKeeper(drivers.BootClock),
		reconnected: make(chan struct{}, 1),
		statDisk:    statDisk,
	}
	ckpt := a.probeCheckpoint()
	a.loadDrivers(ckpt.CriuPath)
	if a.node, err = a.fingerprint(); err != nil {
		a.drivers.Close()
		return nil, err
	}
	a.node.Checkpoint = ckpt.Attr
	if ckpt.Attr.Available {
		ckpt.Attr.Drivers = a.memoryKeepingDrivers()
	}
	a.newMigrator(ckpt)
	a.cores = newCoreKeeper(cfg.CgroupRoot, cfg.CgroupParent, a.node.NUMA, a.log)
	return a, nil
}

// NodeID is the node's stable identity, kept in DataDir.
func (a *Agent) NodeID() string { return a.nodeID }

// Node returns a copy of the node as the agent registers it.
func (a *Agent) Node() *api.Node {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.node.Copy()
}

func (a *Agent) fingerprint() (*api.Node, error) {
	fp, err := fingerprint.Fingerprint(context.Background(), fingerprint.Options{
		SysRoot: a.cfg.SysRoot, ProcRoot: a.cfg.ProcRoot, DataDir: a.cfg.DataDir, GPUCommand: a.cfg.GPUCommand,
	})
	if err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	var devCfg *fingerprint.DeviceConfig
	if a.cfg.DevicesConfig != "" {
		if devCfg, err = fingerprint.LoadDeviceConfig(a.cfg.DevicesConfig); err != nil {
			return nil, fmt.Errorf("fingerprint: %w", err)
		}
	}
	devices, err := fingerprint.Devices(a.cfg.SysRoot, devCfg)
	if err != nil {
		return nil, fmt.Errorf("fingerprint devices: %w", err)
	}
	n := &api.Node{
		ID: a.nodeID, Name: a.cfg.Name, Status: api.NodeReady, Devices: devices,
		Labels:  map[string]string{api.LabelNode: a.cfg.Name},
		Drivers: a.driverNames(),
		NUMA:    fp.NUMA, GPUs: fp.GPUs,
		DynamicPorts: a.cfg.DynamicPorts,
		Capacity: api.Resources{
			CPUMilli:    int64(fp.CPUs) * 1000,
			MemoryBytes: fp.MemoryBytes,
			DiskBytes:   fp.DiskBytes,
			GPUs:        int64(len(fp.GPUs)),
			NetMbps:     a.cfg.NetMbps,
		},
	}
	a.hardwareFacts(n, fp)
	for k, v := range a.cfg.Labels {
		n.Labels[k] = v
	}
	a.driverLabels(n.Labels)
	devRoot, procRoot := a.cfg.DevRoot, a.cfg.ProcRoot
	if devRoot == "" {
		devRoot = "/dev"
	}
	if procRoot == "" {
		procRoot = "/proc"
	}
	a.devNodes = newDeviceNodes(n, devRoot, procRoot)
	for _, o := range []struct {
		flag int64
		dst  *int64
	}{{a.cfg.CPUTotal, &n.Capacity.CPUMilli}, {a.cfg.MemoryTotal, &n.Capacity.MemoryBytes}, {a.cfg.DiskTotal, &n.Capacity.DiskBytes}} {
		if o.flag > 0 {
			*o.dst = o.flag
		}
	}
	return n, nil
}

// driverNames lists the drivers the node offers, sorted.
func (a *Agent) driverNames() []string { return a.drivers.Names() }

// loadNodeID reads DataDir/node-id, creating it with a new UUID once.
func loadNodeID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "node-id")
	data, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(data))) > 0 {
		return strings.TrimSpace(string(data)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read node id: %w", err)
	}
	id := newUUID()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("write node id: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write node id: %w", err)
	}
	return id, nil
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Run serves until ctx is done: it re-attaches to the tasks of a previous
// run, registers the node, heartbeats, watches allocations, reports their
// status and runs the drivers' background work. It returns once every
// goroutine it or a driver started has ended and the drivers are closed
// (TestRunLeavesNoGoroutine); the tasks keep running.
func (a *Agent) Run(ctx context.Context) error {
	// The drivers New made are Run's from here: closed whichever way it
	// returns.
	defer a.drivers.Close()
	db, err := state.Open(filepath.Join(a.cfg.DataDir, "agent.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	a.db, a.ctx = db, ctx
	mem, err := db.Cell()
	if err != nil {
		return err
	}
	a.cell.mu.Lock()
	a.cell.mem, a.cell.persisted, a.cell.joinNew = mem, mem, a.cfg.JoinNewCell
	a.cell.mu.Unlock()

	ln, err := net.Listen("tcp", a.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("agent http listen %s: %w", a.cfg.HTTPAddr, err)
	}
	var served net.Listener = httplimit.Listen(ln, a.cfg.HTTP, a.log)
	scheme := "http://"
	if a.cfg.TLS != nil {
		// Mutual TLS with a certificate of the cell: servers (logs, on
		// top of the request signature of identity.go), agents (migration
		// images) and scrapers (/metrics alone); each route says which
		// (http.go).
		cfg, err := a.cfg.TLS.ServerConfig(true, pki.RoleServer, pki.RoleAgent, pki.RoleScrape)
		if err != nil {
			ln.Close()
			return fmt.Errorf("agent TLS: %w", err)
		}
		served, scheme = tls.NewListener(served, cfg), "https://"
	}
	a.mu.Lock()
	a.node.HTTPAddr = scheme + ln.Addr().String()
	a.mu.Unlock()
	srv := httplimit.NewServer(a.routes(), a.cfg.HTTP)
	go srv.Serve(served)

	if err := a.restore(); err != nil {
		srv.Close()
		return err
	}
	if err := a.findOrphans(); err != nil {
		// Not fatal: the tasks it knows still need their agent.
		a.log.Error("cannot reconcile with the host", "err", err)
	}
	a.checkDisk()
	a.log.Info("agent running", "http", a.node.HTTPAddr, "allocs", len(a.allocs))
	for _, loop := range []func(context.Context){a.registerLoop, a.watchLoop, a.syncLoop, a.diskLoop, a.drivers.Run} {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			loop(ctx)
		}()
	}
	<-ctx.Done()
	// Log followers see the task runners stop; in-flight streams end here.
	srv.Close()
	a.wg.Wait()
	a.log.Info("agent stopped; tasks keep running")
	return nil
}

// restore re-creates the runners of the allocations in the database. Live
// tasks are re-attached by their task runners, not restarted.
func (a *Agent) restore() error {
	recs, err := a.db.Allocs()
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, rec := range recs {
		keep[rec.Alloc.ID] = true
	}
	a.migrator.Images().Sweep(keep)
	for _, rec := range recs {
		ar, err := a.newAllocRunner(rec.Alloc, rec)
		if err == nil {
			err = ar.prepare()
		}
		if err != nil {
			a.log.Error("drop unrestorable alloc", "alloc", rec.Alloc.ID, "err", err)
			a.db.DeleteAlloc(rec.Alloc.ID)
			continue
		}
		if a.settleMigrationAtStart(ar) {
			a.db.DeleteAlloc(rec.Alloc.ID)
			os.RemoveAll(ar.dir)
			a.migrator.Images().Remove(ar.id())
			continue
		}
		a.mu.Lock()
		a.allocs[ar.id()] = ar
		a.dirty[ar.id()] = true
		a.mu.Unlock()
		ar.start()
		if rec.Alloc.DesiredStatus == api.DesiredStop {
			ar.stop()
		}
	}
	// Recovered tasks keep the cpusets they had; the pool may have changed
	// while the agent was down.
	a.syncSharedCores()
	a.kick(a.dirtyCh)
	return nil
}

func (a *Agent) kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// markDirty schedules a status report for an allocation.
func (a *Agent) markDirty(id string) {
	a.mu.Lock()
	a.dirty[id] = true
	a.mu.Unlock()
	a.kick(a.dirtyCh)
}

// sleepCtx waits d or until ctx is done; it reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool { return backoff.Sleep(ctx, d) }

// retryBackoff is the agent's next wait after d (0 before the first):
// jittered between 100ms and 5s (internal/backoff), so that agents that
// lost their server together do not come back in step.
func retryBackoff(d time.Duration) time.Duration {
	return backoff.Policy{Base: 100 * time.Millisecond, Max: 5 * time.Second}.Next(d)
}
