package exec

import "time"

// Files a shim keeps in its task directory.
const (
	specFile = "spec.json" // what to run, written by the driver
	runFile  = "run.json"  // the task's pid, written by the shim once started
	exitFile = "exit.json" // how the task ended, written by the shim last
	shimLog  = "shim.log"  // the shim's own stderr
)

// spec is what the driver hands to the shim and the shim to exec.
type spec struct {
	Command       []string `json:"command"`
	Env           []string `json:"env"`
	WorkDir       string   `json:"workDir,omitempty"`
	ExecCommand   []string `json:"execCommand"` // argv prefix of `strata __exec`
	ProcsFiles    []string `json:"procsFiles"`  // cgroup.procs files exec joins
	CgroupVersion int      `json:"cgroupVersion"`
	CgroupRoot    string   `json:"cgroupRoot"`
	CgroupRel     string   `json:"cgroupRel"`
	LogMaxBytes   int64    `json:"logMaxBytes"`
	LogMaxFiles   int      `json:"logMaxFiles"`

	// Isolation (docs/security.md, "Task isolation").
	UID        int      `json:"uid"`
	GID        int      `json:"gid"`
	SandboxDir string   `json:"sandboxDir"` // the task's own directory, owned by UID; the only one under HidePaths it sees
	HidePaths  []string `json:"hidePaths"`  // covered by an empty tmpfs in the task's mount namespace
	// ScratchBytes is the size of each scratch tmpfs (drivers.ScratchDirs:
	// /tmp, /var/tmp, /dev/shm), world-writable and sticky.
	ScratchBytes int64    `json:"scratchBytes,omitempty"`
	CgroupDirs   []string `json:"cgroupDirs"` // bound read-only under CgroupRoot in the task's mount namespace
	// IsolatedNetwork gives the task a network namespace of its own, with
	// loopback only (spec network: isolated).
	IsolatedNetwork bool `json:"isolatedNetwork,omitempty"`
	// Fenced: the task runs under a lease fence (drivers.TaskConfig.Fenced),
	// which the shim enforces; a missing lease file then means stop.
	Fenced bool `json:"fenced,omitempty"`
	// Secrets are written to a tmpfs at SandboxDir/secrets, 0400, owned by UID.
	Secrets []secretFile `json:"secrets,omitempty"`

	// Checkpointable runs the task without namespaces of its own, through
	// `strata __plain`, so that criu can dump it (checkpoint.go).
	Checkpointable bool `json:"checkpointable,omitempty"`
	// RestorePidFile is set when Command is a criu restore (with
	// --restore-detached) instead of the task: once it succeeds, the file
	// names the restored task, which the shim, as subreaper, inherits.
	RestorePidFile string `json:"restorePidFile,omitempty"`
	// RestoreTree: the restore is of a namespaced task (its init is the
	// root of the image's tree). The restorer enters a cgroup namespace
	// in the task's cgroups first, and passes criu the init's status pipe
	// (statusFD): the restored init reports to this shim.
	RestoreTree bool `json:"restoreTree,omitempty"`
}

// secretFile is one secret delivered as a file.
type secretFile struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// runInfo is the shim's report that the task started.
type runInfo struct {
	PID       int       `json:"pid"`               // the task's main process
	InitPID   int       `json:"initPid,omitempty"` // pid 1 of its pid namespace
	StartedAt time.Time `json:"startedAt"`
}
