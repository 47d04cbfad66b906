package ctrtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	client "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/pkg/namespaces"
)

// SocketEnv names the environment variable with the socket of a running
// containerd that tests use instead of starting their own.
const SocketEnv = "STRATA_CONTAINERD_SOCKET"

// RequireRoot skips t unless it runs as root with the named tools on PATH.
func RequireRoot(t testing.TB, tools ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("containerd tests need root (containers, cgroups, mounts)")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found on PATH (apt-get install containerd runc umoci busybox-static docker-registry)", tool)
		}
	}
}

// Socket returns the socket of a containerd for t: $STRATA_CONTAINERD_SOCKET
// when set, otherwise a daemon with private root, state and socket that
// lives until t ends.
func Socket(t testing.TB) string {
	t.Helper()
	RequireRoot(t, "runc")
	if s := os.Getenv(SocketEnv); s != "" {
		return s
	}
	RequireRoot(t, "containerd")
	dir, err := os.MkdirTemp("", "ctrd") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	sock, cmd, err := Start(dir, filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatalf("start containerd: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			if log, err := os.ReadFile(filepath.Join(dir, "containerd.log")); err == nil {
				t.Logf("containerd log (tail):\n%s", tail(string(log), 3000))
			}
		}
		os.RemoveAll(dir)
	})
	return sock
}

// Start runs containerd with root, state and sockets under dir (no CRI
// plugin) and returns its socket once it answers.
func Start(dir, logPath string) (string, *exec.Cmd, error) {
	sock := filepath.Join(dir, "containerd.sock")
	conf := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[debug]
  address = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock, sock+".ttrpc", filepath.Join(dir, "debug.sock"))
	confPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return "", nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", nil, err
	}
	defer logFile.Close()
	cmd := exec.Command("containerd", "--config", confPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			c, err := client.New(sock, client.WithTimeout(2*time.Second))
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err = c.Version(ctx)
				cancel()
				c.Close()
				if err == nil {
					return sock, cmd, nil
				}
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			return "", nil, fmt.Errorf("containerd did not answer on %s within 20s (log %s)", sock, logPath)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Namespace returns a fresh containerd namespace name for t and removes
// what t left in it (containers, tasks, images) when t ends.
func Namespace(t testing.TB, socket string) string {
	t.Helper()
	var b [4]byte
	rand.Read(b[:])
	ns := "strata-test-" + hex.EncodeToString(b[:])
	t.Cleanup(func() { Purge(socket, ns) })
	return ns
}

// Purge deletes every task, container and image of namespace ns, then ns.
func Purge(socket, ns string) error {
	c, err := client.New(socket, client.WithDefaultNamespace(ns))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(namespaces.WithNamespace(context.Background(), ns), 30*time.Second)
	defer cancel()
	ctrs, _ := c.Containers(ctx)
	for _, ctr := range ctrs {
		if t, err := ctr.Task(ctx, nil); err == nil {
			t.Delete(ctx, client.WithProcessKill)
		}
		ctr.Delete(ctx, client.WithSnapshotCleanup)
	}
	imgs, _ := c.ImageService().List(ctx)
	for i, img := range imgs {
		var opts []images.DeleteOpt
		if i == len(imgs)-1 {
			opts = append(opts, images.SynchronousDelete())
		}
		c.ImageService().Delete(ctx, img.Name, opts...)
	}
	return c.NamespaceService().Delete(ctx, ns)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := strings.IndexByte(s[len(s)-n:], '\n')
	return s[len(s)-n+i+1:]
}
