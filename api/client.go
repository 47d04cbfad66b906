package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
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

// Client talks to a Strata server's /v1 API. It is safe for concurrent use.
type Client struct {
	Addr string
	HTTP *http.Client
}

// NewClient returns a client for addr; empty means $STRATA_ADDR, then DefaultAddr.
func NewClient(addr string) *Client {
	if addr == "" {
		addr = os.Getenv("STRATA_ADDR")
	}
	if addr == "" {
		addr = DefaultAddr
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return &Client{Addr: strings.TrimRight(addr, "/"), HTTP: &http.Client{}}
}

// QueryMeta is the index of a read, for the next blocking query.
type QueryMeta struct{ Index uint64 }

func (c *Client) do(ctx context.Context, method, path string, body io.Reader, contentType string, out any) (QueryMeta, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.Addr+path, body)
	if err != nil {
		return QueryMeta{}, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return QueryMeta{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	var meta QueryMeta
	if v := resp.Header.Get("X-Strata-Index"); v != "" {
		meta.Index, _ = strconv.ParseUint(v, 10, 64)
	}
	if resp.StatusCode >= 300 {
		return meta, decodeError(resp)
	}
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return meta, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return meta, fmt.Errorf("%s %s: decode response: %w", method, path, err)
	}
	return meta, nil
}

func decodeError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var er ErrorResponse
	if json.Unmarshal(b, &er) == nil && er.Error != "" {
		return &Error{StatusCode: resp.StatusCode, Code: er.Code, Message: er.Error, Fields: er.Fields}
	}
	return &Error{StatusCode: resp.StatusCode, Message: fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(b)))}
}

func (c *Client) get(ctx context.Context, path string, q *Query, out any) (QueryMeta, error) {
	return c.do(ctx, http.MethodGet, path+q.encode(), nil, "", out)
}

func (c *Client) postJSON(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, http.MethodPost, path, bytes.NewReader(b), "application/json", out)
	return err
}

// Query holds blocking-query parameters; nil means a plain read.
type Query struct {
	Index uint64
	Wait  time.Duration
}

func (q *Query) encode() string {
	if q == nil || q.Index == 0 {
		return ""
	}
	v := url.Values{"index": {strconv.FormatUint(q.Index, 10)}}
	if q.Wait > 0 {
		v.Set("wait", q.Wait.String())
	}
	return "?" + v.Encode()
}

// RegisterWorkload submits a Workload document (YAML or JSON) as written.
func (c *Client) RegisterWorkload(ctx context.Context, doc []byte) (*RegisterResponse, error) {
	var out RegisterResponse
	_, err := c.do(ctx, http.MethodPost, "/v1/workloads", bytes.NewReader(doc), "application/yaml", &out)
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
	_, err := c.do(ctx, http.MethodDelete, path, nil, "", &out)
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Addr+"/v1/allocations/"+url.PathEscape(allocID)+"/logs?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("logs of %s: %w", allocID, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, decodeError(resp)
	}
	return resp.Body, nil
}

// RegisterNode registers or refreshes a node (agent API).
func (c *Client) RegisterNode(ctx context.Context, n *Node) error {
	return c.postJSON(ctx, "/v1/agent/nodes", n, nil)
}

// Heartbeat tells the server the node is alive (agent API).
func (c *Client) Heartbeat(ctx context.Context, nodeID string) error {
	_, err := c.do(ctx, http.MethodPut, "/v1/agent/nodes/"+url.PathEscape(nodeID)+"/heartbeat", nil, "", nil)
	var e *Error
	if errors.As(err, &e) && e.Code == "node-unknown" {
		return fmt.Errorf("%w: %s", ErrNodeUnknown, e.Message)
	}
	return err
}

// NodeAllocations is the agent's blocking watch of its allocations.
func (c *Client) NodeAllocations(ctx context.Context, nodeID string, minIndex uint64, wait time.Duration) ([]*Allocation, uint64, error) {
	var out []*Allocation
	m, err := c.get(ctx, "/v1/agent/nodes/"+url.PathEscape(nodeID)+"/allocations", &Query{Index: minIndex, Wait: wait}, &out)
	var e *Error
	if errors.As(err, &e) && e.Code == "node-unknown" {
		return nil, 0, fmt.Errorf("%w: %s", ErrNodeUnknown, e.Message)
	}
	return out, m.Index, err
}

// UpdateAllocations reports allocation status (agent API).
func (c *Client) UpdateAllocations(ctx context.Context, updates []*AllocUpdate) error {
	return c.postJSON(ctx, "/v1/agent/allocations", map[string]any{"updates": updates}, nil)
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
		m, err := c.do(ctx, http.MethodGet, path, nil, "", &out)
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
	_, err := c.do(ctx, http.MethodPut, "/v1/cell/config", bytes.NewReader(doc), "application/yaml", &out)
	return &out, err
}
