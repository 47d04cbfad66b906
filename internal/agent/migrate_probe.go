package agent

import (
	"context"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/criu"
	"github.com/strata-dev/strata/internal/agent/drivers/exec"
)

// MigrationAPI is what migrations need from the control plane, beside
// ServerAPI; the API client has it. An agent whose ServerAPI lacks it
// cannot take part in migrations (test fakes).
type MigrationAPI interface {
	IncomingMigration(ctx context.Context, nodeID, allocID string) (*api.Allocation, error)
	ReportMigration(ctx context.Context, allocID string, req *api.MigrationOutcomeRequest) (*api.MigrationOutcomeResponse, error)
}

func (a *Agent) migrationAPI() MigrationAPI {
	m, _ := a.cfg.API.(MigrationAPI)
	return m
}

type checkpointProbe struct {
	path string // a working criu, or ""
	attr *api.NodeCheckpoint
	// noPreCopy says why a move copies no memory ahead while its tasks
	// run (api.MigrationReport.PreCopy).
	noPreCopy string
}

// probeCheckpoint finds and checks criu (Config.CriuPath).
func (a *Agent) probeCheckpoint() checkpointProbe {
	if a.cfg.CriuPath == "none" {
		return checkpointProbe{attr: &api.NodeCheckpoint{Reason: "disabled (--criu-path none)"}}
	}
	info := criu.ProbeOnce(context.Background(), a.cfg.CriuPath)
	if !info.Available {
		a.log.Info("tasks cannot be checkpointed on this node", "reason", info.Reason)
		return checkpointProbe{attr: &api.NodeCheckpoint{Reason: info.Reason}}
	}
	noPreCopy := "pre-copy is not implemented: the whole image is dumped while the tasks are stopped"
	if info.NoPreDump != "" {
		noPreCopy = "criu cannot pre-dump on this node: " + info.NoPreDump
	}
	attr := &api.NodeCheckpoint{Available: true, Tool: "criu " + info.Version}
	// `criu check` passing is not enough (issue 18 defect 14): dump a
	// task as a move would, of the default task user, and of root when
	// that fails; the node says what it can really do.
	uid, gid, err := exec.ResolveUser("")
	if err != nil {
		uid, gid = 65534, 65534
	}
	if why := criu.ProbeDumpOnce(context.Background(), info.Path, uid, gid); why != "" {
		if whyRoot := criu.ProbeDumpOnce(context.Background(), info.Path, 0, 0); whyRoot != "" {
			a.log.Info("tasks cannot be checkpointed on this node", "reason", whyRoot)
			return checkpointProbe{attr: &api.NodeCheckpoint{Tool: attr.Tool, Reason: whyRoot}}
		}
		attr.RootOnly = true
		attr.Limit = why + " (only root's tasks keep their memory across moves; the agent lacks CAP_SYS_RESOURCE?)"
		a.log.Warn("criu dumps root's tasks only on this node", "reason", why)
	}
	a.log.Info("checkpoint/restore available", "criu", info.Path, "version", info.Version, "pre_copy", noPreCopy, "root_only", attr.RootOnly)
	return checkpointProbe{path: info.Path, attr: attr, noPreCopy: noPreCopy}
}
