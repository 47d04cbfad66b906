package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Where migration images live while the tasks are stopped: in the data
// dir (the default), or on a tmpfs the operator names
// (--migrate-image-dir), where criu's write of the image during the
// freeze and its read during the restore are memory copies. On the
// machines measured the data dir was faster (the page cache absorbs the
// image; docs/benchmarks.md), so the tmpfs is opt-in.
const (
	// ImageDirDisk (or "") keeps images in the data dir: the
	// allocation's task directories.
	ImageDirDisk = "disk"
	// imageHeadroom is kept free on the tmpfs beyond an image's size:
	// the node's other users of it (and criu's own files) need room too.
	imageHeadroom = 64 << 20
)

// Images is where a node's migration images live: Dir is the agent's
// --migrate-image-dir ("" or ImageDirDisk: the data dir), DataDir its data
// dir (one folder per data dir on a shared tmpfs).
type Images struct {
	Dir     string
	DataDir string
}

// imageStore is where one migration's images go.
type imageStore struct {
	root string // the agent's own folder on the tmpfs; "" when on disk
	// kind is "tmpfs" or "disk: <why not tmpfs>", for the migration's
	// report.
	kind string
}

// statfsFunc is unix.Statfs; tests replace it.
var statfsFunc = unix.Statfs

// imageTmpfsRoot is the agent's folder on the configured tmpfs (one per
// data dir, so agents sharing a machine keep apart), or "" with the reason
// when images stay on disk whatever their size.
func (im Images) imageTmpfsRoot() (root, why string) {
	base := im.Dir
	if base == "" || base == ImageDirDisk {
		return "", "disk"
	}
	var st unix.Statfs_t
	if err := statfsFunc(base, &st); err != nil {
		return "", fmt.Sprintf("disk: image dir %s: %v", base, err)
	}
	if st.Type != unix.TMPFS_MAGIC {
		return "", fmt.Sprintf("disk: image dir %s is not a tmpfs", base)
	}
	sum := sha256.Sum256([]byte(im.DataDir))
	return filepath.Join(base, "strata-images-"+hex.EncodeToString(sum[:])[:12]), ""
}

// pickImageStore chooses where an image of need bytes goes: the tmpfs
// when it has need plus headroom free, else the data dir.
func (im Images) pickImageStore(need int64) imageStore {
	root, why := im.imageTmpfsRoot()
	if root == "" {
		return imageStore{kind: why}
	}
	var st unix.Statfs_t
	if err := statfsFunc(filepath.Dir(root), &st); err != nil {
		return imageStore{kind: fmt.Sprintf("disk: image dir %s: %v", filepath.Dir(root), err)}
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if free < need+imageHeadroom {
		return imageStore{kind: fmt.Sprintf("disk: tmpfs %s has %d MiB free, the image needs up to %d MiB",
			filepath.Dir(root), free>>20, (need+imageHeadroom)>>20)}
	}
	return imageStore{root: root, kind: "tmpfs"}
}

// sourceDir is where task's image of migration mid is dumped on the
// source: under the task's directory on disk, or on the tmpfs.
func (s imageStore) sourceDir(allocID, task, taskDir, mid string) string {
	if s.root == "" {
		return filepath.Join(taskDir, "migrate-"+mid)
	}
	return filepath.Join(s.root, allocID, task, "migrate-"+mid)
}

// incomingDir is where the target unpacks migration mid's image of the
// allocation whose directory is allocDir.
func (s imageStore) incomingDir(allocID, allocDir, mid string) string {
	if s.root == "" {
		return filepath.Join(allocDir, "incoming-"+mid)
	}
	return filepath.Join(s.root, allocID, "incoming-"+mid)
}

// sourceImageDirs are the places a task's image of migration mid may be
// after an agent restart: the tmpfs one first.
func (im Images) sourceImageDirs(allocID, task, taskDir, mid string) []string {
	var dirs []string
	if root, _ := im.imageTmpfsRoot(); root != "" {
		dirs = append(dirs, imageStore{root: root}.sourceDir(allocID, task, taskDir, mid))
	}
	return append(dirs, imageStore{}.sourceDir(allocID, task, taskDir, mid))
}

// Sweep removes, at agent start, what no migration can use any
// more: images received for a restore (a target that restarted never
// resumes one) and the folders of allocations this agent no longer has.
// Source images of allocations it still has stay: SettleAtStart may
// restore from them.
func (im Images) Sweep(keep map[string]bool) {
	root, _ := im.imageTmpfsRoot()
	if root == "" {
		return
	}
	allocs, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, ad := range allocs {
		dir := filepath.Join(root, ad.Name())
		if !keep[ad.Name()] {
			os.RemoveAll(dir)
			continue
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "incoming-") {
				os.RemoveAll(filepath.Join(dir, e.Name()))
			}
		}
	}
	if left, err := os.ReadDir(root); err == nil && len(left) == 0 {
		os.Remove(root)
	}
}

// Remove removes the tmpfs folder of allocID, and the agent's tmpfs
// folder once empty.
func (im Images) Remove(allocID string) {
	root, _ := im.imageTmpfsRoot()
	if root == "" {
		return
	}
	os.RemoveAll(filepath.Join(root, allocID))
	os.Remove(root) // only when empty
}
