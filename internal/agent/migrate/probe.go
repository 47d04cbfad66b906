package migrate

import (
	"context"
	"log/slog"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/criu"
)

// Probe is what the node can checkpoint, found once at agent start.
type Probe struct {
	// CriuPath is a working criu, or "".
	CriuPath string
	// Attr is the node's api.Node.Checkpoint (Drivers filled by the agent).
	Attr *api.NodeCheckpoint
	// NoPreCopy says why a move copies no memory ahead while its tasks
	// run (api.MigrationReport.PreCopy).
	NoPreCopy string
}

// ProbeNode finds and checks criu (criuPath; "" criu on PATH, "none": the
// node does not checkpoint), then dumps a task as a move would, of the
// default task user (uid, gid), and of root when that fails: `criu check`
// passing is not enough (issue 18 defect 14); the node says what it can
// really do.
func ProbeNode(criuPath string, uid, gid int, log *slog.Logger) Probe {
	if criuPath == "none" {
		return Probe{Attr: &api.NodeCheckpoint{Reason: "disabled (--criu-path none)"}}
	}
	info := criu.ProbeOnce(context.Background(), criuPath)
	if !info.Available {
		log.Info("tasks cannot be checkpointed on this node", "reason", info.Reason)
		return Probe{Attr: &api.NodeCheckpoint{Reason: info.Reason}}
	}
	noPreCopy := "pre-copy is not implemented: the whole image is dumped while the tasks are stopped"
	if info.NoPreDump != "" {
		noPreCopy = "criu cannot pre-dump on this node: " + info.NoPreDump
	}
	attr := &api.NodeCheckpoint{Available: true, Tool: "criu " + info.Version}
	if why := criu.ProbeDumpOnce(context.Background(), info.Path, uid, gid); why != "" {
		if whyRoot := criu.ProbeDumpOnce(context.Background(), info.Path, 0, 0); whyRoot != "" {
			log.Info("tasks cannot be checkpointed on this node", "reason", whyRoot)
			return Probe{Attr: &api.NodeCheckpoint{Tool: attr.Tool, Reason: whyRoot}}
		}
		attr.RootOnly = true
		attr.Limit = why + " (only root's tasks keep their memory across moves; the agent lacks CAP_SYS_RESOURCE?)"
		log.Warn("criu dumps root's tasks only on this node", "reason", why)
	}
	log.Info("checkpoint/restore available", "criu", info.Path, "version", info.Version, "pre_copy", noPreCopy, "root_only", attr.RootOnly)
	return Probe{CriuPath: info.Path, Attr: attr, NoPreCopy: noPreCopy}
}
