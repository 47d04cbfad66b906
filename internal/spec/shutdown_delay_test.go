package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestShutdownDelayDefaults: a group that offers a service waits
// api.DefaultShutdownDelay before its tasks are signalled, unless it says
// otherwise (0 included); a group without services does not wait.
func TestShutdownDelayDefaults(t *testing.T) {
	const service = "        - {name: web, port: http}\n"
	const port = "        - {name: http}\n"
	tests := []struct {
		name string
		doc  string
		want time.Duration
	}{
		{"a service: the default", healthDoc(port, service, ""), api.DefaultShutdownDelay},
		{"no service: none", healthDoc(port, "", ""), 0},
		{"a service, set", withGroupLine(healthDoc(port, service, ""), "shutdownDelay: 15s"), 15 * time.Second},
		{"a service, set to 0", withGroupLine(healthDoc(port, service, ""), "shutdownDelay: 0s"), 0},
		{"no service, set", withGroupLine(healthDoc(port, "", ""), "shutdownDelay: 1s"), time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			equal(t, "shutdownDelay", mustParse(t, tc.doc).Groups[0].ShutdownDelay, tc.want)
		})
	}
}

// withGroupLine adds a field to healthDoc's group, right after its name.
func withGroupLine(doc, line string) string {
	return strings.Replace(doc, "    - name: g\n", "    - name: g\n      "+line+"\n", 1)
}
