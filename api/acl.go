package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// Capabilities an ACL policy grants. Read, submit and logs are granted per
// namespace; the others are the cell's.
const (
	CapRead        = "read"         // list and read workloads, allocations, evaluations, events, nodes, the cell config
	CapSubmit      = "submit"       // register, update, stop and purge workloads
	CapLogs        = "logs"         // read tasks' logs (and, later, exec into them)
	CapNodeOperate = "node-operate" // drain and operate nodes
	CapCellManage  = "cell-manage"  // the cell config, raft peers, snapshots
	CapACLAdmin    = "acl-admin"    // policies and tokens
)

// NamespaceCapabilities are the capabilities a policy may grant in a
// namespace; CellCapabilities those it may grant on the cell.
var (
	NamespaceCapabilities = []string{CapRead, CapSubmit, CapLogs}
	CellCapabilities      = []string{CapRead, CapNodeOperate, CapCellManage, CapACLAdmin}
)

// DefaultNamespace is the namespace of every workload until namespaces
// can be chosen.
const DefaultNamespace = "default"

// ACLPolicy grants capabilities: per namespace ("*": every namespace) and
// on the cell.
type ACLPolicy struct {
	Name        string              `json:"name"`
	Description string              `json:"description,omitempty"`
	Namespaces  map[string][]string `json:"namespaces,omitempty"`
	Cell        []string            `json:"cell,omitempty"`
	CreateIndex uint64              `json:"createIndex"`
	ModifyIndex uint64              `json:"modifyIndex"`
}

// ACLToken is a credential. Its SecretID is shown once, when the token is
// created; the cell keeps only a hash of it. AccessorID names the token
// in listings and the audit log.
type ACLToken struct {
	AccessorID string     `json:"accessorId"`
	SecretID   string     `json:"secretId,omitempty"`
	Name       string     `json:"name"`
	Policies   []string   `json:"policies,omitempty"`
	Management bool       `json:"management,omitempty"` // every capability, everywhere
	CreateTime time.Time  `json:"createTime"`
	ExpiresAt  *time.Time `json:"expiresAt,omitempty"`
	Revoked    bool       `json:"revoked,omitempty"`
	RevokeTime *time.Time `json:"revokeTime,omitempty"`

	CreateIndex uint64 `json:"createIndex"`
	ModifyIndex uint64 `json:"modifyIndex"`
}

// ACLTokenRequest creates a token.
type ACLTokenRequest struct {
	Name     string   `json:"name"`
	Policies []string `json:"policies,omitempty"`
	// TTL, a Go duration ("24h"), makes the token expire; empty: never.
	TTL        string `json:"ttl,omitempty"`
	Management bool   `json:"management,omitempty"`
}

// ACLBootstrap creates the cell's first management token; it works once.
func (c *Client) ACLBootstrap(ctx context.Context) (*ACLToken, error) {
	var out ACLToken
	err := c.postJSON(ctx, "/v1/acl/bootstrap", struct{}{}, &out, false)
	return &out, err
}

// ACLPolicies lists the policies.
func (c *Client) ACLPolicies(ctx context.Context) ([]*ACLPolicy, error) {
	var out []*ACLPolicy
	_, err := c.get(ctx, "/v1/acl/policies", nil, &out)
	return out, err
}

// ACLPolicy reads one policy.
func (c *Client) ACLPolicy(ctx context.Context, name string) (*ACLPolicy, error) {
	var out ACLPolicy
	_, err := c.get(ctx, "/v1/acl/policies/"+url.PathEscape(name), nil, &out)
	return &out, err
}

// ApplyACLPolicy creates or replaces a policy.
func (c *Client) ApplyACLPolicy(ctx context.Context, p *ACLPolicy) (*ACLPolicy, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var out ACLPolicy
	_, err = c.do(ctx, request{method: http.MethodPut, path: "/v1/acl/policies", body: b, contentType: "application/json", idempotent: true}, &out)
	return &out, err
}

// DeleteACLPolicy deletes a policy; tokens that name it lose what it granted.
func (c *Client) DeleteACLPolicy(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: "/v1/acl/policies/" + url.PathEscape(name), idempotent: true}, nil)
	return err
}

// ACLTokens lists the tokens (without their secrets).
func (c *Client) ACLTokens(ctx context.Context) ([]*ACLToken, error) {
	var out []*ACLToken
	_, err := c.get(ctx, "/v1/acl/tokens", nil, &out)
	return out, err
}

// ACLToken reads one token by its accessor id.
func (c *Client) ACLToken(ctx context.Context, accessor string) (*ACLToken, error) {
	var out ACLToken
	_, err := c.get(ctx, "/v1/acl/tokens/"+url.PathEscape(accessor), nil, &out)
	return &out, err
}

// ACLTokenSelf reads the token the client sends.
func (c *Client) ACLTokenSelf(ctx context.Context) (*ACLToken, error) {
	var out ACLToken
	_, err := c.get(ctx, "/v1/acl/token/self", nil, &out)
	return &out, err
}

// CreateACLToken creates a token; the answer holds its secret, once.
func (c *Client) CreateACLToken(ctx context.Context, req *ACLTokenRequest) (*ACLToken, error) {
	var out ACLToken
	err := c.postJSON(ctx, "/v1/acl/tokens", req, &out, false)
	return &out, err
}

// RevokeACLToken revokes a token by its accessor id.
func (c *Client) RevokeACLToken(ctx context.Context, accessor string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: "/v1/acl/tokens/" + url.PathEscape(accessor), idempotent: true}, nil)
	return err
}
