package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/httplimit/limittest"
)

// Issue 7, defect 8, on the agent: its own API (logs, health) closes
// connections that send nothing and caps the connections of one client.
func TestAgentHTTPLimitsApply(t *testing.T) {
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) {
		c.HTTP = httplimit.Config{ReadHeaderTimeout: 200 * time.Millisecond, MaxConnsPerClient: 1}
	})
	limittest.CheckCapAndHeaderTimeout(t, strings.TrimPrefix(srv.node(ag.NodeID()).HTTPAddr, "http://"))
}
