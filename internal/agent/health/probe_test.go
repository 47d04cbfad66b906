package health

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

func TestNetProber(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	_, portText, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portText)
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()

	httpCheck := func(path string) api.Check { return api.Check{Type: api.CheckHTTP, Path: path} }
	tests := []struct {
		name   string
		target Target
		ok     bool
		output string
	}{
		{"http 200", Target{Check: httpCheck("/ok"), Port: port}, true, "HTTP 200"},
		{"http 3xx passes without following", Target{Check: httpCheck("/moved"), Port: port}, true, "HTTP 302"},
		{"http 503", Target{Check: httpCheck("/down"), Port: port}, false, "HTTP 503"},
		{"http refused", Target{Check: httpCheck("/"), Port: closedPort}, false, "refused"},
		{"tcp open", Target{Check: api.Check{Type: api.CheckTCP}, Port: port}, true, "connected"},
		{"tcp refused", Target{Check: api.Check{Type: api.CheckTCP}, Port: closedPort}, false, "refused"},
		{"exec exit 0 with the task's env", Target{Check: api.Check{Type: api.CheckExec, Command: []string{"/bin/sh", "-c", "echo $GREETING"}}, Env: map[string]string{"GREETING": "hi"}}, true, "hi"},
		{"exec exit 3", Target{Check: api.Check{Type: api.CheckExec, Command: []string{"/bin/sh", "-c", "echo nope; exit 3"}}}, false, "exit code 3 nope"},
		{"exec missing program", Target{Check: api.Check{Type: api.CheckExec, Command: []string{"/no/such/program"}}}, false, "no such file"},
	}
	if os.Geteuid() == 0 { // only root can run a check as another user
		tests = append(tests, struct {
			name   string
			target Target
			ok     bool
			output string
		}{"exec as the task's user", Target{Check: api.Check{Type: api.CheckExec, Command: []string{"/bin/sh", "-c", "id -u"}},
			Identity: &Identity{UID: 65534, GID: 65534}}, true, "65534"})
	}
	tests = append(tests, struct {
		name   string
		target Target
		ok     bool
		output string
	}{"exec whose user does not resolve", Target{Check: api.Check{Type: api.CheckExec, Command: []string{"/bin/true"}},
		IdentityErr: `task user "ghost": unknown user ghost`}, false, "unknown user ghost"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			o := NetProber{}.Probe(ctx, tc.target)
			if o.OK != tc.ok || !strings.Contains(o.Output, tc.output) {
				t.Fatalf("Probe = %+v, want ok=%v output~%q", o, tc.ok, tc.output)
			}
		})
	}
}
