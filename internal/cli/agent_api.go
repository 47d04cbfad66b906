package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent"
	"github.com/strata-dev/strata/internal/spec"
)

// agentAttemptTimeout bounds one attempt of an agent's call to a server
// (plus a blocking query's wait): a server that is paused, or forwards to
// a paused leader, is left for the next one well within the heartbeat TTL
// (10 s by default). With the client's default (40 s) a SIGSTOPped server
// held the heartbeats of every agent that used it past the TTL, and the
// cell marked those nodes down though a majority ran (test/faults,
// TestServerPausedPastElectionTimeout). The agent's calls are small; a
// write held through an election is retried on the next server.
const agentAttemptTimeout = 2 * time.Second

// agentAPI adapts the HTTP client to the agent's ServerAPI seam (the
// client's ErrNodeUnknown is the agent's). It also gives the node a name
// of its own when the agent chose the host's and another node has it, and
// stops the agent when the cell refuses its join token, which no retry can
// change.
type agentAPI struct {
	*api.Client
	naming *nodeNaming
	stop   *agentStop
}

var (
	_ agent.ServerAPI     = agentAPI{}
	_ agent.ServerSkipper = agentAPI{} // from *api.Client: a refused server is skipped
)

func stampOf(m api.QueryMeta) agent.Stamp {
	return agent.Stamp{CellID: m.CellID, Index: m.AppliedIndex, Server: m.Server}
}

// errRegistrationRefused is the cause a refused join token stops the agent
// with.
var errRegistrationRefused = errors.New("the cell refused to register this node")

func (a agentAPI) RegisterNode(ctx context.Context, n *api.Node) (agent.Stamp, error) {
	name, byDefault := a.naming.get()
	a.naming.apply(n, name)
	m, err := a.Client.RegisterNodeNamed(ctx, n, byDefault)
	var e *api.Error
	if errors.As(err, &e) && e.Code == api.CodeNodeNameTaken && byDefault {
		if other, renamed := a.naming.rename(); renamed {
			a.naming.apply(n, other)
			m, err = a.Client.RegisterNodeNamed(ctx, n, false)
		}
	}
	if errors.As(err, &e) && e.Code == api.CodeJoinToken {
		err = fmt.Errorf("%w: %s", errRegistrationRefused, e.Message)
		a.stop.now(err)
	}
	return stampOf(m), err
}

func (a agentAPI) Heartbeat(ctx context.Context, nodeID string) (agent.Beat, error) {
	resp, m, err := a.Client.NodeHeartbeatMeta(ctx, nodeID)
	return agent.Beat{Stamp: stampOf(m), Interval: resp.Interval(), Lease: resp.LeaseDuration()}, err
}

// NodeAllocations returns the client's ErrNodeUnknown, which is the
// agent's, so a watch of a node the server forgot re-registers it.
func (a agentAPI) NodeAllocations(ctx context.Context, nodeID string, minIndex uint64, wait time.Duration) ([]*api.Allocation, uint64, agent.Stamp, error) {
	allocs, m, err := a.Client.NodeAllocationsMeta(ctx, nodeID, minIndex, wait)
	return allocs, m.Index, stampOf(m), err
}

// agentStop ends the agent's run with a cause (runAgent sets it).
type agentStop struct {
	mu     sync.Mutex
	cancel context.CancelCauseFunc
}

func (s *agentStop) set(cancel context.CancelCauseFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel = cancel
}

func (s *agentStop) now(cause error) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel(cause)
	}
}

// nodeNameFile keeps, in the agent's data dir, the name the agent chose
// for itself when the host's was taken, so it keeps it across restarts.
const nodeNameFile = "node-name"

// nodeNaming is the node's name: the one given (--name, or the config
// file's name), else the one chosen before and kept in the data dir, else
// the host's. A name chosen by default that another node of the cell has
// becomes host-<first 6 characters of the node id>.
type nodeNaming struct {
	log       *slog.Logger
	mu        sync.Mutex
	dataDir   string
	id        string
	current   string
	byDefault bool
	renamed   bool
}

// chooseNodeName decides the node's name at start.
func chooseNodeName(dataDir, id, given string, log *slog.Logger) (*nodeNaming, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &nodeNaming{log: log, dataDir: dataDir, id: id, current: given}
	if given != "" {
		return n, nil
	}
	n.byDefault = true
	if b, err := os.ReadFile(filepath.Join(dataDir, nodeNameFile)); err == nil && spec.CheckID(strings.TrimSpace(string(b))) == "" {
		n.current, n.renamed = strings.TrimSpace(string(b)), true
		return n, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, failf("--name is not given and the host has no name (%v): give one", err)
	}
	n.current = hostNodeName(host)
	return n, nil
}

// hostNodeName is the node name a host's name gives: the name itself when
// it is a valid node name (as agents always named their nodes), else the
// name with the characters a node name cannot hold replaced by '-'.
func hostNodeName(host string) string {
	if spec.CheckID(host) == "" {
		return host
	}
	b := []byte(host)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '-'
		}
	}
	name := strings.Trim(string(b), "-_.")
	if len(name) > spec.MaxIDLen-7 {
		name = name[:spec.MaxIDLen-7] // room for the suffix a taken name gets
	}
	if spec.CheckID(name) != "" {
		return "node"
	}
	return name
}

func (n *nodeNaming) get() (string, bool) {
	if n == nil {
		return "", false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.current, n.byDefault && !n.renamed
}

// apply gives the node name (and its node label, which carries the name).
func (n *nodeNaming) apply(node *api.Node, name string) {
	if n == nil || name == "" || node.Name == name {
		return
	}
	if node.Labels[api.LabelNode] == node.Name {
		labels := make(map[string]string, len(node.Labels))
		for k, v := range node.Labels {
			labels[k] = v
		}
		labels[api.LabelNode] = name
		node.Labels = labels
	}
	node.Name = name
}

// rename chooses host-<id prefix> once and keeps it in the data dir.
func (n *nodeNaming) rename() (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.renamed {
		return n.current, false
	}
	taken, base := n.current, n.current
	if len(base) > spec.MaxIDLen-7 {
		base = base[:spec.MaxIDLen-7]
	}
	n.current, n.renamed = base+"-"+n.id[:min(6, len(n.id))], true
	n.log.Warn("another node of the cell has this host's name; registering under a name of its own (give --name to choose one)",
		"taken", taken, "name", n.current)
	// Not fatal if it cannot be kept: the next start chooses the same way.
	os.WriteFile(filepath.Join(n.dataDir, nodeNameFile), []byte(n.current+"\n"), 0o644)
	return n.current, true
}
