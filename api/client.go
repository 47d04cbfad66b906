package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultAddr is where the CLI looks for a server when $STRATA_ADDR is unset.
const DefaultAddr = "http://127.0.0.1:4680"

// ErrNodeUnknown is returned by Heartbeat and NodeAllocations when the
// server does not know the node (its state was lost or it never
// registered): the agent re-registers.
var ErrNodeUnknown = errors.New("node unknown to server")

// Error is a non-2xx answer from the server.
type Error struct {
	StatusCode int
	Code       string
	Message    string
	Fields     []FieldError
}

func (e *Error) Error() string {
	if len(e.Fields) > 0 {
		var b strings.Builder
		for i, f := range e.Fields {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(f.Path + ": " + f.Message)
		}
		return b.String()
	}
	return e.Message
}

// IsNotFound reports whether err is a 404 from the server.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == http.StatusNotFound
}

func (c *Client) get(ctx context.Context, path string, q *Query, out any) (QueryMeta, error) {
	return c.do(ctx, request{method: http.MethodGet, path: path + q.encode(), idempotent: true, wait: q.wait()}, out)
}

// postJSON sends a JSON body; idempotent says whether a retry after a
// failure in flight is safe.
func (c *Client) postJSON(ctx context.Context, path string, in, out any, idempotent bool) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, request{method: http.MethodPost, path: path, body: b, contentType: "application/json", idempotent: idempotent}, out)
	return err
}

// Query holds read parameters; nil means a plain consistent read.
type Query struct {
	// Index and Wait make a blocking query: the answer comes once the data
	// changed past Index, or after Wait.
	Index uint64
	Wait  time.Duration
	// Stale lets any server answer from its own state, possibly behind
	// the leader's (QueryMeta says how far); default: the leader answers
	// after confirming it still leads.
	Stale bool
}

func (q *Query) encode() string {
	if q == nil {
		return ""
	}
	v := url.Values{}
	if q.Index > 0 {
		v.Set("index", strconv.FormatUint(q.Index, 10))
		if q.Wait > 0 {
			v.Set("wait", q.Wait.String())
		}
	}
	if q.Stale {
		v.Set("stale", "true")
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// wait is how long the server may hold the query.
func (q *Query) wait() time.Duration {
	if q == nil || q.Index == 0 {
		return 0
	}
	if q.Wait == 0 {
		return 30 * time.Second // the server's default
	}
	return q.Wait
}

// RegisterWorkload submits a Workload document (YAML or JSON) as written.
func (c *Client) RegisterWorkload(ctx context.Context, doc []byte) (*RegisterResponse, error) {
	var out RegisterResponse
	// Not idempotent: registering twice makes two versions.
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/workloads", body: doc, contentType: "application/yaml"}, &out)
	return &out, err
}

// Workloads lists workloads.
func (c *Client) Workloads(ctx context.Context, q *Query) ([]WorkloadSummary, QueryMeta, error) {
	var out []WorkloadSummary
	m, err := c.get(ctx, "/v1/workloads", q, &out)
	return out, m, err
}

// WorkloadStatus returns one workload's status.
func (c *Client) WorkloadStatus(ctx context.Context, name string, q *Query) (*WorkloadStatus, QueryMeta, error) {
	var out WorkloadStatus
	m, err := c.get(ctx, "/v1/workloads/"+url.PathEscape(name), q, &out)
	return &out, m, err
}

// StopWorkload stops a workload; purge also removes it.
func (c *Client) StopWorkload(ctx context.Context, name string, purge bool) (*StopResponse, error) {
	path := "/v1/workloads/" + url.PathEscape(name)
	if purge {
		path += "?purge=true"
	}
	var out StopResponse
	// Stopping twice is stopping once; a second purge would answer 404.
	_, err := c.do(ctx, request{method: http.MethodDelete, path: path, idempotent: !purge}, &out)
	return &out, err
}

// Allocations lists allocations, of one workload when workload is set.
func (c *Client) Allocations(ctx context.Context, workload string, q *Query) ([]*Allocation, QueryMeta, error) {
	var out []*Allocation
	path := "/v1/allocations"
	if workload != "" {
		path = "/v1/workloads/" + url.PathEscape(workload) + "/allocations"
	}
	m, err := c.get(ctx, path, q, &out)
	return out, m, err
}

// Allocation returns one allocation by id or unique id prefix.
func (c *Client) Allocation(ctx context.Context, id string) (*Allocation, error) {
	var out Allocation
	_, err := c.get(ctx, "/v1/allocations/"+url.PathEscape(id), nil, &out)
	return &out, err
}

// Evaluation returns one evaluation.
func (c *Client) Evaluation(ctx context.Context, id string) (*Evaluation, error) {
	var out Evaluation
	_, err := c.get(ctx, "/v1/evaluations/"+url.PathEscape(id), nil, &out)
	return &out, err
}

// Evaluations lists all evaluations.
func (c *Client) Evaluations(ctx context.Context) ([]*Evaluation, error) {
	var out []*Evaluation
	_, err := c.get(ctx, "/v1/evaluations", nil, &out)
	return out, err
}

// Nodes lists nodes.
func (c *Client) Nodes(ctx context.Context, q *Query) ([]*Node, QueryMeta, error) {
	var out []*Node
	m, err := c.get(ctx, "/v1/nodes", q, &out)
	return out, m, err
}

// LogOptions selects a log stream.
type LogOptions struct {
	Task   string
	Stderr bool
	Follow bool
	Offset int64
}

// Logs streams a task's log; the caller closes the reader.
func (c *Client) Logs(ctx context.Context, allocID string, o LogOptions) (io.ReadCloser, error) {
	v := url.Values{}
	if o.Task != "" {
		v.Set("task", o.Task)
	}
	if o.Stderr {
		v.Set("stream", "stderr")
	}
	if o.Follow {
		v.Set("follow", "true")
	}
	if o.Offset > 0 {
		v.Set("offset", strconv.FormatInt(o.Offset, 10))
	}
	resp, _, err := c.send(ctx, request{method: http.MethodGet, idempotent: true, stream: true,
		path: "/v1/allocations/" + url.PathEscape(allocID) + "/logs?" + v.Encode()})
	if err != nil {
		return nil, fmt.Errorf("logs of %s: %w", allocID, err)
	}
	return resp.Body, nil
}

// RegisterNode registers or refreshes a node (agent API).
func (c *Client) RegisterNode(ctx context.Context, n *Node) error {
	_, err := c.RegisterNodeMeta(ctx, n)
	return err
}

// RegisterNodeMeta is RegisterNode that also returns what the answer says
// about the cell (QueryMeta.CellID, AppliedIndex).
func (c *Client) RegisterNodeMeta(ctx context.Context, n *Node) (QueryMeta, error) {
	return c.RegisterNodeNamed(ctx, n, false)
}

// RegisterNodeNamed is RegisterNodeMeta for an agent that tells whether its
// name is the default one it chose (the host's): a node new to the cell
// registering such a name that another node has is then refused with code
// CodeNodeNameTaken, and the agent chooses another.
func (c *Client) RegisterNodeNamed(ctx context.Context, n *Node, defaultName bool) (QueryMeta, error) {
	b, err := json.Marshal(n)
	if err != nil {
		return QueryMeta{}, err
	}
	req := request{method: http.MethodPost, path: "/v1/agent/nodes", body: b, contentType: "application/json"}
	if defaultName {
		req.header = http.Header{HeaderDefaultName: {"true"}}
	}
	return c.do(ctx, req, nil)
}

// Heartbeat tells the server the node is alive (agent API).
func (c *Client) Heartbeat(ctx context.Context, nodeID string) error {
	_, _, err := c.NodeHeartbeatMeta(ctx, nodeID)
	return err
}

// HeartbeatMeta is Heartbeat that also returns what the answer says about
// the cell.
func (c *Client) HeartbeatMeta(ctx context.Context, nodeID string) (QueryMeta, error) {
	_, m, err := c.NodeHeartbeatMeta(ctx, nodeID)
	return m, err
}

// NodeAllocations is the agent's blocking watch of its allocations.
func (c *Client) NodeAllocations(ctx context.Context, nodeID string, minIndex uint64, wait time.Duration) ([]*Allocation, uint64, error) {
	out, m, err := c.NodeAllocationsMeta(ctx, nodeID, minIndex, wait)
	return out, m.Index, err
}

// NodeAllocationsMeta is NodeAllocations that returns the whole QueryMeta:
// the index for the next watch and what the answer says about the cell.
func (c *Client) NodeAllocationsMeta(ctx context.Context, nodeID string, minIndex uint64, wait time.Duration) ([]*Allocation, QueryMeta, error) {
	var out []*Allocation
	m, err := c.get(ctx, "/v1/agent/nodes/"+url.PathEscape(nodeID)+"/allocations", &Query{Index: minIndex, Wait: wait}, &out)
	var e *Error
	if errors.As(err, &e) && e.Code == "node-unknown" {
		return nil, QueryMeta{}, fmt.Errorf("%w: %s", ErrNodeUnknown, e.Message)
	}
	return out, m, err
}

// UpdateAllocations reports allocation status (agent API).
func (c *Client) UpdateAllocations(ctx context.Context, updates []*AllocUpdate) error {
	// Reporting a status twice is reporting it once.
	return c.postJSON(ctx, "/v1/agent/allocations", map[string]any{"updates": updates}, nil, true)
}

// Events lists the cell's recent events, of one workload when set.
func (c *Client) Events(ctx context.Context, workload string, q *Query) ([]*Event, QueryMeta, error) {
	var out []*Event
	path := "/v1/events"
	if workload != "" {
		path += "?workload=" + url.QueryEscape(workload)
		if enc := q.encode(); enc != "" {
			path += "&" + enc[1:]
		}
		m, err := c.do(ctx, request{method: http.MethodGet, path: path, idempotent: true, wait: q.wait()}, &out)
		return out, m, err
	}
	m, err := c.get(ctx, path, q, &out)
	return out, m, err
}

// CellConfig returns the cell configuration.
func (c *Client) CellConfig(ctx context.Context, q *Query) (*CellConfig, QueryMeta, error) {
	var out CellConfig
	m, err := c.get(ctx, "/v1/cell/config", q, &out)
	return &out, m, err
}

// SetCellConfig replaces the cell configuration with a CellConfig document
// (YAML or JSON) as written.
func (c *Client) SetCellConfig(ctx context.Context, doc []byte) (*CellConfig, error) {
	var out CellConfig
	// Replacing the configuration twice is replacing it once.
	_, err := c.do(ctx, request{method: http.MethodPut, path: "/v1/cell/config", body: doc, contentType: "application/yaml", idempotent: true}, &out)
	return &out, err
}

// RaftConfiguration returns the cell's servers as the leader knows them;
// with q.Stale, as the server asked knows them, which works when the cell
// has no leader or the server is not ready.
func (c *Client) RaftConfiguration(ctx context.Context, q *Query) (*RaftConfiguration, error) {
	var out RaftConfiguration
	path := "/v1/operator/raft/configuration"
	if q != nil && q.Stale {
		path, q = "/v1/status/raft", nil
	}
	_, err := c.get(ctx, path, q, &out)
	return &out, err
}

// RemoveRaftPeer removes a server from the cell's raft configuration, named
// by its id or its server address (host:port).
func (c *Client) RemoveRaftPeer(ctx context.Context, idOrAddr string) (*RemovePeerResponse, error) {
	key := "id"
	if strings.Contains(idOrAddr, ":") {
		key = "address"
	}
	var out RemovePeerResponse
	_, err := c.do(ctx, request{method: http.MethodDelete, path: "/v1/operator/raft/peer?" + url.Values{key: {idOrAddr}}.Encode(), idempotent: true}, &out)
	return &out, err
}

// SaveSnapshot streams a consistent snapshot of the cell's state into w.
func (c *Client) SaveSnapshot(ctx context.Context, w io.Writer) (int64, error) {
	resp, _, err := c.send(ctx, request{method: http.MethodGet, path: "/v1/operator/snapshot", idempotent: true, stream: true})
	if err != nil {
		return 0, fmt.Errorf("save snapshot: %w", err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("save snapshot: read: %w", err)
	}
	return n, nil
}

// RestoreSnapshot replaces the cell's whole state with a snapshot file;
// open returns the file's contents from the start (it may be called again
// for a retry).
func (c *Client) RestoreSnapshot(ctx context.Context, open func() (io.ReadCloser, error)) (*SnapshotInfo, error) {
	var out SnapshotInfo
	// Not idempotent: writes made between two restores would be lost.
	_, err := c.do(ctx, request{method: http.MethodPut, path: "/v1/operator/snapshot", open: open, contentType: "application/octet-stream"}, &out)
	return &out, err
}
