package containerd

import (
	"context"
	"fmt"
	"time"

	client "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/errdefs"
)

// imageVerdict is what the collector does with one managed image.
type imageVerdict int

const (
	keepImage   imageVerdict = iota // used recently enough
	touchImage                      // in use (or never stamped): stamp it now
	removeImage                     // unused for the grace period
)

// judgeImage decides an image's fate from whether a container uses it and
// when one last did. It is pure: the grace counts from the last time the
// driver saw the image in use (a start, or a collector pass), so an image
// is removed only after a whole grace period with no container at all.
func judgeImage(inUse bool, lastUsed string, now time.Time, grace time.Duration) imageVerdict {
	if inUse {
		return touchImage
	}
	t, err := time.Parse(time.RFC3339, lastUsed)
	if err != nil {
		return touchImage // start the clock for an image that never had one
	}
	if now.Sub(t) >= grace {
		return removeImage
	}
	return keepImage
}

// CollectImages removes the images this driver pulled or imported that no
// container of its namespace has used for ImageGCGrace; containerd's own
// garbage collector then frees their content and snapshots. It returns
// the names removed. Images the driver did not fetch are never touched.
func (d *Driver) CollectImages(ctx context.Context) ([]string, error) {
	ctx = d.namespaced(ctx)
	imgs, err := d.client.ImageService().List(ctx, fmt.Sprintf("labels.%q==true", labelManaged))
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	ctrs, err := d.client.ContainerService().List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	used := map[string]bool{}
	for _, c := range ctrs {
		used[c.Image] = true
	}
	now := d.now()
	var removed []string
	for _, img := range imgs {
		switch judgeImage(used[img.Name], img.Labels[labelLastUsed], now, d.cfg.ImageGCGrace) {
		case touchImage:
			d.touchImage(ctx, img.Name)
		case removeImage:
			gone, err := d.removeIfStillUnused(ctx, img.Name, now)
			if err != nil {
				return removed, err
			}
			if gone {
				d.log.Info("image removed: unused for the grace period", "image", img.Name, "grace", d.cfg.ImageGCGrace)
				removed = append(removed, img.Name)
			}
		}
	}
	return removed, nil
}

// removeIfStillUnused judges the image again under its lock, from a fresh
// read of its stamp and of the containers using it, and removes it only if
// the verdict holds: a start that got the image meanwhile (and stamped it)
// or a container created since keeps it.
func (d *Driver) removeIfStillUnused(ctx context.Context, name string, now time.Time) (bool, error) {
	defer d.images.lock(name)()
	img, err := d.client.ImageService().Get(ctx, name)
	if errdefs.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("image %s: %w", name, err)
	}
	users, err := d.client.ContainerService().List(ctx, fmt.Sprintf("image==%q", name))
	if err != nil {
		return false, fmt.Errorf("list containers of %s: %w", name, err)
	}
	if judgeImage(len(users) > 0, img.Labels[labelLastUsed], now, d.cfg.ImageGCGrace) != removeImage {
		return false, nil
	}
	if err := d.client.ImageService().Delete(ctx, name, images.SynchronousDelete()); err != nil && !errdefs.IsNotFound(err) {
		return false, fmt.Errorf("remove image %s: %w", name, err)
	}
	return true, nil
}

// touchImage stamps the image as used now; failures only delay collection.
func (d *Driver) touchImage(ctx context.Context, name string) {
	img := images.Image{Name: name, Labels: map[string]string{labelLastUsed: d.now().UTC().Format(time.RFC3339)}}
	if _, err := d.client.ImageService().Update(ctx, img, "labels."+labelLastUsed); err != nil {
		d.log.Debug("cannot stamp image", "image", name, "err", err)
	}
}

// leftoverAge is how old a container the driver does not track must be
// before the sweep removes it: older than any start in progress.
const leftoverAge = 10 * time.Minute

// SweepContainers removes the containers of the driver's namespace that no
// task of this driver tracks and whose process is not running: what an
// agent that lost its records (or died between a start and its record)
// left behind, with its snapshot. A running one is left to the agent's
// host reconciliation, which stops what the cell does not want.
func (d *Driver) SweepContainers(ctx context.Context) ([]string, error) {
	ctx = d.namespaced(ctx)
	ctrs, err := d.client.Containers(ctx)
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	tracked := map[string]bool{}
	for _, id := range d.tasks.IDs() {
		if e, err := d.tasks.Get(id); err == nil {
			tracked[e.Data.containerID] = true
		}
	}
	d.mu.Lock()
	for id := range d.starting {
		tracked[id] = true
	}
	d.mu.Unlock()
	now := d.now()
	var removed []string
	for _, c := range ctrs {
		if tracked[c.ID()] {
			continue
		}
		info, err := c.Info(ctx, client.WithoutRefreshedMetadata)
		if err != nil || now.Sub(info.CreatedAt) < leftoverAge {
			continue
		}
		if t, err := c.Task(ctx, nil); err == nil {
			if st, err := t.Status(ctx); err != nil || st.Status == client.Running || st.Status == client.Paused || st.Status == client.Pausing {
				continue
			}
		}
		if err := d.removeContainer(ctx, c.ID()); err != nil {
			return removed, fmt.Errorf("remove leftover container %s: %w", c.ID(), err)
		}
		d.log.Info("leftover container removed", "container", c.ID(), "task", info.Labels["strata.dev/task"])
		removed = append(removed, c.ID())
	}
	return removed, nil
}

func (d *Driver) gcLoop(ctx context.Context) {
	t := time.NewTicker(d.cfg.ImageGCInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := d.SweepContainers(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("container sweep failed", "err", err)
		}
		if _, err := d.CollectImages(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("image collection failed", "err", err)
		}
	}
}
