package servertest

import (
	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/nodeauth"
)

// The credentials of a test cell, in one place: tests that start agents,
// register nodes or call the API as a user get them here, so that when the
// cell asks for more (TLS, ACL tokens) only this file changes.

// JoinToken is the cell's join token: every server of a Cell is started
// with it, and agents register new nodes with it.
func (c *Cell) JoinToken() string { return c.joinToken }

// NodeIdentity returns a new identity for node id (a fresh secret) that
// may register with this cell.
func (c *Cell) NodeIdentity(id string) *api.NodeIdentity {
	return &api.NodeIdentity{ID: id, Secret: nodeauth.NewSecret(), JoinToken: c.joinToken}
}

// AgentClient returns a client for every server of the cell that speaks
// as node id (a fresh identity: the first RegisterNode claims the id).
func (c *Cell) AgentClient(id string) *api.Client {
	cl := api.NewClientFor(c.Addrs())
	cl.Node = c.NodeIdentity(id)
	return cl
}

// Client returns a client for every server of the cell, as a user.
func (c *Cell) Client() *api.Client {
	return api.NewClientFor(c.Addrs())
}
