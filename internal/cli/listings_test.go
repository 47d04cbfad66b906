package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server/servertest"
	"github.com/strata-dev/strata/internal/version"
)

// registerNode registers a node in c as its agent would.
func registerNode(t *testing.T, c *servertest.Cell, id, name string) {
	t.Helper()
	agent := c.Client()
	agent.Node = c.NodeIdentity(id)
	n := &api.Node{ID: id, Name: name, Status: api.NodeReady, Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 8 << 30}}
	if err := agent.RegisterNode(context.Background(), n); err != nil {
		t.Fatal(err)
	}
}

// TestListingsEveryFormat: each listing takes -o table, wide, json and
// yaml; wide adds columns and full ids; yaml is the json's data.
func TestListingsEveryFormat(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, nil)
	c.WaitReady(0)
	registerNode(t, c, "7f3a9c1e-0000-4000-8000-000000000001", "n1")
	addr := c.Addr(0)
	cli := func(args ...string) (string, string, int) {
		return runCLI(append([]string{"--addr", addr}, args...)...)
	}
	if _, errOut, code := cli("run", repoFile(t, "examples/hello.yaml")); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	for _, listing := range [][]string{{"nodes"}, {"allocs"}, {"status"}, {"status", "hello"}, {"events"}, {"namespace", "list"}, {"node", "status", "n1"}} {
		name := strings.Join(listing, " ")
		jsonOut, errOut, code := cli(append(listing, "-o", "json")...)
		if code != 0 {
			t.Fatalf("%s -o json: exit %d %s", name, code, errOut)
		}
		yamlOut, errOut, code := cli(append(listing, "-o", "yaml")...)
		if code != 0 || !strings.HasPrefix(yamlOut, "---\n") {
			t.Fatalf("%s -o yaml: exit %d %q %s", name, code, yamlOut, errOut)
		}
		var fromJSON, fromYAML any
		if err := json.Unmarshal([]byte(jsonOut), &fromJSON); err != nil {
			t.Fatalf("%s -o json: %v", name, err)
		}
		if err := yaml.Unmarshal([]byte(yamlOut), &fromYAML); err != nil {
			t.Fatalf("%s -o yaml: %v", name, err)
		}
		// The cell moves on between the two calls (the workload is
		// placed); their shapes are the same.
		if shape(fromJSON) != shape(fromYAML) {
			t.Errorf("%s: yaml and json differ: %s, %s\n%s\n%s", name, shape(fromJSON), shape(fromYAML), jsonOut, yamlOut)
		}
		if _, errOut, code := cli(append(listing, "-o", "wide")...); code != 0 {
			t.Fatalf("%s -o wide: exit %d %s", name, code, errOut)
		}
	}
	out, _, _ := cli("nodes")
	if strings.Contains(out, "ADDRESS") || !strings.Contains(out, "7f3a9c1e ") || strings.Contains(out, "7f3a9c1e-0000") {
		t.Errorf("nodes (table):\n%s", out)
	}
	out, _, _ = cli("nodes", "-o", "wide")
	if !strings.Contains(out, "ADDRESS") || !strings.Contains(out, "HEARTBEAT") || !strings.Contains(out, "7f3a9c1e-0000-4000-8000-000000000001") {
		t.Errorf("nodes -o wide:\n%s", out)
	}
	out, _, _ = cli("allocs", "-o", "wide")
	if !strings.Contains(out, "NODE ID") || !strings.Contains(out, "CREATED") {
		t.Errorf("allocs -o wide:\n%s", out)
	}
	if _, errOut, code := cli("nodes", "-o", "jsno"); code != 1 || !strings.Contains(errOut, `did you mean "json"?`) {
		t.Errorf("a misspelt format: exit %d %s", code, errOut)
	}
}

// shape is a decoded document's outline: a list's length, a mapping's
// first-level keys.
func shape(v any) string {
	switch v := v.(type) {
	case []any:
		return fmt.Sprintf("list of %d", len(v))
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return "mapping " + strings.Join(keys, ",")
	}
	return fmt.Sprintf("%T", v)
}

// TestEventFilters: by type, node and time, each checked; a misspelt type
// names the one meant, an ambiguous node the candidates.
func TestEventFilters(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, nil)
	c.WaitReady(0)
	registerNode(t, c, "node-aaaa", "n1")
	registerNode(t, c, "node-bbbb", "n2")
	addr := c.Addr(0)
	events := func(args ...string) ([]api.Event, string, int) {
		out, errOut, code := runCLI(append([]string{"--addr", addr, "events", "-o", "json"}, args...)...)
		var list []api.Event
		if code == 0 {
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
		}
		return list, errOut, code
	}
	all, _, _ := events()
	byType, _, _ := events("--type", "node-registered")
	if len(byType) != 2 || len(all) <= len(byType) {
		t.Fatalf("--type node-registered: %d of %d", len(byType), len(all))
	}
	for _, e := range byType {
		if e.Type != api.EventNodeRegistered {
			t.Fatalf("--type kept %+v", e)
		}
	}
	byNode, _, _ := events("--node", "n2")
	if len(byNode) == 0 {
		t.Fatal("--node n2: nothing")
	}
	for _, e := range byNode {
		if e.NodeID != "node-bbbb" {
			t.Fatalf("--node kept %+v", e)
		}
	}
	if future, errOut, code := events("--type", "batch-completed"); code != 0 || len(future) != 0 || !strings.Contains(errOut, "not an event type this strata knows") {
		t.Fatalf("an unknown type unlike any: exit %d, %d events, %s", code, len(future), errOut)
	}
	if recent, _, _ := events("--since", "1h"); len(recent) != len(all) {
		t.Fatalf("--since 1h: %d of %d", len(recent), len(all))
	}
	if old, _, _ := events("--until", "1h"); len(old) != 0 {
		t.Fatalf("--until 1h: %d", len(old))
	}
	if later, _, _ := events("--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)); len(later) != 0 {
		t.Fatalf("--since an hour ahead: %d", len(later))
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--type", "node-registred"}, `unknown event type (did you mean "node-registered"?)`},
		{[]string{"--node", "node-"}, `node id prefix "node-" is ambiguous`},
		{[]string{"--since", "yesterday"}, "want a duration back from now"},
		{[]string{"--type", "node-drain,alloc-migraton"}, `did you mean "alloc-migration"?`},
	} {
		if _, errOut, code := events(bad.args...); code != 1 || !strings.Contains(errOut, bad.want) {
			t.Errorf("%v: exit %d %s", bad.args, code, errOut)
		}
	}
}

// syncBuffer is an output a command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWatch: nodes --watch prints the listing, then again when a node
// changes, until interrupted.
func TestWatch(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, nil)
	c.WaitReady(0)
	registerNode(t, c, "node-aaaa", "n1")
	for i, args := range [][]string{{"status", "--watch", "-o", "json"}, {"allocs", "-w", "-o", "yaml"}, {"nodes", "--watch"}} {
		out := &syncBuffer{}
		g := &globals{stdout: out, stderr: &syncBuffer{}}
		root := newRoot(g)
		root.SetArgs(append([]string{"--addr", c.Addr(0)}, args...))
		root.SetOut(out)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- root.ExecuteContext(ctx) }()
		servertest.Eventually(t, 10*time.Second, "the first listing", func() error {
			if out.String() == "" {
				return fmt.Errorf("nothing yet")
			}
			return nil
		})
		first := out.String()
		switch args[0] {
		case "nodes":
			if _, _, code := runCLI("--addr", c.Addr(0), "node", "eligibility", "n1", "--disable"); code != 0 {
				t.Fatal("cordon")
			}
		default:
			doc := filepath.Join(t.TempDir(), "w.yaml")
			os.WriteFile(doc, []byte(strings.ReplaceAll(tinyDoc, "NAME", fmt.Sprintf("w%d", i))), 0o644)
			if _, errOut, code := runCLI("--addr", c.Addr(0), "run", doc); code != 0 {
				t.Fatalf("run: %s", errOut)
			}
		}
		servertest.Eventually(t, 10*time.Second, strings.Join(args, " ")+" prints the change", func() error {
			if now := out.String(); len(now) <= len(first) {
				return fmt.Errorf("still %q", now)
			}
			return nil
		})
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%v ended with %v", args, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v did not end when interrupted", args)
		}
		if args[0] == "nodes" && !strings.Contains(out.String(), "ineligible") {
			t.Fatalf("the watch did not show the change:\n%s", out)
		}
	}
}

// TestCompletionAndVersion: shell completion offers the cell's node names
// and ids; strata version says the API version.
func TestCompletionAndVersion(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, nil)
	c.WaitReady(0)
	registerNode(t, c, "7f3a9c1e-0000-4000-8000-000000000001", "n1")
	out, errOut, code := runCLI("--addr", c.Addr(0), "__complete", "node", "drain", "")
	if code != 0 || !strings.Contains(out, "n1\t") || !strings.Contains(out, "7f3a9c1e\t") {
		t.Fatalf("completion of node drain: exit %d %q %s", code, out, errOut)
	}
	out, _, _ = runCLI("--addr", c.Addr(0), "__complete", "events", "--type", "node-")
	if !strings.Contains(out, "node-down") {
		t.Fatalf("completion of --type: %q", out)
	}
	out, _, code = runCLI("__complete", "--addr", "http://127.0.0.1:1", "node", "status", "")
	if code != 0 || strings.Contains(out, "n1") {
		t.Fatalf("completion with no cell: exit %d %q", code, out)
	}
	out, _, code = runCLI("completion", "bash")
	if code != 0 || !strings.Contains(out, "__start_strata") {
		t.Fatalf("completion bash: exit %d", code)
	}
	out, _, code = runCLI("version", "-o", "json")
	var info version.Info
	if code != 0 || json.Unmarshal([]byte(out), &info) != nil || info.APIVersion != "v1" || info.Commit == "" {
		t.Fatalf("version: exit %d %s", code, out)
	}
}
