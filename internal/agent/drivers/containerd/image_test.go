package containerd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/core/snapshots"
	"github.com/containerd/errdefs"

	"github.com/strata-dev/strata/internal/agent/drivers/containerd/ctrtest"
)

func TestPullFromRegistryShowsProgress(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	ref := ctrtest.Registry(t) + "/strata/busybox:test"
	ctrtest.Push(t, e.socket, archive, ref)
	d := e.driver()

	var mu sync.Mutex
	var msgs []string
	cfg := newTask(t, ref, "sh", "-c", "echo pulled").progress(func(m string) {
		mu.Lock()
		msgs = append(msgs, m)
		mu.Unlock()
	}).build()
	start(t, d, cfg)
	if res := wait(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("result = %+v", res)
	}
	eventually(t, "stdout.log", func() bool { return readLog(t, cfg.TaskDir, "stdout") == "pulled\n" })
	mu.Lock()
	defer mu.Unlock()
	if len(msgs) == 0 || !strings.HasPrefix(msgs[0], "pulling image "+ref) {
		t.Fatalf("progress = %q, want pull messages", msgs)
	}
	if last := msgs[len(msgs)-1]; !strings.Contains(last, "1/1 layers") {
		t.Fatalf("last progress %q, want the layer complete (all: %q)", last, msgs)
	}

	// A second start finds the image and pulls nothing.
	msgs = nil
	again := newTask(t, ref, "true").progress(func(m string) { msgs = append(msgs, m) }).build()
	start(t, d, again)
	wait(t, d, again.ID)
	for _, m := range msgs {
		if strings.HasPrefix(m, "pulling") {
			t.Fatalf("second start pulled again: %q", msgs)
		}
	}
}

func TestBadImagesFailWithAReasonAndLeaveNothing(t *testing.T) {
	e := newEnv(t)
	registry := ctrtest.Registry(t)
	corrupt := filepath.Join(t.TempDir(), "corrupt.tar")
	os.WriteFile(corrupt, []byte("this is not a tar archive"), 0o644)
	d := e.driver()
	for _, c := range []struct{ name, image, want string }{
		{"missing archive", ArchivePrefix + "/nonexistent/image.tar", "no such file"},
		{"relative archive", ArchivePrefix + "image.tar", "must be absolute"},
		{"corrupt archive", ArchivePrefix + corrupt, "import"},
		{"unknown repository", registry + "/strata/nothing:here", "not found"},
		{"malformed reference", "UPPER/Case::bad", "pull"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := newTask(t, c.image, "true").build()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := d.StartTask(ctx, cfg)
			if !errors.Is(err, ErrBadImage) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("StartTask = %v, want ErrBadImage mentioning %q", err, c.want)
			}
			if _, err := d.client.LoadContainer(d.namespaced(ctx), containerID(cfg.ID)); !errdefs.IsNotFound(err) {
				t.Fatalf("container left behind after a failed start (%v)", err)
			}
		})
	}
	imgs, err := d.client.ImageService().List(d.namespaced(context.Background()))
	if err != nil || len(imgs) != 0 {
		t.Fatalf("images left behind: %v (%v)", imgs, err)
	}
}

func TestImageCollectorRemovesUnusedImagesAfterGrace(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	ctx := d.namespaced(context.Background())
	image := ArchivePrefix + archive

	cfg := newTask(t, image, "sleep", "60").build()
	start(t, d, cfg)
	e.clock.advance(2 * time.Hour)
	if removed, err := d.CollectImages(ctx); err != nil || len(removed) != 0 {
		t.Fatalf("collect while a container uses the image: removed %v (%v)", removed, err)
	}
	if err := d.StopTask(cfg.ID, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	wait(t, d, cfg.ID)
	if err := d.DestroyTask(cfg.ID); err != nil {
		t.Fatal(err)
	}

	// Unused now, but it was seen in use at the last pass: within the grace.
	e.clock.advance(59 * time.Minute)
	if removed, err := d.CollectImages(ctx); err != nil || len(removed) != 0 {
		t.Fatalf("collect within the grace: removed %v (%v)", removed, err)
	}
	e.clock.advance(time.Minute)
	// A start that takes the image between the collector's listing and
	// its delete stamps it under the image's lock; the re-check keeps it.
	d.touchImage(ctx, image)
	if gone, err := d.removeIfStillUnused(ctx, image, e.clock.Now()); gone || err != nil {
		t.Fatalf("removeIfStillUnused after a fresh stamp = %v, %v; want kept", gone, err)
	}
	e.clock.advance(time.Hour)
	removed, err := d.CollectImages(ctx)
	if err != nil || len(removed) != 1 || removed[0] != image {
		t.Fatalf("collect after the grace: removed %v (%v), want [%s]", removed, err, image)
	}
	if _, err := d.client.GetImage(ctx, image); !errdefs.IsNotFound(err) {
		t.Fatalf("image still there after collection (%v)", err)
	}
	// The snapshots of its layers went with it (containerd's GC, run
	// synchronously by the delete).
	if snaps := countSnapshots(t, d, false); snaps != 0 {
		t.Fatalf("%d snapshots left after the image was collected", snaps)
	}

	// A task can use it again: it is imported anew.
	again := newTask(t, image, "true").build()
	start(t, d, again)
	if res := wait(t, d, again.ID); !res.Successful() {
		t.Fatalf("restart after collection: %+v", res)
	}
}

func TestJudgeImage(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	stamp := func(ago time.Duration) string { return now.Add(-ago).Format(time.RFC3339) }
	for _, c := range []struct {
		name     string
		inUse    bool
		lastUsed string
		want     imageVerdict
	}{
		{"in use long ago is still in use", true, stamp(48 * time.Hour), touchImage},
		{"unused, never stamped: start the clock", false, "", touchImage},
		{"unused, garbage stamp: start the clock", false, "yesterday", touchImage},
		{"unused within the grace", false, stamp(59 * time.Minute), keepImage},
		{"unused exactly the grace", false, stamp(time.Hour), removeImage},
		{"unused for days", false, stamp(72 * time.Hour), removeImage},
		{"stamp in the future (clock step)", false, stamp(-time.Hour), keepImage},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := judgeImage(c.inUse, c.lastUsed, now, time.Hour); got != c.want {
				t.Fatalf("judgeImage = %d, want %d", got, c.want)
			}
		})
	}
}

func TestPullProgressLine(t *testing.T) {
	p := &pullProgress{ref: "r:1", sizes: map[string]int64{}}
	if got := p.String(); got != "pulling image r:1: resolving" {
		t.Fatalf("before layers: %q", got)
	}
	p.addLayer("sha256:a", 3<<20)
	p.addLayer("sha256:b", 1<<20)
	p.addLayer("sha256:a", 3<<20) // seen twice, counted once
	p.have = map[string]int64{"sha256:a": 3 << 20, "sha256:b": 512 << 10}
	if got, want := p.String(), "pulling image r:1: 1/2 layers, 3.5MiB/4.0MiB"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}

// countSnapshots counts the snapshots in the driver's namespace: all of
// them, or with activeOnly the containers' writable ones (not image layers).
func countSnapshots(t *testing.T, d *Driver, activeOnly bool) int {
	t.Helper()
	n := 0
	err := d.client.SnapshotService(d.cfg.Snapshotter).Walk(d.namespaced(context.Background()), func(_ context.Context, info snapshots.Info) error {
		if !activeOnly || info.Kind == snapshots.KindActive {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestArchiveImportedAgainOnlyWhenChanged: an unchanged archive is not
// imported again for the next task (it cost 70–90 ms a start), and one
// rewritten with another image is.
func TestArchiveImportedAgainOnlyWhenChanged(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	ctx := d.namespaced(context.Background())
	ref := ArchivePrefix + archive
	ensure := func() (digest string, imported bool) {
		t.Helper()
		img, err := d.ensureImage(ctx, ref, func(line string) {
			if strings.HasPrefix(line, "importing image") {
				imported = true
			}
		})
		if err != nil {
			t.Fatalf("ensureImage: %v", err)
		}
		return img.Target().Digest.String(), imported
	}
	first, imported := ensure()
	if !imported {
		t.Fatal("the first use did not import the archive")
	}
	if again, imported := ensure(); imported || again != first {
		t.Fatalf("unchanged archive: imported %v, digest %s (was %s); want the image as it was", imported, again, first)
	}
	other, err := ctrtest.BuildBusyboxArchive(t.TempDir(), ctrtest.ImageOptions{Cmd: []string{"/bin/true"}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(archive, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, imported := ensure(); !imported || changed == first {
		t.Fatalf("rewritten archive: imported %v, digest %s (was %s); want a new import", imported, changed, first)
	}
}
