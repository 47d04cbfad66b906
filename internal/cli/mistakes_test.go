package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/pki"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// TestMistakesSayTheFix is the table of docs/operations.md, "Mistakes
// and what they say": each way of reaching a cell wrongly fails at once
// (it used to retry for 30 s, or answer without the fix) with an error
// that says what to do.
func TestMistakesSayTheFix(t *testing.T) {
	tlsCell := servertest.Start(t, 1, servertest.WithTLS(t))
	tlsCell.WaitReady(0)
	files := *tlsCell.Configs[0].TLS
	tlsDir := filepath.Dir(files.CA)
	cli := pki.CertFiles(tlsDir, pki.RoleCLI)
	expired, err := pki.CreateCert(tlsDir, t.TempDir(), pki.CertRequest{Role: pki.RoleCLI, Validity: time.Hour, NotBefore: time.Now().Add(-48 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	api := tlsCell.Configs[0].HTTPAddr
	raftPort := tlsCell.Configs[0].RaftAddr

	// A cell of three that lost two: no quorum.
	lost := servertest.Start(t, 3, func(_ int, c *server.Config) { c.NoQuorumAfter = 2 * time.Second })
	lost.WaitReady(lost.Leader())
	survivor := lost.Leader()
	for i := range 3 {
		if i != survivor {
			lost.Stop(i)
		}
	}
	hello := filepath.Join(t.TempDir(), "hello.yaml")
	os.WriteFile(hello, []byte(strings.ReplaceAll(tinyDoc, "NAME", "hello")), 0o644)

	trusted := map[string]string{"STRATA_CACERT": files.CA, "STRATA_CLIENT_CERT": cli.Cert, "STRATA_CLIENT_KEY": cli.Key}
	cases := []struct {
		mistake string
		env     map[string]string
		args    []string
		code    int
		want    []string
	}{
		{"a misspelt scheme", trusted, []string{"--addr", "htps://" + api, "nodes"}, 1,
			[]string{`unknown scheme "htps": want http:// or https:// (did you mean https://?)`}},
		{"the server port given as the API, plain HTTP", nil, []string{"--addr", "http://" + raftPort, "nodes"}, 1,
			[]string{"--raft-addr port", "the HTTP API is on the server's --http-addr"}},
		{"the server port given as the API, TLS", trusted, []string{"--addr", raftPort, "nodes"}, 1,
			[]string{"answered in plain text, not TLS", "--raft-addr port (the API is on its --http-addr)"}},
		{"http:// against a TLS cell", nil, []string{"--addr", "http://" + api, "nodes"}, 1,
			[]string{"speaks HTTPS: use https://" + api, "$STRATA_CACERT"}},
		{"https:// without the cell's CA", nil, []string{"--addr", "https://" + api, "nodes"}, 1,
			[]string{"not signed by a CA this client trusts: set $STRATA_CACERT"}},
		{"an expired client certificate", map[string]string{"STRATA_CACERT": files.CA, "STRATA_CLIENT_CERT": expired.Cert, "STRATA_CLIENT_KEY": expired.Key},
			[]string{"--addr", api, "nodes"}, 1, []string{"expired at", "strata tls cert create"}},
		{"a cell without a quorum", nil, []string{"--addr", lost.Addr(survivor), "run", hello}, 1,
			[]string{"no leader for", "the cell has no quorum, which takes 2 of its 3 voting servers", "strata operator raft peers --stale, as", "follower"}},
		{"strata run FILE without -f", trusted, []string{"--addr", api, "run", hello}, 0, nil},
		{"raft peers without a leader shows the survivor's view", nil, []string{"--addr", lost.Addr(survivor), "operator", "raft", "peers"}, 0,
			[]string{"the cell has no quorum", "the servers as " + lost.Addr(survivor) + " knows them (--stale)"}},
	}
	// The lost cell's survivor says "no quorum" once it has known no
	// leader for its NoQuorumAfter.
	time.Sleep(2 * time.Second)
	for _, tc := range cases {
		t.Run(tc.mistake, func(t *testing.T) {
			for _, k := range []string{"STRATA_CACERT", "STRATA_CLIENT_CERT", "STRATA_CLIENT_KEY", "STRATA_ADDR", "STRATA_TOKEN"} {
				t.Setenv(k, tc.env[k])
			}
			start := time.Now()
			out, errOut, code := runCLI(tc.args...)
			took := time.Since(start)
			t.Logf("%v:\n%s", took.Round(10*time.Millisecond), errOut)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("the error does not say %q:\n%s", w, errOut)
				}
			}
			// A server holds a request up to 5 s waiting for a leader;
			// nothing here may wait out the client's 30 s of retries.
			if took > 15*time.Second {
				t.Errorf("took %v: retried for nothing", took)
			}
		})
	}
}
