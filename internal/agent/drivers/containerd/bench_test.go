package containerd

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/core/images"

	"github.com/strata-dev/strata/internal/agent/drivers/containerd/ctrtest"
)

// benchmarkStart measures one task from StartTask to its exit and
// DestroyTask; with cold set the image is removed first, so every
// iteration imports (or pulls) and unpacks it again.
func benchmarkStart(b *testing.B, image func(*testing.B, *env) string, cold bool) {
	e := &env{socket: ctrtest.Socket(b)}
	e.ns = ctrtest.Namespace(b, e.socket)
	e.parent = "strata-ctrbench"
	e.clock = &fakeClock{now: time.Now()}
	ref := image(b, e)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	d, err := New(Config{Socket: e.socket, Namespace: e.ns, CgroupParent: e.parent, LogCommand: []string{self, "__containerd-log"},
		ImageGCInterval: -1, AllowRootTasks: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	defer removeCgroupTree(e.parent)
	ctx := d.namespaced(context.Background())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if cold {
			b.StopTimer()
			d.client.ImageService().Delete(ctx, ref, images.SynchronousDelete())
			b.StartTimer()
		}
		cfg := newTask(b, ref, "true").build()
		if _, err := d.StartTask(ctx, cfg); err != nil {
			b.Fatal(err)
		}
		if res, err := d.WaitTask(ctx, cfg.ID); err != nil || !res.Successful() {
			b.Fatalf("wait: %v %+v", err, res)
		}
		if err := d.DestroyTask(cfg.ID); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStartArchiveCold(b *testing.B) {
	benchmarkStart(b, func(b *testing.B, _ *env) string { return ArchivePrefix + ctrtest.BusyboxArchive(b) }, true)
}

func BenchmarkStartArchiveWarm(b *testing.B) {
	benchmarkStart(b, func(b *testing.B, _ *env) string { return ArchivePrefix + ctrtest.BusyboxArchive(b) }, false)
}

func BenchmarkStartRegistryCold(b *testing.B) {
	benchmarkStart(b, func(b *testing.B, e *env) string {
		ref := ctrtest.Registry(b) + "/strata/busybox:bench"
		ctrtest.Push(b, e.socket, ctrtest.BusyboxArchive(b), ref)
		return ref
	}, true)
}

func BenchmarkStartRegistryWarm(b *testing.B) {
	benchmarkStart(b, func(b *testing.B, e *env) string {
		ref := ctrtest.Registry(b) + "/strata/busybox:bench"
		ctrtest.Push(b, e.socket, ctrtest.BusyboxArchive(b), ref)
		return ref
	}, false)
}
