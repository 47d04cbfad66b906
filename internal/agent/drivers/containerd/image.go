package containerd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	client "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/errdefs"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/strata-dev/strata/internal/agent/drivers"
)

// ArchivePrefix marks an image reference that names a local OCI archive
// (a tar of an OCI image layout, as `umoci` or `skopeo copy oci-archive:`
// write it) instead of a registry: "oci-archive:/srv/images/app.tar".
const ArchivePrefix = "oci-archive:"

// Labels the driver keeps on the images it pulled or imported.
const (
	labelManaged  = "strata.dev/managed"   // "true": the collector may remove it
	labelLastUsed = "strata.dev/last-used" // RFC 3339: when a container last used it
	// labelArchive stamps an image imported from an archive with the
	// file's identity when it was read (archiveStamp): while the file is
	// unchanged, the image is used as it is, not imported again.
	labelArchive = "strata.dev/archive"
)

// ErrBadImage is wrapped by StartTask when the image cannot be pulled,
// imported or unpacked; the message says which and why.
var ErrBadImage = errors.New("image unavailable")

// imageLocks serialises work on one image reference so that two tasks
// starting together pull it once.
type imageLocks struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (l *imageLocks) lock(ref string) func() {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*sync.Mutex{}
	}
	m, ok := l.locks[ref]
	if !ok {
		m = &sync.Mutex{}
		l.locks[ref] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// ensureImage returns the task's image, unpacked into the driver's
// snapshotter: imported from an archive (again whenever the file
// changed: labelArchive), found locally, or pulled. progress hears what is happening.
func (d *Driver) ensureImage(ctx context.Context, ref string, progress func(string)) (client.Image, error) {
	defer d.images.lock(ref)()
	var img client.Image
	var err error
	if path, ok := strings.CutPrefix(ref, ArchivePrefix); ok {
		img, err = d.importArchive(ctx, ref, path, progress)
	} else {
		img, err = d.client.GetImage(ctx, ref)
		if errdefs.IsNotFound(err) {
			img, err = d.pull(ctx, ref, progress)
		}
	}
	if err := pullPlatformError(ref, err); errors.Is(err, drivers.ErrWrongNode) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadImage, ref, err)
	}
	if err := d.checkPlatform(ctx, ref, img); err != nil {
		return nil, err
	}
	unpacked, err := img.IsUnpacked(ctx, d.cfg.Snapshotter)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: check unpacked: %w", ErrBadImage, ref, err)
	}
	if !unpacked {
		progress(fmt.Sprintf("unpacking image %s", ref))
		if err := img.Unpack(ctx, d.cfg.Snapshotter); err != nil {
			return nil, fmt.Errorf("%w: %s: unpack: %w", ErrBadImage, ref, err)
		}
	}
	// Stamped while the image's lock is held: the collector re-reads the
	// stamp under the same lock before it removes anything, so an image a
	// start is about to use is never collected under it.
	if img.Labels()[labelManaged] == "true" {
		d.touchImage(ctx, ref)
	}
	return img, nil
}

func (d *Driver) importArchive(ctx context.Context, ref, path string, progress func(string)) (client.Image, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("archive path %q must be absolute", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	stamp := archiveStamp(st)
	if im, err := d.client.ImageService().Get(ctx, ref); err == nil && im.Labels[labelArchive] == stamp {
		return client.NewImage(d.client, im), nil
	}
	progress(fmt.Sprintf("importing image %s (%s)", ref, drivers.FormatBytes(st.Size())))
	imgs, err := d.client.Import(ctx, f,
		client.WithIndexName(ref),
		// Only the index gets a name: a tag inside the archive ("latest")
		// would become an image of its own that nothing collects.
		client.WithImageRefTranslator(func(string) string { return "" }),
		client.WithImageLabels(map[string]string{labelManaged: "true", labelLastUsed: d.now().UTC().Format(time.RFC3339), labelArchive: stamp}),
	)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	for _, im := range imgs {
		if im.Name == ref {
			return client.NewImage(d.client, im), nil
		}
	}
	return nil, fmt.Errorf("import: the archive holds no image index")
}

// pull fetches ref from its registry (plain HTTP for localhost only) and
// unpacks it, reporting layers and bytes as they arrive.
func (d *Driver) pull(ctx context.Context, ref string, progress func(string)) (client.Image, error) {
	p := &pullProgress{ref: ref, sizes: map[string]int64{}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.reportPull(ctx, p, progress, stop)
	}()
	resolver := docker.NewResolver(docker.ResolverOptions{
		Hosts: docker.ConfigureDefaultRegistries(docker.WithPlainHTTP(docker.MatchLocalhost)),
	})
	img, err := d.client.Pull(ctx, ref,
		client.WithResolver(resolver),
		client.WithPullUnpack,
		client.WithPullSnapshotter(d.cfg.Snapshotter),
		client.WithPullLabels(map[string]string{labelManaged: "true", labelLastUsed: d.now().UTC().Format(time.RFC3339)}),
		client.WithImageHandler(images.HandlerFunc(func(_ context.Context, desc ocispec.Descriptor) ([]ocispec.Descriptor, error) {
			if images.IsLayerType(desc.MediaType) {
				p.addLayer(desc.Digest.String(), desc.Size)
			}
			return nil, nil
		})),
	)
	close(stop)
	<-done
	if err != nil {
		return nil, fmt.Errorf("pull: %w", err)
	}
	return img, nil
}

// reportPull tells progress, whenever it changed, how much of the layers
// seen so far is in the content store.
func (d *Driver) reportPull(ctx context.Context, p *pullProgress, progress func(string), stop <-chan struct{}) {
	cs := d.client.ContentStore()
	last := ""
	tick := time.NewTicker(d.cfg.ProgressInterval)
	defer tick.Stop()
	for {
		p.observe(ctx, cs)
		if msg := p.String(); msg != last {
			progress(msg)
			last = msg
		}
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// pullProgress is what one pull has fetched: per layer, its size and the
// bytes in the content store (committed or in an active ingest).
type pullProgress struct {
	ref string

	mu    sync.Mutex
	order []string
	sizes map[string]int64
	have  map[string]int64
}

func (p *pullProgress) addLayer(digest string, size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.sizes[digest]; !ok {
		p.order = append(p.order, digest)
	}
	p.sizes[digest] = size
}

// observe reads the content store: a committed blob counts whole, an
// ingest in flight by its offset.
func (p *pullProgress) observe(ctx context.Context, cs content.Store) {
	p.mu.Lock()
	layers := append([]string(nil), p.order...)
	p.mu.Unlock()
	have := map[string]int64{}
	statuses, _ := cs.ListStatuses(ctx)
	for _, l := range layers {
		if info, err := cs.Info(ctx, digest.Digest(l)); err == nil {
			have[l] = info.Size
			continue
		}
		for _, st := range statuses {
			if strings.Contains(st.Ref, l) {
				have[l] = st.Offset
			}
		}
	}
	p.mu.Lock()
	p.have = have
	p.mu.Unlock()
}

// String is the progress line: "pulling image R: 1/3 layers, 2MiB/7MiB".
func (p *pullProgress) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.order) == 0 {
		return fmt.Sprintf("pulling image %s: resolving", p.ref)
	}
	var total, got int64
	complete := 0
	for _, l := range p.order {
		total += p.sizes[l]
		h := min(p.have[l], p.sizes[l])
		got += h
		if h == p.sizes[l] {
			complete++
		}
	}
	return fmt.Sprintf("pulling image %s: %d/%d layers, %s/%s", p.ref, complete, len(p.order), humanBytes(got), humanBytes(total))
}

// humanBytes renders n with one decimal in the largest binary unit under it.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// archiveStamp identifies the content of an archive file without reading
// it: its size, inode and change time (ctime: a file rewritten in place or
// replaced by rename changes it, and unlike the modification time no copy
// tool can set it back).
func archiveStamp(st os.FileInfo) string {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("%d:%d", st.Size(), st.ModTime().UnixNano())
	}
	return fmt.Sprintf("%d:%d:%d.%09d", st.Size(), sys.Ino, sys.Ctim.Sec, sys.Ctim.Nsec)
}
