package api

import (
	"context"
	"net/url"
)

// Services lists every service offered in the client's namespace (GET
// /v1/services).
// With q's Index and Wait set it blocks until something changed.
func (c *Client) Services(ctx context.Context, q *Query) ([]ServiceSummary, QueryMeta, error) {
	var out []ServiceSummary
	m, err := c.get(ctx, "/v1/services", q, &out)
	return out, m, err
}

// Service lists the healthy endpoints of one service (GET
// /v1/services/{name}); blocking like Services.
func (c *Client) Service(ctx context.Context, name string, q *Query) ([]ServiceEndpoint, QueryMeta, error) {
	var out []ServiceEndpoint
	m, err := c.get(ctx, "/v1/services/"+url.PathEscape(name), q, &out)
	return out, m, err
}
