package fingerprint

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/strata-dev/strata/api"
)

// DefaultGPUCommand queries NVIDIA GPUs as CSV.
var DefaultGPUCommand = []string{"nvidia-smi",
	"--query-gpu=index,uuid,name,memory.total,pci.bus_id", "--format=csv,noheader,nounits"}

// Options says where to look. Empty fields take the host defaults.
type Options struct {
	SysRoot    string   // default /sys
	ProcRoot   string   // default /proc
	DataDir    string   // disk capacity is the free space of its file system
	GPUCommand []string // default DefaultGPUCommand; a missing binary means no GPUs
}

// Result is what was found.
type Result struct {
	CPUs        int // logical CPUs
	MemoryBytes int64
	DiskBytes   int64
	NUMA        []api.NUMANode
	GPUs        []api.GPU
	// HugePages holds the pre-allocated huge page pools (HugePages2Mi,
	// HugePages1Gi); OtherHugePages the pools of sizes not scheduled.
	HugePages      api.Resources
	OtherHugePages []string
	CPUArch        string   // runtime.GOARCH: amd64, arm64
	CPUFeatures    []string // of FeatureFlags, sorted
}

// Fingerprint inspects the host.
func Fingerprint(ctx context.Context, opts Options) (*Result, error) {
	if opts.SysRoot == "" {
		opts.SysRoot = "/sys"
	}
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	if opts.GPUCommand == nil {
		opts.GPUCommand = DefaultGPUCommand
	}
	res := &Result{}
	numa, err := NUMA(opts.SysRoot)
	if err != nil {
		return nil, err
	}
	res.NUMA = numa
	for _, n := range numa {
		res.CPUs += len(n.CPUs)
	}
	if res.CPUs == 0 {
		res.CPUs = runtime.NumCPU()
	}
	if res.MemoryBytes, err = MemTotal(filepath.Join(opts.ProcRoot, "meminfo")); err != nil {
		return nil, err
	}
	if opts.DataDir != "" {
		var st syscall.Statfs_t
		if err := syscall.Statfs(opts.DataDir, &st); err != nil {
			return nil, fmt.Errorf("statfs %s: %w", opts.DataDir, err)
		}
		res.DiskBytes = int64(st.Bavail) * st.Bsize
	}
	if res.GPUs, err = GPUs(ctx, opts.GPUCommand, opts.SysRoot); err != nil {
		return nil, err
	}
	if res.HugePages, res.OtherHugePages, err = HugePages(opts.SysRoot); err != nil {
		return nil, err
	}
	res.CPUArch = runtime.GOARCH
	if res.CPUFeatures, err = CPUFeatures(opts.ProcRoot); err != nil {
		return nil, err
	}
	return res, nil
}

// ParseCPUList parses a kernel cpulist such as "0-3,8,10-11".
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("parse cpulist %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("parse cpulist %q: %w", s, err)
			}
		}
		if b < a {
			return nil, fmt.Errorf("parse cpulist %q: descending range %s", s, part)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// NUMA reads <sysRoot>/devices/system/node/node*/{cpulist,meminfo}. A host
// without the directory (no NUMA support) has no NUMA nodes.
func NUMA(sysRoot string) ([]api.NUMANode, error) {
	base := filepath.Join(sysRoot, "devices", "system", "node")
	entries, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", base, err)
	}
	var nodes []api.NUMANode
	for _, e := range entries {
		id, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "node"))
		if !strings.HasPrefix(e.Name(), "node") || err != nil {
			continue
		}
		dir := filepath.Join(base, e.Name())
		list, err := os.ReadFile(filepath.Join(dir, "cpulist"))
		if err != nil {
			return nil, fmt.Errorf("read numa node %d: %w", id, err)
		}
		cpus, err := ParseCPUList(string(list))
		if err != nil {
			return nil, fmt.Errorf("numa node %d: %w", id, err)
		}
		mem, err := nodeMemTotal(filepath.Join(dir, "meminfo"))
		if err != nil {
			return nil, fmt.Errorf("numa node %d: %w", id, err)
		}
		nn := api.NUMANode{ID: id, CPUs: cpus, MemoryBytes: mem}
		if len(cpus) == 0 && mem > 0 {
			nn.Tier = api.MemoryTierSlow // CXL or persistent memory: no CPUs of its own
		}
		nodes = append(nodes, nn)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	return nodes, nil
}

// nodeMemTotal parses a sysfs node meminfo ("Node 0 MemTotal:  3761912 kB").
func nodeMemTotal(path string) (int64, error) {
	return scanKB(path, func(fields []string) (string, bool) {
		if len(fields) >= 4 && fields[0] == "Node" && fields[2] == "MemTotal:" {
			return fields[3], true
		}
		return "", false
	})
}

// MemTotal parses /proc/meminfo's MemTotal.
func MemTotal(path string) (int64, error) {
	return scanKB(path, func(fields []string) (string, bool) {
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			return fields[1], true
		}
		return "", false
	})
}

func scanKB(path string, match func([]string) (string, bool)) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := match(strings.Fields(sc.Text())); ok {
			kb, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse %s: %w", path, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("parse %s: no MemTotal", path)
}

// GPUs runs cmd (nvidia-smi's CSV query) and parses its output; the GPUs'
// NUMA nodes come from <sysRoot>/bus/pci/devices/<bus id>/numa_node. A
// missing binary means no GPUs.
func GPUs(ctx context.Context, cmd []string, sysRoot string) ([]api.GPU, error) {
	if len(cmd) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, cmd[0], cmd[1:]...).Output()
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", cmd[0], err)
	}
	return ParseNvidiaSMI(out, sysRoot)
}

// ParseNvidiaSMI parses `nvidia-smi --query-gpu=index,uuid,name,memory.total,
// pci.bus_id --format=csv,noheader,nounits` (memory in MiB). GPU ids are
// the UUIDs: stable across reboots, unlike indexes.
func ParseNvidiaSMI(out []byte, sysRoot string) ([]api.GPU, error) {
	var gpus []api.GPU
	sc := bufio.NewScanner(bytes.NewReader(out))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		fields := strings.Split(text, ",")
		if len(fields) != 5 {
			return nil, fmt.Errorf("parse nvidia-smi line %d %q: want 5 fields, got %d", line, text, len(fields))
		}
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		mib, err := strconv.ParseInt(fields[3], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parse nvidia-smi line %d memory %q: %w", line, fields[3], err)
		}
		gpus = append(gpus, api.GPU{
			ID:          fields[1],
			Model:       fields[2],
			MemoryBytes: mib << 20,
			NUMA:        pciNUMANode(sysRoot, fields[4]),
		})
	}
	return gpus, nil
}

// pciNUMANode maps nvidia-smi's bus id ("00000000:07:00.0", an 8-digit
// domain) to sysfs's ("0000:07:00.0") and reads its numa_node; -1 if unknown.
func pciNUMANode(sysRoot, busID string) int {
	busID = strings.ToLower(busID)
	if domain, rest, ok := strings.Cut(busID, ":"); ok && len(domain) > 4 {
		busID = domain[len(domain)-4:] + ":" + rest
	}
	data, err := os.ReadFile(filepath.Join(sysRoot, "bus", "pci", "devices", busID, "numa_node"))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return -1
	}
	return n
}
