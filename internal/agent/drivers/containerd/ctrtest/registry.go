package ctrtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	client "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/pkg/namespaces"
)

// Registry starts Debian's docker-registry on a free loopback port with
// storage in a temporary directory and returns its host:port; it stops
// when t ends.
func Registry(t testing.TB) string {
	t.Helper()
	RequireRoot(t, "docker-registry")
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	conf := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", filepath.Join(dir, "data"), addr)
	confPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("docker-registry", "serve", confPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		logFile.Close()
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "registry.log"))
			t.Fatalf("docker-registry did not answer on %s: %v\n%s", addr, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Push imports the OCI archive into a scratch namespace of the daemon at
// socket and pushes it to ref (a loopback registry, plain HTTP).
func Push(t testing.TB, socket, archive, ref string) {
	t.Helper()
	ns := Namespace(t, socket)
	c, err := client.New(socket, client.WithDefaultNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(namespaces.WithNamespace(context.Background(), ns), time.Minute)
	defer cancel()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	imgs, err := c.Import(ctx, f, client.WithIndexName(ref), client.WithImageRefTranslator(func(string) string { return "" }))
	if err != nil {
		t.Fatalf("import %s: %v", archive, err)
	}
	var target images.Image
	for _, img := range imgs {
		if img.Name == ref {
			target = img
		}
	}
	resolver := docker.NewResolver(docker.ResolverOptions{
		Hosts: docker.ConfigureDefaultRegistries(docker.WithPlainHTTP(docker.MatchLocalhost)),
	})
	if err := c.Push(ctx, ref, target.Target, client.WithResolver(resolver)); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
}

// Load imports the OCI archive into namespace ns of the daemon at socket
// under name, as an operator's `ctr -n NS images import --index-name NAME`
// would preload a node: the driver then finds the image and pulls nothing.
func Load(t testing.TB, socket, ns, archive, name string) {
	t.Helper()
	c, err := client.New(socket, client.WithDefaultNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(namespaces.WithNamespace(context.Background(), ns), time.Minute)
	defer cancel()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := c.Import(ctx, f, client.WithIndexName(name), client.WithImageRefTranslator(func(string) string { return "" })); err != nil {
		t.Fatalf("import %s as %s: %v", archive, name, err)
	}
}

// Containers lists the ids of the containers in namespace ns.
func Containers(t testing.TB, socket, ns string) []string {
	t.Helper()
	c, err := client.New(socket, client.WithDefaultNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctrs, err := c.Containers(namespaces.WithNamespace(context.Background(), ns))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ctr := range ctrs {
		ids = append(ids, ctr.ID())
	}
	return ids
}
