package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/health"
	"github.com/strata-dev/strata/internal/agent/migrate"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/pki"
)

// ServerAPI is what the agent needs from the control plane. Implementations
// must be safe for concurrent use; every method may block on the network
// and must return when ctx is done. The answers the agent acts on carry the
// server's Stamp (the cell and its applied index, from the answer's
// headers); the agent refuses them when they come from another cell or a
// server behind what it has seen.
type ServerAPI interface {
	// RegisterNode upserts the node; the server keeps Allocated.
	RegisterNode(ctx context.Context, n *api.Node) (Stamp, error)
	// Heartbeat returns an error wrapping ErrNodeUnknown when the server
	// forgot the node; the agent then registers again.
	Heartbeat(ctx context.Context, nodeID string) (Beat, error)
	// NodeAllocations is a blocking query: it returns the node's
	// allocations once the index is above minIndex, or after wait.
	NodeAllocations(ctx context.Context, nodeID string, minIndex uint64, wait time.Duration) ([]*api.Allocation, uint64, Stamp, error)
	// UpdateAllocations reports client status changes.
	UpdateAllocations(ctx context.Context, updates []*api.AllocUpdate) error
}

// ErrNodeUnknown is wrapped by ServerAPI errors when the server has no
// record of the node (e.g. it lost its state); the agent re-registers. It
// is the API client's own sentinel, so the client serves as ServerAPI
// without translating errors.
var ErrNodeUnknown = api.ErrNodeUnknown

// Config configures an Agent. Zero values take the documented defaults.
type Config struct {
	DataDir string            // required: agent.db, node-id and allocs/ live here
	Name    string            // default: the host name
	Labels  map[string]string // topology labels; "node" defaults to Name

	// Capacity overrides; 0 means the fingerprinted value (NetMbps: 10000).
	CPUTotal, MemoryTotal, DiskTotal, NetMbps int64
	// DynamicPorts, when set, is the node's own dynamic port range
	// (api.Node.DynamicPorts): agents that share a machine's network each
	// need one of their own.
	DynamicPorts *api.PortRange

	// HTTPAddr is the listen address of the agent's own API (logs),
	// default "127.0.0.1:0"; advertised as Node.HTTPAddr.
	HTTPAddr string
	// HTTP sets that API's timeouts and connection caps (docs/limits.md);
	// zero fields take the defaults.
	HTTP httplimit.Config
	API  ServerAPI // required
	// TLS, when set, is the agent's certificate, key and the cell's CA: its
	// own API (logs) serves mutual TLS to servers only. The client in API
	// carries the same certificate to the servers.
	TLS *pki.Files

	// HeartbeatInterval is how often the node heartbeats until the server
	// says otherwise (a large cell asks for less), default 1s.
	HeartbeatInterval time.Duration
	// WatchWait is the blocking-query wait of NodeAllocations, default 30s.
	WatchWait time.Duration
	// UpdateBatch is how long status changes are collected before they are
	// sent together, default 50ms.
	UpdateBatch time.Duration

	// ShimCommand is the argv prefix that runs the task shim, default
	// [os.Executable(), "__shim"].
	ShimCommand []string
	CgroupRoot  string // default /sys/fs/cgroup
	// CgroupParent is where this agent's task cgroups live, relative to
	// each hierarchy's root: <parent>/<alloc>/<task>. Default
	// strata/<first 12 hex digits of the SHA-256 of DataDir's absolute
	// path>, the same after the data dir is lost and different for every
	// agent of a host. The agent owns it: at start it stops what it finds
	// there and has no record of, unless its cell still wants it here.
	CgroupParent string
	// GPUCommand overrides the nvidia-smi query (tests); nil is the default.
	GPUCommand []string
	// SysRoot and ProcRoot override /sys and /proc for fingerprinting.
	SysRoot, ProcRoot string
	// DevicesConfig is the device config file (fingerprint.DeviceConfig);
	// "" finds devices in sysfs by the built-in rules only.
	DevicesConfig string
	// DevRoot overrides /dev, where the GPUs' device nodes are (tests).
	DevRoot string

	// LogMaxBytes and LogMaxFiles bound each task stream's log files,
	// default 10MiB × 3.
	LogMaxBytes int64
	LogMaxFiles int

	// JoinNewCell lets the agent accept, once, an answer from a cell other
	// than the one it remembers (DataDir/agent.db), or from its cell but
	// behind the index it acted on: the node then belongs to that cell at
	// that index, and its allocations are reconciled with that list. It is
	// spent by the first answer accepted. Without it such answers are
	// refused (docs/agent-safety.md).
	JoinNewCell bool

	// AllowRootTasks lets exec tasks run as uid 0 (docs/security.md,
	// "Task isolation"); otherwise a task whose user is root fails to
	// start. A namespace's ACL policy may narrow it further.
	AllowRootTasks bool

	// MicroVM configures the micro-VM driver; Accel "off" disables it.
	MicroVM MicroVMConfig
	// CriuPath is the criu binary that checkpoints and restores tasks;
	// empty: criu on PATH; "none": the node does not checkpoint. The
	// agent probes it at start and advertises the result
	// (api.Node.Checkpoint).
	CriuPath string
	// Transport carries migration images to other agents; nil: the
	// agents' HTTP API (HTTPImageTransport), over mutual TLS with the
	// agent's own certificate when TLS is set.
	Transport ImageTransport
	// CheckpointableTasks starts exec tasks without namespaces of their
	// own: in the host's pid, mount and cgroup namespaces (still under
	// their user, capabilities, no_new_privs, seccomp and cgroups). Not
	// needed to keep memory across moves any more (criu dumps namespaced
	// tasks); kept for nodes that chose it (docs/migration.md).
	CheckpointableTasks bool
	// MigrateImageDir is where migration images live while the tasks
	// are stopped: "" or "disk" the data dir, else a tmpfs mount point
	// (e.g. /dev/shm), used while it has room for the image
	// (docs/migration.md, "Image store").
	MigrateImageDir string

	// Drivers adds or replaces task drivers by name. "exec" and "mock" are
	// built in; "containerd" is when ContainerdSocket answers.
	Drivers map[string]Driver
	// HealthProber runs health checks; nil means health.NetProber (HTTP
	// and TCP on the node's loopback, exec as a process). Tests inject one.
	HealthProber health.Prober

	// ContainerdSocket is a containerd daemon's socket; when set and the
	// daemon answers, the agent offers the containerd driver (OCI images).
	ContainerdSocket string
	// ContainerdNamespace is the containerd namespace the driver owns,
	// default "strata".
	ContainerdNamespace string
	// ImageGCGrace is how long the containerd driver keeps an image no
	// container uses (default 1h, docs/drivers.md).
	ImageGCGrace time.Duration

	Logger *slog.Logger
}

// defaultCgroupParent is strata/<scope of the absolute data dir>.
func defaultCgroupParent(absDataDir string) string {
	sum := sha256.Sum256([]byte(absDataDir))
	return filepath.Join(cgroup.Parent, hex.EncodeToString(sum[:])[:12])
}

func (c *Config) setDefaults() error {
	if c.DataDir == "" {
		return errors.New("agent config: DataDir is required")
	}
	// Shims run with the task's working directory; every path handed to
	// them must be absolute.
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return fmt.Errorf("agent config: DataDir %q: %w", c.DataDir, err)
	}
	c.DataDir = abs
	if c.API == nil {
		return errors.New("agent config: API is required")
	}
	if c.CgroupParent == "" {
		c.CgroupParent = defaultCgroupParent(c.DataDir)
	}
	if c.Name == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("agent config: hostname: %w", err)
		}
		c.Name = host
	}
	if c.HTTPAddr == "" {
		c.HTTPAddr = "127.0.0.1:0"
	}
	if c.NetMbps == 0 {
		c.NetMbps = 10000
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = time.Second
	}
	if c.WatchWait <= 0 {
		c.WatchWait = 30 * time.Second
	}
	if c.UpdateBatch <= 0 {
		c.UpdateBatch = 50 * time.Millisecond
	}
	if len(c.ShimCommand) == 0 {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("agent config: find own executable for the shim: %w", err)
		}
		c.ShimCommand = []string{self, "__shim"}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Transport == nil {
		t, err := migrate.DefaultTransport(c.TLS)
		if err != nil {
			return fmt.Errorf("agent config: %w", err)
		}
		c.Transport = t
	}
	return nil
}
