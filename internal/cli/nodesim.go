package cli

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/nodesim"
	"github.com/strata-dev/strata/internal/pki"
	"github.com/strata-dev/strata/internal/resources"
	"github.com/strata-dev/strata/internal/spec"
)

type nodesimFlags struct {
	servers              []string
	count                int
	prefix               string
	cpu, memory, disk    string
	numa, zones, racks   int
	labels               []string
	workers, maxConns    int
	registerWorkers      int
	watch                bool
	watchWait, duration  time.Duration
	progressEvery        time.Duration
	runningLog, logLevel string
	joinToken            string
	secretsFile          string
	tls                  tlsFlags
}

func newNodesimCmd(g *globals) *cobra.Command {
	var f nodesimFlags
	cmd := &cobra.Command{
		Use:   "nodesim",
		Short: "Run thousands of simulated node agents against a cell, for control-plane scale tests",
		Long: `Run --count simulated node agents in this one process against a real cell.

Every simulated node speaks the agents' own protocol, through the same client
code the agent uses: it registers (a synthetic node: --cpu, --memory, --numa,
zone and rack labels), heartbeats at the interval the server asks for (a large
cell asks for less, so its heartbeat rate stays under the server's
--max-heartbeats-per-second), watches its allocations with blocking queries,
"runs" them on the mock driver (whatever driver a task names; MOCK_RUN_FOR in a
task's env makes it end by itself) and reports them running, and complete when
the server says stop. Nothing real is started and nothing is written.

Node ids are --prefix-000000 upwards and stable: run nodesim again with the
same prefix and the same nodes come back rather than new ones. Like an agent,
each node registers with a secret of its own, which the server holds its id
to; nodesim keeps them in --secrets-file (default
strata-data/nodesim/PREFIX.secrets, 0600). Delete it to start over with new
nodes, under another prefix (the ids of the old secrets stay taken).

Credentials: run from the directory a 'strata dev' cell was started in,
nodesim finds the cell's CA and agent certificate (strata-data/tls) and its
join token (strata-data/server/join-token) by itself, as the CLI does; else
give --tls-* and --join-token (or --insecure-plaintext for a plaintext cell).

Connections: registrations (--register-workers at a time) and heartbeats
(--workers at a time) go over one shared HTTP transport. With --watch (the default)
every node also holds one blocking query, one connection, as a real agent
does; the server then needs --http-max-conns-per-client -1 (its default caps
one client address at 256 connections) and a file descriptor limit well
above --count (ulimit -n; its total cap, --http-max-conns, defaults to three
quarters of it), and so does nodesim. nodesim opens at most --count +
--workers + --register-workers connections (--max-conns). With --watch=false
it uses at most --workers + --register-workers (128 by default) and stays
under the per-client cap.

A progress line goes to stderr every --progress-every, with nodesim's own CPU
and memory (so that the server's share of a machine both run on is known)
and, for each kind of request that failed, its most frequent cause; the first
failure of each cause is logged at warn. Ctrl-C stops the nodes (the server
marks them down after their TTL) and prints the totals, as JSON with -o json.`,
		Example: `  # a cell that accepts many connections from one address
  ulimit -n 65536
  strata server --data-dir /tmp/s1 --http-max-conns-per-client -1 &
  # 10,000 nodes of 16 cores and 64 GiB on 2 NUMA nodes over 3 zones
  strata nodesim --servers 127.0.0.1:4680 --count 10000 --numa 2 --zones 3 --racks 100
  # registration and heartbeats only, within the default connection cap
  strata nodesim --count 100000 --watch=false --duration 5m -o json
  # record when each allocation was reported running (CSV), for latency figures
  strata nodesim --count 10000 --running-log running.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			return runNodesim(cmd.Context(), g, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.servers, "servers", nil, "server addresses (comma-separated or repeated; default --addr, $STRATA_ADDR or "+api.DefaultAddr+")")
	fl.IntVar(&f.count, "count", 1000, "number of simulated nodes")
	fl.StringVar(&f.prefix, "prefix", "sim", "node id prefix: nodes are PREFIX-000000, PREFIX-000001, ...")
	fl.StringVar(&f.cpu, "cpu", "16", "CPU of each node: cores (16, 0.5) or millicores (16000m)")
	fl.StringVar(&f.memory, "memory", "64Gi", "memory of each node (64Gi, 512Mi)")
	fl.StringVar(&f.disk, "disk", "500Gi", "disk of each node")
	fl.IntVar(&f.numa, "numa", 1, "NUMA nodes per node; the cores and memory are split evenly")
	fl.IntVar(&f.zones, "zones", 0, "spread the nodes round-robin over this many zone labels (zone-0, ...); 0: no zone label")
	fl.IntVar(&f.racks, "racks", 0, "spread the nodes round-robin over this many rack labels (rack-0, ...); 0: no rack label")
	fl.StringArrayVar(&f.labels, "label", nil, "label key=value on every node (repeatable)")
	fl.IntVar(&f.workers, "workers", 64, "heartbeats in flight at once")
	fl.IntVar(&f.registerWorkers, "register-workers", 64, "registrations in flight at once (their own pool, so registering never delays heartbeats)")
	fl.IntVar(&f.maxConns, "max-conns", 0, "most connections to each server (0: --workers + --register-workers, plus --count with --watch: what can be in flight)")
	fl.BoolVar(&f.watch, "watch", true, "watch allocations (one blocking query per node) and run them; false: register and heartbeat only")
	fl.DurationVar(&f.watchWait, "watch-wait", 30*time.Second, "wait of each blocking query, as the agent's")
	fl.DurationVar(&f.duration, "duration", 0, "stop after this long (0: run until interrupted)")
	fl.DurationVar(&f.progressEvery, "progress-every", 5*time.Second, "how often a progress line goes to stderr (0: never)")
	fl.StringVar(&f.runningLog, "running-log", "", "append one CSV line per allocation reported running: alloc id, workload, node, created (RFC 3339), running (RFC 3339)")
	fl.StringVar(&f.joinToken, "join-token", os.Getenv("STRATA_JOIN_TOKEN"), "the cell's join token, which every simulated node registers with (default $STRATA_JOIN_TOKEN, else a dev cell's strata-data/server/join-token; a server writes it to <data-dir>/join-token)")
	fl.StringVar(&f.secretsFile, "secrets-file", "", "where the nodes' secrets are kept, so that the same prefix brings the same nodes back (default strata-data/nodesim/PREFIX.secrets)")
	f.tls.register(cmd, "the simulated agents")
	fl.StringVar(&f.logLevel, "log-level", "warn", "debug (every failed request), info, warn or error")
	addOutputFlag(cmd, g)
	return cmd
}

func (f *nodesimFlags) config(g *globals) (nodesim.Config, error) {
	cfg := nodesim.Config{Count: f.count, Prefix: f.prefix, Workers: f.workers, RegisterWorkers: f.registerWorkers, Watch: f.watch, WatchWait: f.watchWait, MaxConns: f.maxConns,
		JoinToken: f.joinToken}
	files, err := f.tls.filesOrDev(pki.RoleAgent)
	if err != nil {
		return cfg, err
	}
	if cfg.JoinToken == "" {
		// A dev cell started in this directory: its join token.
		if cfg.JoinToken, err = devJoinTokenIfAny(); err != nil {
			return cfg, err
		}
	}
	if files != nil {
		if err := files.Check(pki.RoleAgent); err != nil {
			return cfg, failf("TLS: %v", err)
		}
		if cfg.TLS, err = files.ClientConfig(pki.RoleServer); err != nil {
			return cfg, failf("TLS: %v", err)
		}
	}
	if cfg.Servers = f.servers; len(cfg.Servers) == 0 {
		cfg.Servers = api.NewClient(g.addr).Addrs()
		if cfg.TLS != nil && g.addr == "" && os.Getenv("STRATA_ADDR") == "" {
			cfg.Servers = []string{"https://" + strings.TrimPrefix(api.DefaultAddr, "http://")}
		}
	}
	if f.count <= 0 {
		return cfg, failf("--count: must be positive, got %d", f.count)
	}
	if f.workers <= 0 {
		return cfg, failf("--workers: must be positive, got %d", f.workers)
	}
	if f.registerWorkers <= 0 {
		return cfg, failf("--register-workers: must be positive, got %d", f.registerWorkers)
	}
	if problem := spec.CheckID(nodesim.NodeID(f.prefix, 0)); problem != "" {
		return cfg, failf("--prefix %q: %s", f.prefix, problem)
	}
	if f.secretsFile == "" {
		f.secretsFile = defaultSecretsFile(f.prefix)
	}
	if cfg.Secrets, err = loadNodeSecrets(f.secretsFile, f.prefix, f.count); err != nil {
		return cfg, err
	}
	if cfg.Shape.CPUMilli, err = parseCPUTotal(f.cpu); err != nil || cfg.Shape.CPUMilli <= 0 {
		return cfg, failf("--cpu %q: want cores (16) or millicores (16000m)", f.cpu)
	}
	if cfg.Shape.MemoryBytes, err = resources.ParseBytes(f.memory); err != nil || cfg.Shape.MemoryBytes <= 0 {
		return cfg, failf("--memory %q: want a size such as 64Gi", f.memory)
	}
	if cfg.Shape.DiskBytes, err = resources.ParseBytes(f.disk); err != nil || cfg.Shape.DiskBytes <= 0 {
		return cfg, failf("--disk %q: want a size such as 500Gi", f.disk)
	}
	for _, o := range []struct {
		name string
		v    int
	}{{"--numa", f.numa}, {"--zones", f.zones}, {"--racks", f.racks}} {
		if o.v < 0 {
			return cfg, failf("%s: must not be negative, got %d", o.name, o.v)
		}
	}
	cfg.Shape.NUMA, cfg.Shape.Zones, cfg.Shape.Racks = f.numa, f.zones, f.racks
	cfg.Shape.Labels = map[string]string{}
	for _, l := range f.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return cfg, failf("--label %q: want key=value", l)
		}
		if problem := spec.CheckLabelKey(k); problem != "" {
			return cfg, failf("--label %q: %s", l, problem)
		}
		if problem := spec.CheckLabelValue(v); problem != "" {
			return cfg, failf("--label %q: %s", l, problem)
		}
		cfg.Shape.Labels[k] = v
	}
	return cfg, nil
}

func runNodesim(ctx context.Context, g *globals, f *nodesimFlags) error {
	cfg, err := f.config(g)
	if err != nil {
		return err
	}
	if cfg.Logger, err = newLogger(f.logLevel, os.Stderr); err != nil {
		return err
	}
	if f.runningLog != "" {
		file, err := os.OpenFile(f.runningLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return failf("--running-log: %v", err)
		}
		defer file.Close()
		// Flushed line by line, so a benchmark can follow it while it grows.
		w := csv.NewWriter(file)
		var mu sync.Mutex
		cfg.OnRunning = func(a *api.Allocation, at time.Time) {
			mu.Lock()
			defer mu.Unlock()
			w.Write([]string{a.ID, a.Workload, a.NodeID, a.CreateTime.Format(time.RFC3339Nano), at.Format(time.RFC3339Nano)})
			w.Flush()
		}
	}
	sim, err := nodesim.New(cfg)
	if err != nil {
		return failf("%v", err)
	}
	// Kept before the first registration: a node registered with a secret
	// that was then lost could never come back.
	if err := saveNodeSecrets(f.secretsFile, cfg.Prefix, sim.Secrets()); err != nil {
		return err
	}
	if f.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	fmt.Fprintf(g.stderr, "nodesim: %d nodes (%s) against %s, %d workers, watch %v\n",
		cfg.Count, nodesim.NodeID(cfg.Prefix, 0)+"..", strings.Join(cfg.Servers, ","), cfg.Workers, cfg.Watch)
	done := make(chan struct{})
	go func() {
		defer close(done)
		progress(ctx, g, sim, f.progressEvery, cfg.Count)
	}()
	err = sim.Run(ctx)
	<-done
	st := sim.Stats()
	if g.structured() {
		return g.printData(st)
	}
	fmt.Fprintln(g.stdout, st.Line(nodesim.Snapshot{}))
	return err
}

// progress prints a line every every, and once when every node has
// registered (with how long it took).
func progress(ctx context.Context, g *globals, sim *nodesim.Sim, every time.Duration, count int) {
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	var prev nodesim.Snapshot
	lastLine, allRegistered := time.Now(), false
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		}
		st := sim.Stats()
		if !allRegistered && st.Registered == int64(count) {
			allRegistered = true
			fmt.Fprintf(g.stderr, "nodesim: all %d nodes registered in %s\n", count, strconv.FormatFloat(st.Elapsed.Seconds(), 'f', 1, 64)+"s")
		}
		if every > 0 && time.Since(lastLine) >= every {
			fmt.Fprintln(g.stderr, st.Line(prev))
			prev, lastLine = st, time.Now()
		}
	}
}
