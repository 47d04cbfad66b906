package exec

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// Names inside a task directory that belong to the task itself.
const (
	sandboxName = "local"   // the task's own directory: $STRATA_TASK_DIR, its default working directory
	secretsName = "secrets" // under the sandbox: the tmpfs holding secret files
)

// taskUser resolves the user a task runs as and applies the root policy
// to the ids (the task's only group is its gid: taskmain sets no other).
func (d *Driver) taskUser(cfg *drivers.TaskConfig) (taskUser, error) {
	u, err := resolveUser(cfg.Task.User)
	if err != nil {
		return u, err
	}
	return u, drivers.CheckRoot(fmt.Sprintf("task user %q", cfg.Task.User), u.UID, u.GID, nil, d.cfg.AllowRootTasks, cfg.RootVeto)
}

// taskSpec prepares the task's directories and describes everything the
// shim, its init and the task stage need. The task directory itself
// (spec, logs, exit status) becomes root's alone, 0700; the task gets
// TaskDir/local, 0700 and owned by its user.
func (d *Driver) taskSpec(cfg *drivers.TaskConfig, group cgroup.Group, rel string) (*spec, error) {
	u, err := d.taskUser(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.Chown(cfg.TaskDir, 0, 0); err != nil {
		return nil, fmt.Errorf("own task dir: %w", err)
	}
	if err := os.Chmod(cfg.TaskDir, 0o700); err != nil {
		return nil, fmt.Errorf("protect task dir: %w", err)
	}
	sandbox := filepath.Join(cfg.TaskDir, sandboxName)
	if err := os.MkdirAll(sandbox, 0o700); err != nil {
		return nil, fmt.Errorf("create task's directory: %w", err)
	}
	// A symlink planted by an earlier run of the task must not redirect
	// the chown: Lchown acts on the entry itself.
	if err := os.Lchown(sandbox, u.UID, u.GID); err != nil {
		return nil, fmt.Errorf("own task's directory: %w", err)
	}
	if err := os.Chmod(sandbox, 0o700); err != nil {
		return nil, fmt.Errorf("protect task's directory: %w", err)
	}
	env := make(map[string]string, len(cfg.Env)+4)
	for k, v := range cfg.Env {
		env[k] = v
	}
	env["STRATA_TASK_DIR"] = sandbox
	if _, ok := env["HOME"]; !ok {
		env["HOME"] = sandbox
	}
	var files []secretFile
	for _, sec := range cfg.Task.Secrets {
		if sec.Env != "" {
			env[sec.Env] = sec.Value
			continue
		}
		files = append(files, secretFile{Name: sec.Name, Value: sec.Value})
	}
	if len(files) > 0 {
		dir := filepath.Join(sandbox, secretsName)
		// The task owns the sandbox: whatever it left at this name (a
		// symlink to redirect the mount, a file) is replaced.
		if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
			os.RemoveAll(dir)
		}
		if err := os.Mkdir(dir, 0o500); err != nil && !os.IsExist(err) {
			return nil, fmt.Errorf("create secrets mount point: %w", err)
		}
		env["STRATA_SECRETS_DIR"] = dir
	}
	workDir := cfg.Task.WorkDir
	if workDir == "" {
		workDir = sandbox
	}
	tasksRoot := d.cfg.TasksRoot
	if tasksRoot == "" {
		tasksRoot = filepath.Dir(filepath.Dir(cfg.TaskDir))
	}
	hide := append([]string(nil), drivers.ScratchDirs...)
	if tasksRoot != "/" && tasksRoot != "." {
		hide = append([]string{tasksRoot}, hide...)
	}
	return &spec{
		Command:         cfg.Task.Command,
		Env:             envList(env),
		WorkDir:         workDir,
		ExecCommand:     []string{d.cfg.ShimCommand[0], "__exec"},
		ProcsFiles:      group.ProcsFiles(),
		CgroupVersion:   int(d.version),
		CgroupRoot:      d.cfg.CgroupRoot,
		CgroupRel:       rel,
		LogMaxBytes:     cfg.LogMaxBytes,
		LogMaxFiles:     cfg.LogMaxFiles,
		UID:             u.UID,
		GID:             u.GID,
		SandboxDir:      sandbox,
		HidePaths:       hide,
		CgroupDirs:      group.Dirs(),
		Secrets:         files,
		IsolatedNetwork: cfg.Task.Network == "isolated",
		Fenced:          cfg.Fenced,
		ScratchBytes:    drivers.ScratchBytes(cfg.Resources.MemoryBytes),
	}, nil
}
