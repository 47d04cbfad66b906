package faultnet

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/pki"
)

// namePrefix starts the name of every namespace this package makes.
const namePrefix = "stfault"

// subnet is the bridge's network; it exists only inside the namespaces.
const subnet = "10.250.0."

// ErrUnavailable is wrapped by Available when this machine cannot run the
// harness (not root, or a tool is missing).
var ErrUnavailable = errors.New("faultnet unavailable")

// Available reports whether the harness can run here: it needs root and
// the ip, nft and nsenter commands.
func Available() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: needs root for network namespaces", ErrUnavailable)
	}
	for _, tool := range []string{"ip", "nft", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%w: %s not found (Debian: apt-get install iproute2 nftables util-linux)", ErrUnavailable, tool)
		}
	}
	return nil
}

var netSeq atomic.Int64

// Net is a set of hosts on one bridge. Its methods are safe for
// concurrent use.
type Net struct {
	t      testing.TB
	prefix string // e.g. "stfault1234-1-"
	sw     string // the bridge's namespace
	dir    string

	mu    sync.Mutex
	hosts []*Host
	// drops holds the lossy or cut directions: from→to → percent of
	// packets dropped (100: cut).
	drops map[[2]*Host]int
	procs []*Process
	// joinToken is the cell's join token, given to every process (Env).
	joinToken string
	// tlsDir holds the cell's CA and its servers', agents' and CLI's
	// certificates: the cells on the network run TLS, agents joining
	// over mutual TLS, as in production. plaintext is for a test about
	// plaintext (SetPlaintext).
	tlsDir    string
	plaintext bool
}

// Env is the environment of every process started on the network: the
// credentials of the cell under test (STRATA_JOIN_TOKEN for its servers
// and agents; the CLI's CA and certificate), kept here only, so that
// tests need not pass them. A `strata server` or `strata agent` also gets
// its role's certificate (daemonEnv).
func (n *Net) Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STRATA_") {
			env = append(env, kv)
		}
	}
	env = append(env, "STRATA_JOIN_TOKEN="+n.joinToken)
	if n.plaintext {
		// Plaintext and without ACLs: a server refuses that unless told to
		// let anonymous callers in.
		return append(env, "STRATA_INSECURE_PLAINTEXT=1", "STRATA_INSECURE_ALLOW_ANONYMOUS=1")
	}
	f := n.TLSFiles(pki.RoleCLI)
	return append(env, "STRATA_CACERT="+f.CA, "STRATA_CLIENT_CERT="+f.Cert, "STRATA_CLIENT_KEY="+f.Key)
}

// daemonEnv is Env for the command line argv: a server or an agent gets
// its role's certificate.
func (n *Net) daemonEnv(argv []string) []string {
	env := n.Env()
	if n.plaintext || len(argv) < 2 {
		return env
	}
	role, ok := map[string]pki.Role{"server": pki.RoleServer, "agent": pki.RoleAgent}[argv[1]]
	if !ok {
		return env
	}
	f := n.TLSFiles(role)
	return append(env, "STRATA_TLS_CA="+f.CA, "STRATA_TLS_CERT="+f.Cert, "STRATA_TLS_KEY="+f.Key)
}

// SetPlaintext runs the network's cells without TLS, for a test about
// plaintext; call it before starting any process.
func (n *Net) SetPlaintext() { n.plaintext = true }

// TLSFiles are the cell's CA and role's certificate and key.
func (n *Net) TLSFiles(role pki.Role) pki.Files { return pki.CertFiles(n.tlsDir, role) }

// URL is the address of an API at hostport, with the cell's scheme.
func (n *Net) URL(hostport string) string {
	if n.plaintext {
		return "http://" + hostport
	}
	return "https://" + hostport
}

// ClientTLS is the TLS configuration of the test's clients of the cell's
// servers: the cell's CA and a CLI certificate; nil when plaintext.
func (n *Net) ClientTLS() *tls.Config {
	if n.plaintext {
		return nil
	}
	f := n.TLSFiles(pki.RoleCLI)
	cfg, err := f.ClientConfig(pki.RoleServer)
	if err != nil {
		n.t.Fatalf("faultnet: the cell's CLI TLS: %v", err)
	}
	return cfg
}

// JoinToken is the join token of the cell under test.
func (n *Net) JoinToken() string { return n.joinToken }

// New makes an empty network, or skips the test with the reason when the
// harness cannot run here. Everything it makes is removed in t.Cleanup.
func New(t testing.TB) *Net {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	sweep()
	n := &Net{t: t, drops: map[[2]*Host]int{}, joinToken: nodeauth.NewSecret(),
		prefix: fmt.Sprintf("%s%d-%d-", namePrefix, os.Getpid(), netSeq.Add(1))}
	n.sw = n.prefix + "sw"
	dir, err := artifactDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	n.dir = dir
	n.tlsDir = filepath.Join(dir, "tls")
	if err := pki.EnsureDev(n.tlsDir); err != nil {
		t.Fatalf("faultnet: the cell's TLS credentials: %v", err)
	}
	t.Cleanup(n.teardown)
	n.must("ip", "netns", "add", n.sw)
	n.must("ip", "-n", n.sw, "link", "add", "br0", "type", "bridge")
	n.must("ip", "-n", n.sw, "link", "set", "br0", "up")
	return n
}

// Dir is a directory for the test's files (process logs among them),
// kept when the test fails.
func (n *Net) Dir() string { return n.dir }

// Host is one machine of the network: a namespace with loopback and one
// interface, eth0, on the bridge.
type Host struct {
	net  *Net
	name string
	ns   string
	ip   string
}

// Name is the name the test gave the host.
func (h *Host) Name() string { return h.name }

// IP is the host's address on the bridge.
func (h *Host) IP() string { return h.ip }

// URL is the address of an API at port on the host, with the cell's
// scheme.
func (h *Host) URL(port int) string { return h.net.URL(h.Addr(port)) }

// Addr is host:port on the host's address.
func (h *Host) Addr(port int) string { return net.JoinHostPort(h.ip, strconv.Itoa(port)) }

// Namespace is the host's network namespace (under /run/netns).
func (h *Host) Namespace() string { return h.ns }

var hostName = regexp.MustCompile(`^[a-z][a-z0-9]{0,7}$`)

// AddHost adds a host named name (lower case letters and digits, at most
// 8) to the network.
func (n *Net) AddHost(name string) *Host {
	n.t.Helper()
	if !hostName.MatchString(name) {
		n.t.Fatalf("faultnet: host name %q: want 1-8 lower case letters and digits, starting with a letter", name)
	}
	n.mu.Lock()
	idx := len(n.hosts)
	for _, h := range n.hosts {
		if h.name == name {
			n.mu.Unlock()
			n.t.Fatalf("faultnet: host %q added twice", name)
		}
	}
	h := &Host{net: n, name: name, ns: n.prefix + name, ip: subnet + strconv.Itoa(10+idx)}
	n.hosts = append(n.hosts, h)
	n.mu.Unlock()

	port := "p" + strconv.Itoa(idx)
	n.must("ip", "netns", "add", h.ns)
	n.must("ip", "link", "add", "eth0", "netns", h.ns, "type", "veth", "peer", "name", port, "netns", n.sw)
	n.must("ip", "-n", n.sw, "link", "set", port, "master", "br0", "up")
	n.must("ip", "-n", h.ns, "addr", "add", h.ip+"/24", "dev", "eth0")
	n.must("ip", "-n", h.ns, "link", "set", "eth0", "up")
	n.must("ip", "-n", h.ns, "link", "set", "lo", "up")
	n.applyRules(h)
	return h
}

// Hosts returns the network's hosts in the order they were added.
func (n *Net) Hosts() []*Host {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*Host(nil), n.hosts...)
}

// Cut drops every packet between a and b, both ways.
func (n *Net) Cut(a, b *Host) { n.setDrop(100, [2]*Host{a, b}, [2]*Host{b, a}) }

// CutOneWay drops every packet from from to to; to's packets still reach
// from (an asymmetric partition).
func (n *Net) CutOneWay(from, to *Host) { n.setDrop(100, [2]*Host{from, to}) }

// Loss drops percent (1-100) of the packets between a and b, both ways,
// at random.
func (n *Net) Loss(a, b *Host, percent int) {
	if percent < 1 || percent > 100 {
		n.t.Fatalf("faultnet: loss %d%%: want 1-100", percent)
	}
	n.setDrop(percent, [2]*Host{a, b}, [2]*Host{b, a})
}

// Partition cuts every host of each side from every host of the others;
// hosts within a side still reach each other, hosts on no side keep all
// their links.
func (n *Net) Partition(sides ...[]*Host) {
	var dirs [][2]*Host
	for i, side := range sides {
		for j, other := range sides {
			if i == j {
				continue
			}
			for _, a := range side {
				for _, b := range other {
					dirs = append(dirs, [2]*Host{a, b})
				}
			}
		}
	}
	n.setDrop(100, dirs...)
}

// Isolate cuts h from every other host.
func (n *Net) Isolate(h *Host) {
	var others []*Host
	for _, o := range n.Hosts() {
		if o != h {
			others = append(others, o)
		}
	}
	n.Partition([]*Host{h}, others)
}

// Heal restores the links between a and b, both ways.
func (n *Net) Heal(a, b *Host) { n.setDrop(0, [2]*Host{a, b}, [2]*Host{b, a}) }

// HealAll restores every link (drop rules only; see LinkUp).
func (n *Net) HealAll() {
	n.mu.Lock()
	var dirs [][2]*Host
	for d := range n.drops {
		dirs = append(dirs, d)
	}
	n.mu.Unlock()
	n.setDrop(0, dirs...)
}

// LinkDown takes h's interface down: its connections fail at once
// instead of hanging, and its routes go away until LinkUp.
func (n *Net) LinkDown(h *Host) { n.must("ip", "-n", h.ns, "link", "set", "eth0", "down") }

// LinkUp brings h's interface back (address and route with it).
func (n *Net) LinkUp(h *Host) {
	n.must("ip", "-n", h.ns, "link", "set", "eth0", "up")
}

func (n *Net) setDrop(percent int, dirs ...[2]*Host) {
	n.t.Helper()
	touched := map[*Host]bool{}
	n.mu.Lock()
	for _, d := range dirs {
		if d[0] == d[1] {
			continue
		}
		if percent == 0 {
			delete(n.drops, d)
		} else {
			n.drops[d] = percent
		}
		touched[d[0]] = true
	}
	n.mu.Unlock()
	for h := range touched {
		n.applyRules(h)
	}
}

// applyRules replaces h's nftables table with one drop rule per cut or
// lossy direction from h, in one atomic transaction.
func (n *Net) applyRules(h *Host) {
	n.t.Helper()
	n.mu.Lock()
	var rules []string
	for d, pct := range n.drops {
		if d[0] != h {
			continue
		}
		if pct >= 100 {
			rules = append(rules, fmt.Sprintf("ip daddr %s drop", d[1].ip))
		} else {
			rules = append(rules, fmt.Sprintf("ip daddr %s numgen random mod 100 < %d drop", d[1].ip, pct))
		}
	}
	n.mu.Unlock()
	sort.Strings(rules)
	var b strings.Builder
	// Declaring the table first makes the delete valid on the first run.
	b.WriteString("table inet faultnet {}\ndelete table inet faultnet\n")
	b.WriteString("table inet faultnet {\n  chain out {\n    type filter hook output priority 0; policy accept;\n")
	for _, r := range rules {
		b.WriteString("    " + r + "\n")
	}
	b.WriteString("  }\n}\n")
	cmd := exec.Command("nsenter", "--net=/run/netns/"+h.ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		n.t.Fatalf("faultnet: nft in %s: %v\n%s\nruleset:\n%s", h.name, err, out, b.String())
	}
}

// Rules returns the nftables ruleset of h, for failure messages.
func (h *Host) Rules() string {
	out, err := exec.Command("nsenter", "--net=/run/netns/"+h.ns, "nft", "list", "ruleset").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("nft list ruleset: %v: %s", err, out)
	}
	return string(out)
}

func (n *Net) must(args ...string) {
	n.t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		n.t.Fatalf("faultnet: %s: %v\n%s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
}

// teardown kills every process and removes every namespace, whether the
// test passed or not.
func (n *Net) teardown() {
	n.mu.Lock()
	procs := append([]*Process(nil), n.procs...)
	hosts := append([]*Host(nil), n.hosts...)
	n.mu.Unlock()
	for _, p := range procs {
		p.Kill()
	}
	for _, h := range hosts {
		removeNamespace(h.ns)
	}
	removeNamespace(n.sw)
	if n.t.Failed() {
		n.t.Logf("faultnet: logs and artifacts kept in %s", n.dir)
	} else {
		os.RemoveAll(n.dir)
	}
}

// removeNamespace kills what still runs in ns and deletes it. The test
// process itself may be listed (a dial still in flight on its main
// thread) and is spared.
func removeNamespace(ns string) {
	if out, err := exec.Command("ip", "netns", "pids", ns).Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
				syscall.Kill(pid, syscall.SIGCONT)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	exec.Command("ip", "netns", "del", ns).Run()
}

var leftover = regexp.MustCompile(`^` + namePrefix + `(\d+)-`)

// sweep removes namespaces left by test processes that died before their
// cleanup ran (a test binary killed by its timeout, say).
func sweep() {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		m := leftover.FindStringSubmatch(fields[0])
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue // its owner still runs
		}
		removeNamespace(fields[0])
	}
}

// artifactDir makes the directory of one test's files: under
// $STRATA_ARTIFACTS when set, else the system temp dir.
func artifactDir(testName string) (string, error) {
	base := os.Getenv("STRATA_ARTIFACTS")
	if base != "" {
		if err := os.MkdirAll(base, 0o755); err != nil {
			return "", err
		}
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(testName)
	return os.MkdirTemp(base, "strata-"+name+"-")
}
