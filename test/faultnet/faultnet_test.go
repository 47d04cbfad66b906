package faultnet

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary double as the program the tests run on
// their hosts: `faultnet.test serve ADDR NAME` answers HTTP with NAME.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "serve" {
		name := os.Args[3]
		err := http.ListenAndServe(os.Args[2], http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, name)
		}))
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func serve(t *testing.T, h *Host) *Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := h.Start("web", exe, "serve", h.Addr(8080), h.Name())
	from := h // loopback inside the host
	Eventually(t, 10*time.Second, "the server on "+h.Name(), func() error { return get(from, h) })
	return p
}

// get asks h's server for its name from host from.
func get(from, h *Host) error {
	c := from.HTTPClient(500 * time.Millisecond)
	resp, err := c.Get("http://" + h.Addr(8080) + "/")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if string(b) != h.Name() {
		return fmt.Errorf("answer %q, want %q", b, h.Name())
	}
	return nil
}

func TestCutHealAndPartition(t *testing.T) {
	n := New(t)
	a, b, c := n.AddHost("a"), n.AddHost("b"), n.AddHost("c")
	serve(t, a)
	serve(t, b)
	for _, from := range []*Host{b, c} {
		if err := get(from, a); err != nil {
			t.Fatalf("%s reaches a before any fault: %v", from.Name(), err)
		}
	}
	n.Cut(a, b)
	if err := get(b, a); err == nil {
		t.Fatal("b still reaches a across a cut")
	}
	if err := get(a, b); err == nil {
		t.Fatal("a still reaches b across a cut")
	}
	if err := get(c, a); err != nil {
		t.Fatalf("c lost a though only a-b was cut: %v", err)
	}
	if !strings.Contains(a.Rules(), b.IP()) {
		t.Fatalf("a's ruleset does not drop b:\n%s", a.Rules())
	}
	n.Heal(a, b)
	if err := get(b, a); err != nil {
		t.Fatalf("b does not reach a after the heal: %v", err)
	}

	n.Partition([]*Host{a}, []*Host{b, c})
	for _, from := range []*Host{b, c} {
		if err := get(from, a); err == nil {
			t.Fatalf("%s reaches a across the partition", from.Name())
		}
	}
	if err := get(c, b); err != nil {
		t.Fatalf("c and b are on one side but c does not reach b: %v", err)
	}
	n.HealAll()
	if err := get(c, a); err != nil {
		t.Fatalf("c does not reach a after HealAll: %v", err)
	}
}

func TestCutOneWay(t *testing.T) {
	n := New(t)
	a, b := n.AddHost("a"), n.AddHost("b")
	serve(t, a)
	n.CutOneWay(b, a) // b's packets are dropped; a's still reach b
	if err := get(b, a); err == nil {
		t.Fatal("b reaches a although b→a is cut")
	}
	// A TCP exchange needs both ways, so show the open direction with a
	// rule count instead: only b holds a rule.
	if strings.Contains(a.Rules(), "drop") || !strings.Contains(b.Rules(), "ip daddr "+a.IP()+" drop") {
		t.Fatalf("rules: a:\n%s\nb:\n%s", a.Rules(), b.Rules())
	}
}

func TestLossRule(t *testing.T) {
	n := New(t)
	a, b := n.AddHost("a"), n.AddHost("b")
	n.Loss(a, b, 30)
	for _, h := range []*Host{a, b} {
		if !strings.Contains(h.Rules(), "numgen random mod 100 < 30") {
			t.Fatalf("%s has no 30%% loss rule:\n%s", h.Name(), h.Rules())
		}
	}
	n.HealAll()
	if strings.Contains(a.Rules(), "drop") {
		t.Fatalf("rules left after HealAll:\n%s", a.Rules())
	}
}

func TestLinkDownFailsFast(t *testing.T) {
	n := New(t)
	a, b := n.AddHost("a"), n.AddHost("b")
	serve(t, a)
	n.LinkDown(b)
	err := get(b, a)
	if err == nil {
		t.Fatal("b reaches a with its link down")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("a down link should fail at once, not time out: %v", err)
	}
	n.LinkUp(b)
	Eventually(t, 5*time.Second, "b back", func() error { return get(b, a) })
}

func TestPauseKillRestart(t *testing.T) {
	n := New(t)
	a, b := n.AddHost("a"), n.AddHost("b")
	p := serve(t, a)
	p.Pause()
	if err := get(b, a); err == nil {
		t.Fatal("a paused server answered")
	}
	p.Resume()
	if err := get(b, a); err != nil {
		t.Fatalf("the resumed server does not answer: %v", err)
	}
	pid := p.Pid()
	p.Pause()
	p.Kill() // a paused process dies too
	if p.Running() {
		t.Fatal("killed process still running")
	}
	var opErr *net.OpError
	if err := get(b, a); !errors.As(err, &opErr) {
		t.Fatalf("want a connection error from a killed server, got %v", err)
	}
	p.Restart()
	if p.Pid() == pid {
		t.Fatal("restart kept the pid")
	}
	Eventually(t, 10*time.Second, "the restarted server", func() error { return get(b, a) })
	if got := strings.Count(p.Log(), "=== faultnet: start"); got != 2 {
		t.Fatalf("the log records %d starts, want 2:\n%s", got, p.Log())
	}
}

// TestTeardown: a network's namespaces and processes are gone after its
// test, and nothing was added to the machine's own namespace.
func TestTeardown(t *testing.T) {
	before := links(t)
	var ns []string
	var pid int
	t.Run("inner", func(t *testing.T) {
		n := New(t)
		a := n.AddHost("a")
		pid = serve(t, a).Pid()
		ns = []string{a.Namespace(), n.sw}
		if after := links(t); after != before {
			t.Fatalf("the machine's interfaces changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
	list, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range ns {
		if strings.Contains(string(list), name) {
			t.Fatalf("namespace %s left after the test:\n%s", name, list)
		}
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Fatalf("process %d left after the test", pid)
	}
}

func links(t *testing.T) string {
	out, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			names = append(names, f[1])
		}
	}
	return strings.Join(names, " ")
}

func TestAwait(t *testing.T) {
	calls := 0
	took, err := Await(5*time.Second, func() error {
		calls++
		if calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls != 3 || took <= 0 {
		t.Fatalf("Await = %v, %v after %d calls", took, err, calls)
	}
	_, err = Await(30*time.Millisecond, func() error { return errors.New("never") })
	if err == nil || err.Error() != "never" {
		t.Fatalf("Await past its deadline = %v, want the condition's last error", err)
	}
}
