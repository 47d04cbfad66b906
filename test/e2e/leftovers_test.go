package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// killAgentTasks SIGKILLs every process left in the task cgroups of the
// agent whose data dir is dataDir, and removes those cgroups. A test that
// fails before its workloads stopped would otherwise leave its tasks
// running (a task outlives its agent by design), holding their ports for
// the next test.
func killAgentTasks(dataDir string) {
	sum := sha256.Sum256([]byte(dataDir))
	parent := filepath.Join("strata", hex.EncodeToString(sum[:])[:12])
	for _, base := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuset"} {
		root := filepath.Join(base, parent)
		var dirs []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			dirs = append(dirs, p)
			b, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			return nil
		})
		slices.Reverse(dirs) // children first
		for _, d := range dirs {
			os.Remove(d) // fails while a killed process is still exiting; harmless
		}
	}
}
