package drivers

// ScratchDirs are the directories every task gets a private, empty tmpfs
// at, never the host's (exec) or its image's writable layer (containerd):
// shared by every tenant or on the node's disk with no bound, a task could
// fill them and leave files behind after its workload was purged (issue
// 18 defect 9). They go with the task.
var ScratchDirs = []string{"/tmp", "/var/tmp", "/dev/shm"}

// defaultScratchBytes bounds each scratch tmpfs of a task without a
// memory limit.
const defaultScratchBytes = 64 << 20

// ScratchBytes is the size of each of a task's scratch tmpfs: its memory
// limit, which their pages are charged to anyway (tmpfs pages count in the
// writer's memory cgroup), so the bound mostly shows in `df`; without one,
// 64 MiB.
func ScratchBytes(memoryLimit int64) int64 {
	if memoryLimit > 0 {
		return memoryLimit
	}
	return defaultScratchBytes
}
