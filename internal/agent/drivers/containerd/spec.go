package containerd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/containerd/containerd/v2/contrib/seccomp"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/fingerprint"
)

// cfsPeriod is the CFS period the cpu quota is expressed in, as the exec
// driver's cgroups use it (100ms).
const cfsPeriod = 100000

// basePath is the PATH a task gets when neither its image nor its
// environment sets one.
const basePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// limits is what the driver enforces on a container, taken from the task's
// resources and assignment; the OCI spec carries it to runc.
type limits struct {
	CPUMilli    int64
	MemoryBytes int64
	PidsLimit   int64
	CPUs        []int // exclusive cores; empty: not pinned
	NUMANode    int   // -1: not pinned
	// NoSwap sets memory+swap to the memory limit, so the limit is met
	// by the OOM killer and not by swapping; only where the kernel
	// accounts swap (memory.memsw.* on v1, memory.swap.max on v2).
	NoSwap bool
	// Devices are host device nodes the container may use (GPUs), each
	// allowed read, write and mknod in the devices cgroup.
	Devices []string
}

func limitsOf(cfg *drivers.TaskConfig, noSwap bool) limits {
	return limits{
		CPUMilli:    cfg.Resources.CPUMilli,
		MemoryBytes: cfg.Resources.MemoryBytes,
		PidsLimit:   cfg.Task.PidsLimit,
		CPUs:        cfg.Cpuset(),
		NUMANode:    cfg.NUMANode,
		NoSwap:      noSwap,
		Devices:     withGiven(gpuDevices(cfg.GPUs, "/dev", "/proc"), cfg.Devices),
	}
}

// withGiven adds the device nodes the agent gave the task (its devices'
// and GPUs', TaskConfig.Devices) that exist, once each.
func withGiven(nodes, given []string) []string {
	for _, p := range given {
		if slices.Contains(nodes, p) {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			nodes = append(nodes, p)
		}
	}
	return nodes
}

// gpuDevices lists the device nodes that assigned GPUs need: /dev/nvidiaN
// for each GPU (N is the id when it is an index, or the "Device Minor" the
// driver reports for the GPU's UUID under procRoot/driver/nvidia/gpus) plus
// the driver's control nodes; only those that exist under devRoot.
func gpuDevices(gpus []string, devRoot, procRoot string) []string {
	if len(gpus) == 0 {
		return nil
	}
	minors := nvidiaMinors(procRoot)
	var out []string
	for _, id := range gpus {
		if _, err := strconv.Atoi(id); err == nil {
			out = append(out, devRoot+"/nvidia"+id)
		} else if minor, ok := minors[id]; ok {
			out = append(out, devRoot+"/nvidia"+minor)
		}
	}
	out = append(out, devRoot+"/nvidiactl", devRoot+"/nvidia-uvm", devRoot+"/nvidia-uvm-tools")
	present := out[:0]
	for _, p := range out {
		if _, err := os.Stat(p); err == nil {
			present = append(present, p)
		}
	}
	return present
}

// nvidiaMinors maps GPU UUIDs to device minors (fingerprint.NVIDIAMinors).
func nvidiaMinors(procRoot string) map[string]string { return fingerprint.NVIDIAMinors(procRoot) }

// applyLimits writes l into the spec's Linux resources. It is pure: the
// device nodes themselves are added by withDevices, which reads the host.
func applyLimits(s *specs.Spec, l limits) {
	if s.Linux == nil {
		s.Linux = &specs.Linux{}
	}
	if s.Linux.Resources == nil {
		s.Linux.Resources = &specs.LinuxResources{}
	}
	r := s.Linux.Resources
	if r.CPU == nil {
		r.CPU = &specs.LinuxCPU{}
	}
	if l.CPUMilli > 0 {
		quota := max(l.CPUMilli*cfsPeriod/1000, 1000) // the kernel refuses quotas under 1ms
		period := uint64(cfsPeriod)
		r.CPU.Quota, r.CPU.Period = &quota, &period
	}
	if len(l.CPUs) > 0 {
		r.CPU.Cpus = cgroup.FormatCPUList(l.CPUs)
	}
	if l.NUMANode >= 0 && len(l.CPUs) > 0 {
		r.CPU.Mems = strconv.Itoa(l.NUMANode)
	}
	if l.MemoryBytes > 0 {
		limit := l.MemoryBytes
		if r.Memory == nil {
			r.Memory = &specs.LinuxMemory{}
		}
		r.Memory.Limit = &limit
		if l.NoSwap {
			swap := limit
			r.Memory.Swap = &swap
		}
	}
	if l.PidsLimit > 0 {
		pids := l.PidsLimit
		r.Pids = &specs.LinuxPids{Limit: &pids}
	}
}

// specOpts are the options that turn containerd's default spec (no
// devices but the standard ones, a private mount, pid, ipc and uts
// namespace) into the task's: the image's entrypoint unless the task names
// a command, its environment, the host's network (as an exec task has),
// the cgroup under the agent's parent, and the limits.
func specOpts(cfg *drivers.TaskConfig, img oci.Image, cgroupRel string, l limits, allowRoot bool) []oci.SpecOpts {
	opts := []oci.SpecOpts{oci.WithImageConfig(img)}
	if len(cfg.Task.Command) > 0 {
		opts = append(opts, oci.WithProcessArgs(cfg.Task.Command...))
	}
	if cfg.Task.User != "" {
		opts = append(opts, oci.WithUser(cfg.Task.User))
	}
	opts = append(opts, oci.WithEnv(envList(taskEnv(cfg))))
	if cfg.Task.WorkDir != "" {
		opts = append(opts, oci.WithProcessCwd(cfg.Task.WorkDir))
	}
	if cfg.Task.Network != "isolated" {
		// The host's network, as an exec task has it; "isolated" keeps
		// containerd's default, a namespace of its own with loopback.
		opts = append(opts, oci.WithHostNamespace(specs.NetworkNamespace), oci.WithHostHostsFile, oci.WithHostResolvconf)
	}
	opts = append(opts, oci.WithCgroup("/"+cgroupRel), withLimits(l), withHardware(cfg), withScratch(drivers.ScratchBytes(l.MemoryBytes)))
	for _, dev := range l.Devices {
		opts = append(opts, oci.WithLinuxDevice(dev, "rwm"))
	}
	// containerd's default seccomp profile (Docker's), last: its rules
	// follow the spec's capabilities (no user namespaces, mounts or
	// clone namespace flags without CAP_SYS_ADMIN; io_uring refused), so
	// it is computed on the final spec. The exec driver's own profile
	// (confine) is classic BPF loaded by its init; runc takes the OCI
	// form, which this is.
	return append(opts, withRootPolicy(cfg.Task.User, allowRoot, cfg.RootVeto), withSandbox(filepath.Join(cfg.TaskDir, sandboxName)),
		seccomp.WithDefaultProfile())
}

// withScratch gives the container a tmpfs of size bytes at each scratch
// directory (drivers.ScratchDirs), in place of its image's writable layer
// (/tmp, /var/tmp) and containerd's fixed 64 MiB /dev/shm.
func withScratch(size int64) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		mounts := s.Mounts[:0]
		for _, m := range s.Mounts {
			if !slices.Contains(drivers.ScratchDirs, m.Destination) {
				mounts = append(mounts, m)
			}
		}
		for _, dir := range drivers.ScratchDirs {
			mounts = append(mounts, specs.Mount{Destination: dir, Type: "tmpfs", Source: "tmpfs",
				Options: []string{"nosuid", "nodev", "mode=1777", "size=" + strconv.FormatInt(size, 10)}})
		}
		s.Mounts = mounts
		return nil
	}
}

func withLimits(l limits) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		applyLimits(s, l)
		return nil
	}
}

// envList renders env as KEY=VALUE, sorted. PATH is left to the image
// unless the task sets it; oci.WithEnv replaces the image's entries of the
// same key and keeps the others.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// containerIDPattern is containerd's rule for identifiers.
var containerIDPattern = regexp.MustCompile(`^[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*$`)

// containerID names the container of the task with the agent's task id
// "<alloc>/<task>": "<alloc>.<task>" when containerd accepts that (it does
// for ids and names the spec allows), otherwise a digest of the task id.
func containerID(taskID string) string {
	if id := strings.ReplaceAll(taskID, "/", "."); len(id) <= 76 && containerIDPattern.MatchString(id) {
		return id
	}
	sum := sha256.Sum256([]byte(taskID))
	return "strata-" + hex.EncodeToString(sum[:16])
}

// describeLimits is for the start log line.
func describeLimits(l limits) string {
	return fmt.Sprintf("cpu=%dm mem=%d pids=%d cpus=%v devices=%d", l.CPUMilli, l.MemoryBytes, l.PidsLimit, l.CPUs, len(l.Devices))
}
