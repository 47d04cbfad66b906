package cli

import (
	"strings"
	"testing"
)

// An agent whose name or labels the server would refuse stops at once
// with the flag named, instead of retrying its registration for ever.
func TestAgentRefusesBadNameAndLabels(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"agent", "--servers", "http://127.0.0.1:1", "--data-dir", t.TempDir(), "--label", "rack=r 1"}, `--label rack="r 1"`},
		{[]string{"agent", "--servers", "http://127.0.0.1:1", "--data-dir", t.TempDir(), "--label", "-x=y"}, `--label "-x"`},
		{[]string{"agent", "--servers", "http://127.0.0.1:1", "--data-dir", t.TempDir(), "--name", "../n"}, `--name "../n"`},
		{[]string{"agent", "--servers", "http://127.0.0.1:1", "--data-dir", t.TempDir(), "--dynamic-ports", "30000-20000"}, `--dynamic-ports: min (30000) must not be above max (20000)`},
		{[]string{"agent", "--servers", "http://127.0.0.1:1", "--data-dir", t.TempDir(), "--dynamic-ports", "20000"}, `--dynamic-ports: want LO-HI`},
		{[]string{"agent", "--servers", "http://127.0.0.1:1", "--data-dir", t.TempDir(), "--dynamic-ports", "0-70000"}, `--dynamic-ports: min must be a port between 1 and 65535, got 0`},
	} {
		_, errOut, code := runCLI(tc.args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want a failure naming %s", tc.args, code, errOut, tc.want)
		}
	}
}

func TestHTTPLimitFlags(t *testing.T) {
	out, _, code := runCLI("server", "--help")
	for _, flag := range []string{"--http-read-header-timeout", "--http-read-timeout", "--http-write-timeout", "--http-idle-timeout",
		"--http-max-conns-per-client", "--http-max-conns"} {
		if code != 0 || !strings.Contains(out, flag) {
			t.Errorf("strata server --help does not document %s", flag)
		}
	}
	out, _, _ = runCLI("agent", "--help")
	if !strings.Contains(out, "--agent-http-max-conns-per-client") {
		t.Error("strata agent --help does not document --agent-http-max-conns-per-client")
	}
}
