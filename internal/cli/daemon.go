package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent"
	"github.com/strata-dev/strata/internal/gc"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/pki"
	"github.com/strata-dev/strata/internal/quarantine"
	"github.com/strata-dev/strata/internal/resources"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/spec"
)

type serverFlags struct {
	dataDir         string
	httpAddr        string
	raftAddr        string
	raftAdvertise   string
	bootstrapExpect int
	join            []string
	raftMultiplier  int
	heartbeatTTL    time.Duration
	heartbeats      heartbeatFlags
	workers         int
	logLevel        string
	keyringFile     string
	joinToken       string
	acl             bool
	allowAnonymous  bool
	tls             tlsFlags
	http            httpLimitFlags
	autoQuarantine  bool
	gc              gc.Policy
}

// httpLimitFlags set an HTTP server's timeouts and connection caps
// (docs/limits.md); prefix tells the server's (--http-…) from the agent's
// (--agent-http-…).
type httpLimitFlags struct{ c httplimit.Config }

func (f *httpLimitFlags) register(cmd *cobra.Command, prefix, whose string) {
	fl := cmd.Flags()
	fl.DurationVar(&f.c.ReadHeaderTimeout, prefix+"read-header-timeout", httplimit.DefaultReadHeaderTimeout,
		"longest a client may take to send a request's headers to "+whose+" (negative: no limit)")
	fl.DurationVar(&f.c.ReadTimeout, prefix+"read-timeout", httplimit.DefaultReadTimeout,
		"longest a client may take to send a whole request, body included (negative: no limit)")
	fl.DurationVar(&f.c.WriteTimeout, prefix+"write-timeout", httplimit.DefaultWriteTimeout,
		"longest a response may take to be written; blocking queries add their wait, log streams apply it per write (negative: no limit)")
	fl.DurationVar(&f.c.IdleTimeout, prefix+"idle-timeout", httplimit.DefaultIdleTimeout,
		"how long an idle keep-alive connection is kept (negative: no limit)")
	fl.IntVar(&f.c.MaxConnsPerClient, prefix+"max-conns-per-client", httplimit.DefaultMaxConnsPerClient,
		"most open connections from one client address; more are answered 429 (negative: no cap)")
	fl.IntVar(&f.c.MaxConns, prefix+"max-conns", 0,
		"most open connections in all; more are answered 503 (0: three quarters of the file descriptor limit; negative: no cap)")
}

func (f *serverFlags) register(cmd *cobra.Command, defaultDataDir string) {
	cmd.Flags().StringVar(&f.dataDir, "data-dir", defaultDataDir, "directory for the raft log, snapshots and server identity")
	cmd.Flags().StringVar(&f.httpAddr, "http-addr", "127.0.0.1:4680", "address of the HTTP API")
	cmd.Flags().StringVar(&f.raftAddr, "raft-addr", "", "server port, where the servers of a cell reach each other (raft and forwarded requests); empty: a lone server that can never grow a cell")
	cmd.Flags().StringVar(&f.raftAdvertise, "raft-advertise", "", "address other servers dial to reach this one (default --raft-addr, which must then be a concrete IP)")
	cmd.Flags().IntVar(&f.bootstrapExpect, "bootstrap-expect", 0, "form a new cell of this many servers once they have found each other through --join (give every one the same number: 3 or 5)")
	cmd.Flags().StringSliceVar(&f.join, "join", nil, "another server's --raft-addr, to find the cell (repeatable or comma-separated); a server that is not in the cell asks its leader to add it")
	cmd.Flags().IntVar(&f.raftMultiplier, "raft-multiplier", 1, "scale raft's timeouts (1: a new leader within about 1-2s of losing one); raise it on slow or overloaded machines")
	cmd.Flags().DurationVar(&f.heartbeatTTL, "heartbeat-ttl", 10*time.Second, "how long a node may miss heartbeats before it is marked down and its work replaced (the least: a large cell's TTL is 3 of its heartbeat intervals)")
	f.heartbeats.register(cmd)
	cmd.Flags().IntVar(&f.workers, "workers", 0, "parallel scheduler workers (default: number of CPUs)")
	cmd.Flags().StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	cmd.Flags().StringVar(&f.keyringFile, "keyring-file", "", "keys that seal workload secrets (default <data-dir>/keyring.json, created on first start); every server of a cell needs the same file (see strata keyring --help)")
	cmd.Flags().StringVar(&f.joinToken, "join-token", os.Getenv("STRATA_JOIN_TOKEN"),
		"the cell's join token, which agents register new nodes with (default $STRATA_JOIN_TOKEN; empty: the cell keeps its own, or its first leader makes one); give every server the same one, and a new one to rotate it. Every server writes the cell's token to <data-dir>/join-token")
	f.tls.register(cmd, "the server")
	cmd.Flags().BoolVar(&f.acl, "acl", false, "turn ACLs on: every request but the status endpoints needs a token (strata acl bootstrap; docs/security.md); give every server the same setting")
	cmd.Flags().BoolVar(&f.allowAnonymous, "insecure-allow-anonymous", os.Getenv("STRATA_INSECURE_ALLOW_ANONYMOUS") == "1",
		"without --acl, let callers who prove nothing use the API: anyone who reaches --http-addr can list, run and stop anything (tests only; default $STRATA_INSECURE_ALLOW_ANONYMOUS=1). Without it a server needs --acl, or TLS, whose users then need a client certificate of the cell")
	f.http.register(cmd, "http-", "the API")
	cmd.Flags().BoolVar(&f.autoQuarantine, "auto-quarantine", true, "let the leader quarantine nodes whose allocations fail far more often than the cell's, or whose heartbeats flap (docs/nodes.md)")
	cmd.Flags().BoolVar(&f.gc.Off, "gc-off", false, "keep finished allocations, evaluations and deployments for ever (docs/gc.md)")
	cmd.Flags().DurationVar(&f.gc.Allocations, "gc-alloc-retention", gc.DefaultAllocations, "how long a finished allocation is kept after it ended (at least the automatic quarantine's 30m window)")
	cmd.Flags().DurationVar(&f.gc.Evaluations, "gc-eval-retention", gc.DefaultEvaluations, "how long a finished evaluation is kept (a workload's newest always is)")
	cmd.Flags().DurationVar(&f.gc.Deployments, "gc-deployment-retention", gc.DefaultDeployments, "how long a finished deployment is kept (a workload's newest always is)")
}

func (f *serverFlags) config(logger *slog.Logger) (server.Config, error) {
	files, err := f.tls.files()
	if err == nil && files == nil && !f.acl && !f.allowAnonymous {
		// Secure by default (issue 18, defect 11): a server that would
		// authenticate nobody starts only when told so.
		err = failf("--insecure-plaintext without --acl authenticates nobody: anyone who reaches %s could list, run and stop anything. "+
			"Turn ACLs on (--acl), or use TLS, whose users then need a client certificate of the cell; or, for a test, say --insecure-allow-anonymous", f.httpAddr)
	}
	return server.Config{TLS: files, DataDir: f.dataDir, HTTPAddr: f.httpAddr, RaftAddr: f.raftAddr, RaftAdvertise: f.raftAdvertise,
		BootstrapExpect: f.bootstrapExpect, Join: f.join, RaftMultiplier: f.raftMultiplier,
		HeartbeatTTL: f.heartbeatTTL, HeartbeatInterval: f.heartbeats.interval, MaxHeartbeatsPerSecond: f.heartbeats.maxPerSecond,
		Workers: f.workers, Logger: logger, HTTP: f.http.c, KeyringFile: f.keyringFile, JoinToken: f.joinToken, ACL: f.acl,
		AllowAnonymous: f.allowAnonymous, AutoQuarantine: quarantine.Policy{Off: !f.autoQuarantine}, GC: f.gc}, err
}

type agentFlags struct {
	servers         []string
	dataDir         string
	name            string
	httpAddr        string
	labels          []string
	cpuTotal        string
	memoryTotal     string
	diskTotal       string
	bandwidth       string
	dynPorts        string
	joinNewCell     bool
	allowRoot       bool
	criuPath        string
	ckptTasks       bool
	migrateImageDir string
	devicesCfg      string
	joinToken       string
	joinFile        string
	tls             tlsFlags
	http            httpLimitFlags

	containerdSocket    string
	containerdNamespace string
	imageGCGrace        time.Duration
	microvm             microVMFlags
}

func (f *agentFlags) register(cmd *cobra.Command, defaultDataDir string, withServers bool) {
	if withServers {
		cmd.Flags().StringSliceVar(&f.servers, "servers", []string{api.DefaultAddr}, "the cell's servers' HTTP addresses, comma-separated or repeated; the agent fails over between them")
		cmd.Flags().StringVar(&f.joinToken, "join-token", os.Getenv("STRATA_JOIN_TOKEN"),
			"the cell's join token (default $STRATA_JOIN_TOKEN): needed to register a node the cell does not know yet; a server writes it to <its data-dir>/join-token")
		cmd.Flags().StringVar(&f.joinFile, "join-token-file", "", "read the join token from this file (a server's <data-dir>/join-token)")
		f.tls.register(cmd, "the agent")
	}
	cmd.Flags().StringVar(&f.dataDir, "agent-data-dir", "", "agent state directory (default <data-dir>/agent)")
	cmd.Flags().StringVar(&f.name, "name", "", "node name (default the hostname)")
	cmd.Flags().StringVar(&f.httpAddr, "agent-http-addr", "127.0.0.1:0", "address of the agent's own API (task logs)")
	cmd.Flags().StringArrayVar(&f.labels, "label", nil, "topology label key=value, e.g. rack=r1 (repeatable)")
	cmd.Flags().StringVar(&f.cpuTotal, "cpu-total", "", "advertised CPU in millicores or cores, e.g. 4000 or 4 (default: fingerprinted)")
	cmd.Flags().StringVar(&f.memoryTotal, "memory-total", "", "advertised memory, e.g. 8GiB (default: fingerprinted)")
	cmd.Flags().StringVar(&f.diskTotal, "disk-total", "", "advertised disk, e.g. 100GiB (default: free space of the data dir)")
	cmd.Flags().StringVar(&f.bandwidth, "bandwidth-total", "", "advertised NIC bandwidth, e.g. 10Gbps (default 10Gbps)")
	cmd.Flags().StringVar(&f.dynPorts, "dynamic-ports", "", "the range LO-HI this node's dynamic ports are drawn from (default 20000-32000); agents that share one machine's network need ranges that do not overlap")
	cmd.Flags().BoolVar(&f.joinNewCell, "join-new-cell", false, "accept, once, what the servers now say even when it comes from a cell other than the one this node remembers (a server restarted on an empty data dir makes a new cell) or from a state behind the index it acted on (a restored backup): the node then belongs to that cell, and tasks its allocation list does not name are stopped. Without it such answers are refused, tasks keep running and the agent says why (docs/agent-safety.md)")
	cmd.Flags().StringVar(&f.containerdSocket, "containerd-socket", "", "a containerd daemon's socket (e.g. /run/containerd/containerd.sock): when it answers, the node offers the containerd driver and runs tasks with an image (docs/drivers.md)")
	cmd.Flags().StringVar(&f.containerdNamespace, "containerd-namespace", "strata", "the containerd namespace this agent's containers and images live in; give agents that share a daemon different ones")
	cmd.Flags().DurationVar(&f.imageGCGrace, "image-gc-grace", time.Hour, "remove an image this agent pulled or imported once no container has used it for this long")
	cmd.Flags().StringVar(&f.criuPath, "criu-path", "", "criu binary (CRIU >= 4.1) that checkpoints and migrates tasks (default: criu on PATH; none: this node does not checkpoint); strata nodes shows whether it works")
	cmd.Flags().BoolVar(&f.ckptTasks, "checkpointable-tasks", false, "start exec tasks without namespaces of their own: in the host's pid, mount and cgroup namespaces (still as their user, with their capability mask, no_new_privs, seccomp profile and cgroups). Not needed for migrations: with a working criu, exec tasks in their own namespaces (the default) keep their memory across moves too; this only trades isolation away (docs/migration.md)")
	cmd.Flags().StringVar(&f.migrateImageDir, "migrate-image-dir", "", "where migration images live while the tasks are stopped: empty or disk: the data dir; or a tmpfs mount point such as /dev/shm, used when it has room for the image (docs/migration.md, \"Image store\")")
	cmd.Flags().StringVar(&f.devicesCfg, "devices-config", "", "device config file (YAML): rules naming the class of PCI devices in /sys/bus/pci/devices and devices listed outright, each with its NUMA node and device nodes; SR-IOV VFs, NVMe namespaces, FPGAs and accelerators are found without one (docs/devices.md)")
	cmd.Flags().BoolVar(&f.allowRoot, "allow-root-tasks", false, "let exec tasks run as root (user: root), still in their own namespaces with few capabilities; off: such tasks fail to start")
	f.http.register(cmd, "agent-http-", "the agent's API")
	f.microvm.register(cmd)
}

func (f *agentFlags) agentConfig(dataDir string, servers []string, logger *slog.Logger) (agent.Config, error) {
	cfg := agent.Config{DataDir: dataDir, Name: f.name, HTTPAddr: f.httpAddr, Logger: logger,
		Labels: map[string]string{}, HTTP: f.http.c, JoinNewCell: f.joinNewCell, AllowRootTasks: f.allowRoot,
		ContainerdSocket: f.containerdSocket, ContainerdNamespace: f.containerdNamespace, ImageGCGrace: f.imageGCGrace,
		CriuPath: f.criuPath, CheckpointableTasks: f.ckptTasks, MigrateImageDir: f.migrateImageDir, DevicesConfig: f.devicesCfg}
	microVM, microVMErr := f.microvm.config()
	if microVMErr != nil {
		return cfg, microVMErr
	}
	cfg.MicroVM = microVM
	for _, l := range f.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return cfg, failf("--label %q: want key=value", l)
		}
		cfg.Labels[k] = v
	}
	// The server refuses a registration with a bad name or label; say so
	// now rather than retry it for ever.
	if cfg.Name != "" {
		if problem := spec.CheckID(cfg.Name); problem != "" {
			return cfg, failf("--name %q: %s", cfg.Name, problem)
		}
	}
	for k, v := range cfg.Labels {
		if problem := spec.CheckLabelKey(k); problem != "" {
			return cfg, failf("--label %q: %s", k, problem)
		}
		if problem := spec.CheckLabelValue(v); problem != "" {
			return cfg, failf("--label %s=%q: %s", k, v, problem)
		}
	}
	var err error
	if f.cpuTotal != "" {
		if cfg.CPUTotal, err = parseCPUTotal(f.cpuTotal); err != nil {
			return cfg, failf("--cpu-total: %v", err)
		}
	}
	if f.memoryTotal != "" {
		if cfg.MemoryTotal, err = resources.ParseBytesWithUnit(f.memoryTotal); err != nil {
			return cfg, failf("--memory-total: %v", err)
		}
	}
	if f.diskTotal != "" {
		if cfg.DiskTotal, err = resources.ParseBytesWithUnit(f.diskTotal); err != nil {
			return cfg, failf("--disk-total: %v", err)
		}
	}
	if f.bandwidth != "" {
		if cfg.NetMbps, err = resources.ParseBandwidth(f.bandwidth); err != nil {
			return cfg, failf("--bandwidth-total: %v", err)
		}
	}
	if f.dynPorts != "" {
		r, err := api.ParsePortRange(f.dynPorts)
		if err != nil {
			return cfg, failf("--dynamic-ports: %v", err)
		}
		cfg.DynamicPorts = &r
	}
	if len(servers) == 0 {
		return cfg, failf("--servers: at least one server address is required")
	}
	// Each agent starts at a random server, so a cell's agents spread over
	// its servers; the client fails over to the others.
	shuffled := append([]string(nil), servers...)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	client := api.NewClientFor(shuffled)
	client.AttemptTimeout = agentAttemptTimeout
	id, secret, err := agent.LoadIdentity(dataDir)
	if err != nil {
		return cfg, err
	}
	join := f.joinToken
	if f.joinFile != "" {
		b, err := os.ReadFile(f.joinFile)
		if err != nil {
			return cfg, failf("--join-token-file: %v", err)
		}
		join = strings.TrimSpace(string(b))
	}
	client.Node = &api.NodeIdentity{ID: id, Secret: secret, JoinToken: join}
	naming, err := chooseNodeName(dataDir, id, cfg.Name, logger)
	if err != nil {
		return cfg, err
	}
	cfg.Name = naming.current
	if cfg.TLS == nil {
		if cfg.TLS, err = f.tls.files(); err != nil {
			return cfg, err
		}
	}
	if cfg.TLS != nil {
		if err := cfg.TLS.Check(pki.RoleAgent); err != nil {
			return cfg, failf("agent TLS: %v", err)
		}
		tc, err := cfg.TLS.ClientConfig(pki.RoleServer)
		if err != nil {
			return cfg, failf("agent TLS: %v", err)
		}
		client.SetTLS(tc)
	}
	cfg.API = agentAPI{Client: client, naming: naming, stop: &agentStop{}}
	return cfg, nil
}

// parseCPUTotal reads --cpu-total: a bare integer of 100 or more is
// millicores (4000), anything else is cores (4, 0.5, 500m).
func parseCPUTotal(s string) (int64, error) {
	var n int64
	if _, err := fmt.Sscanf(s, "%d", &n); err == nil && fmt.Sprint(n) == s && n >= 100 {
		return n, nil
	}
	return resources.ParseCPU(s)
}

func newLogger(level string, stderr *os.File) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, failf("--log-level: %v", err)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: l})), nil
}

func newServerCmd(g *globals) *cobra.Command {
	var sf serverFlags
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a control-plane server (one, or one of a cell of 3 or 5)",
		Long: `Run a control-plane server: raft log in --data-dir, HTTP API on --http-addr.

A server restarted on the same data dir has lost nothing: workloads, nodes,
allocations and evaluations are replayed from its raft log and snapshots. It
answers nothing from its state (503 not-ready; /v1/status/ready says why)
until the replay is complete.

A cell of several servers: give each a server port with --raft-addr (raft and
the servers' own traffic), the same --bootstrap-expect, and --join with the
server port of at least one other. They find each other, form the cell, and
elect a leader; no file needs writing. Any server takes any request: a
follower forwards writes and reads to the leader, and answers ?stale reads
itself. A server restarted on its data dir rejoins by itself; a new server,
or one whose data dir was lost, joins a running cell with --join alone.
Agents and the CLI take every server's HTTP address (--servers, --addr,
STRATA_ADDR as a comma-separated list) and fail over between them.`,
		Example: `  # one server
  strata server --data-dir /var/lib/strata/server --http-addr 127.0.0.1:4680

  # a cell of three (one command per machine)
  strata server --data-dir /var/lib/strata/server --http-addr 10.0.0.1:4680 --raft-addr 10.0.0.1:4681 --bootstrap-expect 3
  strata server --data-dir /var/lib/strata/server --http-addr 10.0.0.2:4680 --raft-addr 10.0.0.2:4681 --bootstrap-expect 3 --join 10.0.0.1:4681
  strata server --data-dir /var/lib/strata/server --http-addr 10.0.0.3:4680 --raft-addr 10.0.0.3:4681 --bootstrap-expect 3 --join 10.0.0.1:4681

  # a fourth server joins the running cell
  strata server --data-dir /var/lib/strata/server --http-addr 10.0.0.4:4680 --raft-addr 10.0.0.4:4681 --join 10.0.0.1:4681

  # the same from a file where every flag has a key (docs/install.md)
  strata server --config /etc/strata/server.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(sf.logLevel, os.Stderr)
			if err != nil {
				return err
			}
			sc, err := sf.config(logger)
			if err != nil {
				return err
			}
			srv, err := server.New(sc)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "strata server listening on %s (data dir %s)\n", srv.Addr(), sf.dataDir)
			return srv.Run(cmd.Context())
		},
	}
	sf.register(cmd, "strata-data/server")
	addConfigFlag(cmd, "the server's")
	return cmd
}

func newAgentCmd(g *globals) *cobra.Command {
	var af agentFlags
	var dataDir, logLevel string
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run a node agent that registers with the servers and runs their allocations",
		Long: `Run a node agent. It fingerprints the machine (CPUs, NUMA, memory, disk, GPUs),
registers it with the servers under the given labels and capacity, and runs the
allocations placed on it, each task in its own cgroup.

Several agents may run on one machine, each with its own --data-dir, labels and
advertised capacity, to make a small multi-node cell for tests and demos.
Stopping or restarting an agent leaves its tasks running; it re-attaches.

The agent belongs to one cell: it remembers the cell's identity and the
highest index it acted on (in its data dir), and refuses desired state from
another cell or from a server behind that index, keeping its tasks running
and logging why until a server of its cell answers. --join-new-cell moves
it to a new cell on purpose. At start it also reconciles with the host: task
processes and cgroups of its data dir that it has no record of (say, after
the data dir was lost) are adopted when the cell still wants them on this
node, or stopped and removed.`,
		Example: `  strata agent --servers https://10.0.0.1:4680 --data-dir /tmp/a1 --name a1 --label rack=r1 --cpu-total 4000 --memory-total 8GiB
  strata agent --config /etc/strata/agent.yaml      # every flag has a key (docs/install.md)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(logLevel, os.Stderr)
			if err != nil {
				return err
			}
			dir := af.dataDir
			if dir == "" {
				dir = dataDir
			}
			cfg, err := af.agentConfig(dir, af.servers, logger)
			if err != nil {
				return err
			}
			return runAgent(cmd.Context(), g, cfg)
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "strata-data/agent", "agent state directory")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	af.register(cmd, "", true)
	addConfigFlag(cmd, "the agent's")
	cmd.Flags().MarkHidden("agent-data-dir")
	cmd.Flags().Lookup("agent-http-addr").Usage = "address of the agent's own API (task logs)"
	return cmd
}

func runAgent(ctx context.Context, g *globals, cfg agent.Config) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if aa, ok := cfg.API.(agentAPI); ok {
		aa.stop.set(cancel)
	}
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "strata agent %s running as node %q (data dir %s)\n", a.NodeID(), cfg.Name, cfg.DataDir)
	err = a.Run(ctx)
	if cause := context.Cause(ctx); errors.Is(cause, errRegistrationRefused) {
		return failf("%v", cause)
	}
	return err
}

func newDevCmd(g *globals) *cobra.Command {
	var sf serverFlags
	var af agentFlags
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local one-node cell: a server and an agent in one process",
		Long: `Run a local one-node cell with no setup: a server and an agent in one process,
state under --data-dir (server/ and agent/ inside it), API on --http-addr.

Its credentials are made once and kept in the data dir: a CA and server,
agent and CLI certificates in tls/ (the API is HTTPS, the agent joins over
mutual TLS), the join token in server/join-token, and with --acl the
management token in management-token. The CLI, run from the directory the
cell was started in, finds them by itself. --insecure-plaintext runs it
without TLS (loudly logged).

The web UI is served at /ui/ on the same address (docs/ui.md).

Then, in another terminal:

  strata run -f examples/hello.yaml --wait
  strata status hello
  strata logs <alloc-id> -f`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(sf.logLevel, os.Stderr)
			if err != nil {
				return err
			}
			root := sf.dataDir
			if !sf.tls.plaintext && sf.tls.ca == "" {
				// The dev cell's own CA and certificates, made once.
				dir := devTLSDir(root)
				if err := pki.EnsureDev(dir); err != nil {
					return fmt.Errorf("the dev cell's TLS credentials: %w", err)
				}
				srvFiles, agentFiles := pki.CertFiles(dir, pki.RoleServer), pki.CertFiles(dir, pki.RoleAgent)
				sf.tls.ca, sf.tls.cert, sf.tls.key = srvFiles.CA, srvFiles.Cert, srvFiles.Key
				af.tls = tlsFlags{ca: agentFiles.CA, cert: agentFiles.Cert, key: agentFiles.Key}
			} else {
				af.tls = sf.tls // plaintext, or the operator's own files for both
			}
			sc, err := sf.config(logger)
			if err != nil {
				return err
			}
			sc.DataDir = filepath.Join(root, "server")
			if sc.JoinToken == "" {
				// The dev cell's agent joins with the cell's own token:
				// the one its server wrote before, or a new one.
				if sc.JoinToken, err = devJoinToken(sc.DataDir); err != nil {
					return err
				}
			}
			af.joinToken = sc.JoinToken
			srv, err := server.New(sc)
			if err != nil {
				return err
			}
			defer srv.Close()
			agentDir := af.dataDir
			if agentDir == "" {
				agentDir = filepath.Join(root, "agent")
			}
			cfg, err := af.agentConfig(agentDir, []string{srv.Addr()}, logger)
			if err != nil {
				return err
			}
			if sc.ACL {
				// The call trusts the cell's own CA: the dev cell's, with its
				// CLI certificate, or the operator's (--tls-ca).
				var ca, cert, key string
				if sc.TLS != nil {
					ca = sc.TLS.CA
					if cli := pki.CertFiles(devTLSDir(root), pki.RoleCLI); filepath.Dir(sc.TLS.CA) == devTLSDir(root) {
						cert, key = cli.Cert, cli.Key
					}
				}
				file, err := devBootstrap(cmd.Context(), srv.Addr(), root, ca, cert, key)
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "ACLs are on; the management token is in %s (the CLI uses it when run from this directory; else export STRATA_TOKEN=$(cat %s))\n", file, file)
			}
			if sc.TLS != nil && af.tls.ca != "" && filepath.Dir(af.tls.ca) == devTLSDir(root) {
				cli := pki.CertFiles(devTLSDir(root), pki.RoleCLI)
				fmt.Fprintf(g.stdout, "TLS: the dev cell's CA and certificates are in %s; the CLI finds them when run from this directory (else: export STRATA_CACERT=%s STRATA_CLIENT_CERT=%s STRATA_CLIENT_KEY=%s)\n",
					devTLSDir(root), cli.CA, cli.Cert, cli.Key)
			}
			if !sc.ACL && sc.AllowAnonymous {
				fmt.Fprintf(g.stdout, "ANONYMOUS: this dev cell lets anyone who reaches %s list, run and stop anything (fine on a laptop); start it with --acl for tokens, or --insecure-allow-anonymous=false to require its CLI certificate\n", srv.Addr())
			}
			fmt.Fprintf(g.stdout, "strata dev cell: API on %s, data in %s\n", srv.Addr(), root)
			fmt.Fprintf(g.stdout, "web UI: %s/ui/ (docs/ui.md)\n", srv.Addr())
			fmt.Fprintf(g.stdout, "try: strata run -f examples/hello.yaml --wait\n")
			return runAgent(cmd.Context(), g, cfg)
		},
	}
	sf.register(cmd, "strata-data")
	// A dev cell stays convenient (the browser's UI, curl) and says so at
	// start; --acl, or --insecure-allow-anonymous=false (its CLI
	// certificate), for the secure way.
	sf.allowAnonymous = os.Getenv("STRATA_INSECURE_ALLOW_ANONYMOUS") != "0"
	anon := cmd.Flags().Lookup("insecure-allow-anonymous")
	anon.DefValue = "true"
	anon.Usage = "without --acl, let callers who prove nothing use the dev cell's API (a browser's UI, curl): anyone who reaches --http-addr can do anything. " +
		"false: users need the dev cell's CLI certificate (the CLI finds it in this directory)"
	af.register(cmd, "", false)
	addConfigFlag(cmd, "the dev cell's")
	return cmd
}

// devJoinToken is the join token a dev cell keeps in its server's data
// dir (the file every server writes), or a new one.
func devJoinToken(serverDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(serverDir, "join-token"))
	switch {
	case err == nil && strings.TrimSpace(string(b)) != "":
		return strings.TrimSpace(string(b)), nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("read the dev cell's join token: %w", err)
	}
	return nodeauth.NewSecret(), nil
}
