package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// agentFlagsFrom parses args as `strata agent` does, config file included.
func agentFlagsFrom(t *testing.T, args ...string) *agentFlags {
	t.Helper()
	var af agentFlags
	cmd := &cobra.Command{Use: "agent"}
	af.register(cmd, "", true)
	addConfigFlag(cmd, "the agent's")
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	if err := cmd.PreRunE(cmd, nil); err != nil {
		t.Fatal(err)
	}
	return &af
}

// serverFlagsFrom parses args as `strata server` does.
func serverFlagsFrom(args ...string) (*serverFlags, error) {
	var sf serverFlags
	cmd := &cobra.Command{Use: "server"}
	sf.register(cmd, "strata-data/server")
	addConfigFlag(cmd, "the server's")
	if err := cmd.ParseFlags(args); err != nil {
		return nil, err
	}
	return &sf, cmd.PreRunE(cmd, nil)
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServerConfigFile: a server's file sets its flags (names as on the
// command line or camel-cased, lists for repeatable ones), and a flag on
// the command line wins over the file.
func TestServerConfigFile(t *testing.T) {
	file := writeConfig(t, `
data-dir: /var/lib/strata/server
httpAddr: 10.0.0.1:4680
raft-addr: 10.0.0.1:4681
bootstrapExpect: 3
join: [10.0.0.2:4681, 10.0.0.3:4681]
acl: true
heartbeat-ttl: 20s
http-max-conns-per-client: 200
gc-alloc-retention: 2h
tls-ca: /etc/strata/tls/ca.pem
`)
	sf, err := serverFlagsFrom("--config", file, "--bootstrap-expect", "5")
	if err != nil {
		t.Fatal(err)
	}
	if sf.dataDir != "/var/lib/strata/server" || sf.httpAddr != "10.0.0.1:4680" || sf.raftAddr != "10.0.0.1:4681" ||
		sf.bootstrapExpect != 5 || strings.Join(sf.join, ",") != "10.0.0.2:4681,10.0.0.3:4681" || !sf.acl ||
		sf.heartbeatTTL != 20*time.Second || sf.http.c.MaxConnsPerClient != 200 || sf.gc.Allocations != 2*time.Hour || sf.tls.ca != "/etc/strata/tls/ca.pem" {
		t.Fatalf("flags from the file: %+v", sf)
	}
}

// TestConfigFileRefusals: what a file cannot say is refused with the key,
// its line, and the fix.
func TestConfigFileRefusals(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string
	}{
		{"unknown key", "data-dir: x\nraft_addr: y\n", []string{`line 2: raft_addr: unknown key (did you mean "raft-addr"?)`}},
		{"another system's word", "retry_join: [a]\n", []string{`retry_join: unknown key (did you mean "join"?)`}},
		{"bad value", "workers: many\n", []string{"line 1: workers:", `invalid argument "many"`}},
		{"set twice", "data-dir: a\ndataDir: b\n", []string{"--data-dir is set twice (also as data-dir)"}},
		{"a list for a single flag", "http-addr: [a, b]\n", []string{"--http-addr takes one value, got 2"}},
		{"a mapping", "gc-off: {a: b}\n", []string{"expected a value or a list, got a mapping"}},
		{"not a mapping", "- a\n", []string{"expected a mapping of flag names"}},
		{"the file's own flag", "config: other.yaml\n", []string{"config: unknown key"}},
		{"several problems at once", "x1: 1\nx2: 2\n", []string{"line 1: x1", "line 2: x2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := serverFlagsFrom("--config", writeConfig(t, tc.text))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := serverFlagsFrom("--config", filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "--config") {
		t.Fatalf("a missing file: %v", err)
	}
	if _, err := serverFlagsFrom("--config", writeConfig(t, "")); err != nil {
		t.Fatalf("an empty file: %v", err)
	}
}

// TestAgentConfigFile: the agent's file takes every flag, its capacity in
// a workload's units, labels as a mapping merged with --label (the command
// line wins for a key both give); a size without a unit is refused.
func TestAgentConfigFile(t *testing.T) {
	file := writeConfig(t, `
name: n7
servers: [https://10.0.0.1:4680, https://10.0.0.2:4680]
labels: {rack: r1, zone: z1}
cpuTotal: 4
memoryTotal: 8GiB
disk-total: 100Gi
join-token-file: /etc/strata/join-token
containerdSocket: /run/containerd/containerd.sock
insecure-plaintext: true
`)
	af := agentFlagsFrom(t, "--config", file, "--label", "rack=r2")
	cfg, err := af.agentConfig(t.TempDir(), af.servers, nil)
	if err == nil || !strings.Contains(err.Error(), "join-token-file") {
		t.Fatalf("a join token file that does not exist: %v", err)
	}
	af.joinFile = ""
	cfg, err = af.agentConfig(t.TempDir(), af.servers, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "n7" || cfg.Labels["rack"] != "r2" || cfg.Labels["zone"] != "z1" || cfg.CPUTotal != 4000 || cfg.MemoryTotal != 8<<30 ||
		cfg.DiskTotal != 100<<30 || cfg.ContainerdSocket != "/run/containerd/containerd.sock" || strings.Join(af.servers, ",") != "https://10.0.0.1:4680,https://10.0.0.2:4680" {
		t.Fatalf("agent config from the file: %+v (servers %v)", cfg, af.servers)
	}
	af = agentFlagsFrom(t, "--config", writeConfig(t, "memoryTotal: 8000\ninsecure-plaintext: true\n"))
	if _, err := af.agentConfig(t.TempDir(), af.servers, nil); err == nil || !strings.Contains(err.Error(), "8000 has no unit: write 8000Mi") {
		t.Fatalf("memoryTotal without a unit: %v", err)
	}
	var cmd cobra.Command
	var f agentFlags
	f.register(&cmd, "", true)
	addConfigFlag(&cmd, "the agent's")
	cmd.ParseFlags([]string{"--config", writeConfig(t, "cpu: 4\n")})
	if err := cmd.PreRunE(&cmd, nil); err == nil || !strings.Contains(err.Error(), `cpu: unknown key (did you mean "cpuTotal"?)`) {
		t.Fatalf("cpu in an agent's file: %v", err)
	}
}

// TestEveryDaemonFlagHasAKey: each flag of server, agent and dev can be
// set from the file, under its own name and camel-cased.
func TestEveryDaemonFlagHasAKey(t *testing.T) {
	root := newRoot(&globals{})
	for _, name := range []string{"server", "agent", "dev"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		keys := configKeys(cmd.Flags())
		n := 0
		for _, f := range visible(cmd) {
			if keys[f] != f || keys[camelCase(f)] != f {
				t.Errorf("strata %s --%s has no key", name, f)
			}
			n++
		}
		if n < 20 {
			t.Fatalf("strata %s: only %d flags seen", name, n)
		}
		if cmd.Flags().Lookup(configFlag) == nil {
			t.Errorf("strata %s has no --config", name)
		}
	}
}

// visible lists a command's flags that have a key in its file.
func visible(cmd *cobra.Command) []string {
	var out []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != configFlag && f.Name != "help" {
			out = append(out, f.Name)
		}
	})
	return out
}

// TestPackagedConfigsAreValid: the sample /etc/strata files the .deb and
// the image ship are accepted by the commands their systemd units run.
func TestPackagedConfigsAreValid(t *testing.T) {
	for _, tc := range []struct{ command, file, flag, want string }{
		{"server", "packaging/etc/server.yaml", "bootstrap-expect", "3"},
		{"agent", "packaging/etc/agent.yaml", "servers", "[https://10.0.0.1:4680,https://10.0.0.2:4680,https://10.0.0.3:4680]"},
	} {
		cmd, _, err := newRoot(&globals{}).Find([]string{tc.command})
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags([]string{"--config", repoFile(t, tc.file)}); err != nil {
			t.Fatal(err)
		}
		if err := cmd.PreRunE(cmd, nil); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if got := cmd.Flags().Lookup(tc.flag).Value.String(); got != tc.want {
			t.Fatalf("%s: --%s is %s, want %s", tc.file, tc.flag, got, tc.want)
		}
	}
}

// TestKeyringCreate: a keyring made before the cell's first start, to copy
// to every server; an existing one is never overwritten.
func TestKeyringCreate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys", "keyring.json")
	if out, errOut, code := runCLI("keyring", "create", "--keyring-file", file); code != 0 || !strings.Contains(out, "copy it to every server") {
		t.Fatalf("keyring create: exit %d %s %s", code, out, errOut)
	}
	before, _ := os.ReadFile(file)
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("keyring file: %v %v", st, err)
	}
	if _, errOut, code := runCLI("keyring", "create", "--keyring-file", file); code != 1 || !strings.Contains(errOut, "exists") {
		t.Fatalf("keyring create over a keyring: exit %d %s", code, errOut)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Fatal("the existing keyring was changed")
	}
}
