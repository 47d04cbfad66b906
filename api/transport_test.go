package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer answers with a script of behaviours, one per request, the
// last repeated; it counts requests.
type fakeServer struct {
	*httptest.Server
	calls  atomic.Int32
	script []string
}

func newFake(t *testing.T, script ...string) *fakeServer {
	t.Helper()
	f := &fakeServer{script: script}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(f.calls.Add(1)) - 1
		step := f.script[min(n, len(f.script)-1)]
		switch step {
		case "ok":
			w.Header().Set("X-Strata-Index", "42")
			w.Write([]byte(`{"name":"w","version":1}`))
		case "not-leader", "not-ready", "outcome-unknown", "no-quorum":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"busy","code":"` + step + `"}`))
		case "forward-failed":
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte(`{"error":"leader gone","code":"forward-failed"}`))
		case "drop": // the connection dies after the request arrived
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case "bad-request":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"replicas: must be positive","code":"invalid-workload"}`))
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// deadAddr is an address that refuses connections.
func deadAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestClientFailoverAndRetries(t *testing.T) {
	type call func(c *Client) error
	register := func(c *Client) error {
		_, err := c.RegisterWorkload(context.Background(), []byte("doc"))
		return err
	}
	list := func(c *Client) error {
		_, _, err := c.WorkloadStatus(context.Background(), "w", nil)
		return err
	}
	cases := []struct {
		name string
		// servers: each server's script; "dead" is an address that refuses.
		servers [][]string
		call    call
		wantErr string // "" for success
		wantIs  error
		// wantCalls: requests each live server saw.
		wantCalls []int32
	}{
		{name: "first server down: the second answers",
			servers: [][]string{{"dead"}, {"ok"}}, call: register, wantCalls: []int32{0, 1}},
		{name: "not-leader is retried, even for a write",
			servers: [][]string{{"not-leader"}, {"ok"}}, call: register, wantCalls: []int32{1, 1}},
		{name: "not-ready is retried on the same server after a round",
			servers: [][]string{{"not-ready", "ok"}}, call: register, wantCalls: []int32{2}},
		{name: "a write cut in flight is not retried",
			servers: [][]string{{"drop"}, {"ok"}}, call: register, wantIs: ErrOutcomeUnknown, wantCalls: []int32{1, 0}},
		{name: "a read cut in flight is retried elsewhere",
			servers: [][]string{{"drop"}, {"ok"}}, call: list, wantCalls: []int32{1, 1}},
		{name: "forward-failed: a write is not retried",
			servers: [][]string{{"forward-failed"}, {"ok"}}, call: register, wantErr: "leader gone", wantCalls: []int32{1, 0}},
		{name: "forward-failed: a read is retried",
			servers: [][]string{{"forward-failed"}, {"ok"}}, call: list, wantCalls: []int32{1, 1}},
		{name: "outcome-unknown is not retried",
			servers: [][]string{{"outcome-unknown"}, {"ok"}}, call: register, wantErr: "busy", wantCalls: []int32{1, 0}},
		{name: "no quorum anywhere: given up after one round",
			servers: [][]string{{"no-quorum"}, {"dead"}, {"no-quorum"}}, call: list, wantIs: ErrNoQuorum, wantCalls: []int32{1, 0, 1}},
		{name: "no quorum on one server, a leader behind another",
			servers: [][]string{{"no-quorum"}, {"ok"}}, call: register, wantCalls: []int32{1, 1}},
		{name: "no quorum, then an election: a round with not-leader keeps trying",
			servers: [][]string{{"no-quorum", "ok"}, {"not-leader"}}, call: list, wantCalls: []int32{2, 1}},
		{name: "a 400 is the answer",
			servers: [][]string{{"bad-request"}, {"ok"}}, call: register, wantErr: "replicas: must be positive", wantCalls: []int32{1, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var addrs []string
			var fakes []*fakeServer
			for _, script := range tc.servers {
				if script[0] == "dead" {
					addrs = append(addrs, deadAddr(t))
					fakes = append(fakes, nil)
					continue
				}
				f := newFake(t, script...)
				addrs = append(addrs, f.URL)
				fakes = append(fakes, f)
			}
			c := NewClientFor(addrs)
			c.RetryFor = 5 * time.Second
			err := tc.call(c)
			switch {
			case tc.wantIs != nil:
				if !errors.Is(err, tc.wantIs) {
					t.Fatalf("err = %v, want %v", err, tc.wantIs)
				}
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("err = %v", err)
			}
			for i, f := range fakes {
				if f != nil && f.calls.Load() != tc.wantCalls[i] {
					t.Errorf("server %d saw %d requests, want %d", i, f.calls.Load(), tc.wantCalls[i])
				}
			}
		})
	}
}

// TestClientSticksToTheServerThatAnswered: after a failover the next call
// goes straight to the server that answered.
func TestClientSticksToTheServerThatAnswered(t *testing.T) {
	dead := deadAddr(t)
	live := newFake(t, "ok")
	c := NewClientFor([]string{dead, live.URL})
	for range 3 {
		if _, _, err := c.WorkloadStatus(context.Background(), "w", nil); err != nil {
			t.Fatal(err)
		}
	}
	if c.Addr() != live.URL {
		t.Fatalf("client prefers %s, want %s", c.Addr(), live.URL)
	}
}

// TestClientFailsFastWithNoServer: when nothing listens anywhere the CLI
// says so at once instead of retrying for RetryFor.
func TestClientFailsFastWithNoServer(t *testing.T) {
	c := NewClientFor([]string{deadAddr(t), deadAddr(t)})
	start := time.Now()
	_, _, err := c.Workloads(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "no server accepts connections") {
		t.Fatalf("err = %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("took %v to give up on a cell with no server", took)
	}
}

// TestClientGivesUpAfterRetryFor: a cell that stays not-ready is given up
// on after RetryFor, with the last answer.
func TestClientGivesUpAfterRetryFor(t *testing.T) {
	f := newFake(t, "not-ready")
	c := NewClientFor([]string{f.URL})
	c.RetryFor = 400 * time.Millisecond
	start := time.Now()
	_, _, err := c.Workloads(context.Background(), nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != "not-ready" || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("err = %v", err)
	}
	if took := time.Since(start); took > 2*time.Second || f.calls.Load() < 2 {
		t.Fatalf("took %v and %d attempts", took, f.calls.Load())
	}
}

func TestNewClientParsesLists(t *testing.T) {
	t.Setenv("STRATA_ADDR", "10.0.0.1:4680, http://10.0.0.2:4680/ ,")
	c := NewClient("")
	want := []string{"http://10.0.0.1:4680", "http://10.0.0.2:4680"}
	if got := c.Addrs(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("addrs %v, want %v", got, want)
	}
	if got := NewClient("a:1,b:2").Addrs(); len(got) != 2 || got[1] != "http://b:2" {
		t.Fatalf("addrs %v", got)
	}
}
