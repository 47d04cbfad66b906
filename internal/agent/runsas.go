package agent

import (
	"fmt"
	"os"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// runsAs reads the real uid and gid of pid, "uid:gid", from procRoot's
// status file (api.TaskState.RunsAs); "" when the process is gone.
func runsAs(procRoot string, pid int) string {
	if pid <= 0 {
		return ""
	}
	if procRoot == "" {
		procRoot = "/proc"
	}
	data, err := os.ReadFile(fmt.Sprintf("%s/%d/status", procRoot, pid))
	if err != nil {
		return ""
	}
	var uid, gid string
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				uid = f[0]
			}
		}
		if v, ok := strings.CutPrefix(line, "Gid:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				gid = f[0]
			}
		}
	}
	if uid == "" || gid == "" {
		return ""
	}
	return uid + ":" + gid
}

// runsAsHook reads who the task's process runs as once it runs (a
// poststart hook): api.TaskState.RunsAs, what a move can dump depends on.
type runsAsHook struct{ procRoot string }

func (h runsAsHook) poststart(handle *drivers.TaskHandle, st *api.TaskState) {
	st.RunsAs = runsAs(h.procRoot, handle.PID)
}
