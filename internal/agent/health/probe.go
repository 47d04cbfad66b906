package health

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/strata-dev/strata/api"
)

// NetProber probes for real: HTTP and TCP checks against Host (the node's
// loopback by default: tasks share the node's network), exec checks as a
// process with the task's environment in its directory.
type NetProber struct {
	Host string // "" means 127.0.0.1
}

var _ Prober = NetProber{}

// Probe runs t once under ctx.
func (p NetProber) Probe(ctx context.Context, t Target) Outcome {
	host := p.Host
	if host == "" {
		host = "127.0.0.1"
	}
	switch t.Check.Type {
	case api.CheckHTTP:
		return probeHTTP(ctx, net.JoinHostPort(host, strconv.Itoa(t.Port)), t.Check.Path)
	case api.CheckTCP:
		return probeTCP(ctx, net.JoinHostPort(host, strconv.Itoa(t.Port)))
	case api.CheckExec:
		return probeExec(ctx, t)
	}
	return Outcome{Output: fmt.Sprintf("unknown check type %q", t.Check.Type)}
}

// httpClient never follows redirects (a 3xx passes as it is) and keeps
// no idle connections: a check is one request.
var httpClient = &http.Client{
	Transport:     &http.Transport{DisableKeepAlives: true, Proxy: nil},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func probeHTTP(ctx context.Context, addr, path string) Outcome {
	if path == "" {
		path = "/"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return Outcome{Output: err.Error()}
	}
	req.Header.Set("User-Agent", "strata-health-check")
	resp, err := httpClient.Do(req)
	if err != nil {
		return Outcome{Output: shortErr(err)}
	}
	defer resp.Body.Close()
	return Outcome{OK: resp.StatusCode >= 200 && resp.StatusCode < 400, Output: "HTTP " + strconv.Itoa(resp.StatusCode)}
}

func probeTCP(ctx context.Context, addr string) Outcome {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return Outcome{Output: shortErr(err)}
	}
	conn.Close()
	return Outcome{OK: true, Output: "connected to " + addr}
}

func probeExec(ctx context.Context, t Target) Outcome {
	if len(t.Check.Command) == 0 {
		return Outcome{Output: "no command"}
	}
	if t.IdentityErr != "" {
		return Outcome{Output: t.IdentityErr}
	}
	cmd := exec.CommandContext(ctx, t.Check.Command[0], t.Check.Command[1:]...)
	cmd.Dir = t.Dir
	cmd.Env = envList(t.Env)
	cmd.WaitDelay = time.Second // a child holding the pipe must not hang the check
	if id := t.Identity; id != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(id.UID), Gid: uint32(id.GID)}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{&out, maxOutput}, &limited{&out, maxOutput}
	err := cmd.Run()
	text := strings.TrimSpace(out.String())
	var exit *exec.ExitError
	switch {
	case err == nil:
		return Outcome{OK: true, Output: text}
	case errors.As(err, &exit) && ctx.Err() == nil:
		return Outcome{Output: strings.TrimSpace(fmt.Sprintf("exit code %d %s", exit.ExitCode(), text))}
	}
	return Outcome{Output: shortErr(err)}
}

func envList(env map[string]string) []string {
	var out []string
	if _, ok := env["PATH"]; !ok {
		out = append(out, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// shortErr drops the "Get \"http://...\": " prefix Go puts on errors.
func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && strings.Contains(s, "connect") {
		return s[i+2:]
	}
	return s
}

// limited writes at most n bytes to w in all, dropping the rest.
type limited struct {
	w *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
