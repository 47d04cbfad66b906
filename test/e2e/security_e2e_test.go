package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestDevCellWithTLSFromReadme is the README's first story as a new user
// runs it, with the defaults: `strata dev` in a fresh directory makes its
// own CA, certificates and join token, serves HTTPS, and its agent joins
// over mutual TLS; the CLI, run from the same directory with no setup,
// finds the credentials, runs hello and reads its log through the server.
// A plaintext request gets nothing.
func TestDevCellWithTLSFromReadme(t *testing.T) {
	dir := t.TempDir()
	httpAddr := freeAddr(t)
	dev := exec.Command(strataBin, "dev", "--http-addr", httpAddr)
	dev.Dir = dir
	var devLog syncBuffer
	dev.Stdout, dev.Stderr = &devLog, &devLog
	dev.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	strata := func(args ...string) (string, string, int) {
		cmd := exec.Command(strataBin, append([]string{"--addr", httpAddr}, args...)...)
		cmd.Dir = dir
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), errb.String(), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), 0
	}
	t.Cleanup(func() {
		strata("stop", "hello", "--purge")
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			out, _, _ := strata("allocs", "hello", "-o", "json")
			var allocs []*api.Allocation
			if json.Unmarshal([]byte(out), &allocs) != nil || !anyLive(allocs) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		dev.Process.Signal(syscall.SIGTERM)
		dev.Wait()
		if t.Failed() {
			t.Logf("dev log:\n%s", devLog.String())
		}
	})
	waitFor := func(what string, cond func() error) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := cond()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: %v", what, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("the dev node, over TLS", func() error {
		out, errOut, code := strata("nodes", "-o", "json")
		var nodes []*api.Node
		if code != 0 || json.Unmarshal([]byte(out), &nodes) != nil || len(nodes) != 1 || nodes[0].Status != api.NodeReady {
			return fmt.Errorf("exit %d %s %s", code, out, errOut)
		}
		if !strings.HasPrefix(nodes[0].HTTPAddr, "https://") {
			return fmt.Errorf("the agent serves %s, want https", nodes[0].HTTPAddr)
		}
		return nil
	})
	for _, f := range []string{"tls/ca.pem", "tls/cli.pem", "server/join-token"} {
		if _, err := os.Stat(filepath.Join(dir, "strata-data", f)); err != nil {
			t.Errorf("dev made no %s: %v", f, err)
		}
	}
	if out, errOut, code := strata("run", "-f", filepath.Join(repoRoot(t), "examples/hello.yaml"), "--wait", "--timeout", "60s"); code != 0 {
		t.Fatalf("run: exit %d %s %s", code, out, errOut)
	}
	out, _, _ := strata("allocs", "hello", "-o", "json")
	var allocs []*api.Allocation
	if json.Unmarshal([]byte(out), &allocs) != nil || len(allocs) != 1 {
		t.Fatalf("allocs: %s", out)
	}
	waitFor("hello's log", func() error {
		out, errOut, _ := strata("logs", allocs[0].ID)
		if !strings.Contains(out, "hello from strata") {
			return fmt.Errorf("logs %q %s", out, errOut)
		}
		return nil
	})
	if resp, err := http.Get("http://" + httpAddr + "/v1/nodes"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("a plaintext request to the dev cell was answered 200")
		}
	}
}
