package containerd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// What a container shares with an exec task beyond its limits: the root
// policy, secrets as variables, the task's own directory.

// ErrRootNotAllowed is wrapped by StartTask when the container would run
// as root (uid 0, gid 0 or group 0, from its image's user or the task's)
// where root tasks are not allowed (drivers.CheckRoot).
var ErrRootNotAllowed = drivers.ErrRootNotAllowed

// withRootPolicy runs last: it applies the root policy exec tasks follow
// to the ids of the final spec (the image's user when the task names
// none: an image without one runs as uid 0), additional groups included.
func withRootPolicy(user string, allowRoot bool, veto string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Process == nil {
			return errors.New("spec has no process")
		}
		who := fmt.Sprintf("task user %q", user)
		if user == "" {
			who = "the image's user (the task names none)"
		}
		u := s.Process.User
		groups := make([]int, len(u.AdditionalGids))
		for i, g := range u.AdditionalGids {
			groups[i] = int(g)
		}
		return drivers.CheckRoot(who, int(u.UID), int(u.GID), groups, allowRoot, veto)
	}
}

// taskEnv is the task's environment plus its secrets that are delivered
// as variables.
func taskEnv(cfg *drivers.TaskConfig) map[string]string {
	env := make(map[string]string, len(cfg.Env)+len(cfg.Task.Secrets))
	for k, v := range cfg.Env {
		env[k] = v
	}
	for _, sec := range cfg.Task.Secrets {
		if sec.Env != "" {
			env[sec.Env] = sec.Value
		}
	}
	return env
}

// ErrFileSecrets is wrapped by StartTask for a task with secrets delivered
// as files: the exec driver puts them on a tmpfs only the task can read,
// which this driver does not do yet (deliver them with env instead).
var ErrFileSecrets = errors.New("the containerd driver delivers secrets only as environment variables (secrets[].env)")

func checkSecrets(t *api.Task) error {
	for i, sec := range t.Secrets {
		if sec.Env == "" {
			return fmt.Errorf("secrets[%d] %q: %w", i, sec.Name, ErrFileSecrets)
		}
	}
	return nil
}

// sandboxName is the task's own directory inside its task directory, as
// the exec driver names it; the container sees it at SandboxPath.
const sandboxName = "local"

// SandboxPath is where a container finds its task's own directory
// ($STRATA_TASK_DIR), which outlives the container (restarts keep it).
const SandboxPath = "/local"

// withSandbox runs after the user is known: it makes the task's directory
// (0700, owned by the container's user), binds it at SandboxPath and
// points STRATA_TASK_DIR there. The task directory itself (logs, the
// driver's files) stays out of the container.
func withSandbox(dir string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Process == nil {
			return errors.New("spec has no process")
		}
		// Whatever an earlier run left at this name that is not a
		// directory (a symlink to redirect the chown) is replaced.
		if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
			os.RemoveAll(dir)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create task's directory: %w", err)
		}
		if err := os.Lchown(dir, int(s.Process.User.UID), int(s.Process.User.GID)); err != nil {
			return fmt.Errorf("own task's directory: %w", err)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("protect task's directory: %w", err)
		}
		s.Mounts = append(s.Mounts, specs.Mount{Destination: SandboxPath, Type: "bind", Source: dir, Options: []string{"rbind", "rw"}})
		env := s.Process.Env[:0]
		for _, kv := range s.Process.Env {
			if !strings.HasPrefix(kv, "STRATA_TASK_DIR=") {
				env = append(env, kv)
			}
		}
		s.Process.Env = append(env, "STRATA_TASK_DIR="+SandboxPath)
		return nil
	}
}
