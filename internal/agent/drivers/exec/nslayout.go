package exec

import (
	"fmt"
	"github.com/strata-dev/strata/internal/agent/mountinfo"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
)

// A namespaced task's mount namespace is a copy of the host's with the
// init's own mounts on top (mounts.go). criu dumps it with the host's
// mounts, and the init's binds of host directories (the task's directory,
// its cgroups, the strata binary), as external: the image holds only their
// mount points and a key, and the restore binds the target's directories
// at those keys. The init's tmpfs mounts (hidden paths, secrets, the
// cgroup cover) and its /proc are dumped and restored with their content.
//
// Inside the namespace every path is the one of the node that started the
// task; a restored task keeps them. nsLayout records which mount points are
// the init's, so that a task restored from an image can be dumped again:
// the driver derives it from the spec at start and carries it in the image
// (layoutFile) and, on the target, in the task directory.

// layoutFile names the layout in an image and in a restored task's
// directory.
const layoutFile = "nslayout.json"

// External mount kinds in an image's layout.
const (
	extHost    = "host"    // a host mount: the target's mount at the same path
	extSandbox = "sandbox" // the task's own directory
	extExe     = "exe"     // the strata binary, bound where a hidden path held it
	extCgroup  = "cgroup"  // a cgroup directory of the task (Rel: its hierarchy)
)

// nsLayout is where the init put its own mounts in the task's namespace.
type nsLayout struct {
	Tmpfs      []string `json:"tmpfs"`               // hidden paths, the cgroup cover, the secrets dir
	Sandbox    string   `json:"sandbox"`             // bind of the task's own directory
	Exe        string   `json:"exe,omitempty"`       // bind of the strata binary, when hidden
	CgroupRoot string   `json:"cgroupRoot"`          // the cgroup cover's path
	Cgroups    []string `json:"cgroups"`             // binds of the task's cgroup directories
	Proc       []string `json:"proc"`                // the new /proc and its read-only binds
	Externals  []nsExt  `json:"externals,omitempty"` // filled at dump: what the image expects bound
}

// nsExt is one external mount of an image: criu's key and what it stands for.
type nsExt struct {
	Key   string `json:"key"`
	Kind  string `json:"kind"`
	Point string `json:"point"`          // the mount point in the task's namespace
	Path  string `json:"path,omitempty"` // extHost: the host path; extCgroup: the hierarchy under the cgroup root ("" on v2)
}

// layoutOf derives the layout the init builds for spec s (setupMounts).
func layoutOf(s *spec) *nsLayout {
	l := &nsLayout{Sandbox: s.SandboxDir, CgroupRoot: s.CgroupRoot,
		Proc: []string{"/proc", "/proc/sys", "/proc/sysrq-trigger"}}
	l.Tmpfs = append(l.Tmpfs, s.HidePaths...)
	l.Tmpfs = append(l.Tmpfs, s.CgroupRoot)
	if len(s.Secrets) > 0 {
		l.Tmpfs = append(l.Tmpfs, filepath.Join(s.SandboxDir, secretsName))
	}
	for _, dir := range s.CgroupDirs {
		target := s.CgroupRoot
		if s.CgroupVersion == 1 {
			if rel, err := filepath.Rel(s.CgroupRoot, dir); err == nil {
				controller, _, _ := strings.Cut(rel, string(filepath.Separator))
				target = filepath.Join(s.CgroupRoot, controller)
			}
		}
		l.Cgroups = append(l.Cgroups, target)
	}
	if len(s.ExecCommand) > 0 {
		// The init's binary, as /proc/self/exe names it.
		if exe, err := filepath.EvalSymlinks(s.ExecCommand[0]); err == nil && underAny(exe, s.HidePaths) {
			l.Exe = exe
		}
	}
	return l
}

// mountEntry is one line of a mountinfo file.
type mountEntry = mountinfo.Entry

// readMountInfo parses /proc/<proc>/mountinfo (proc: a pid or "self").
func readMountInfo(proc string) ([]mountEntry, error) { return mountinfo.Read(proc) }

// topmost returns, for each mount point, the mount mounted last there (the
// one no other mount at the same point sits on).
func topmost(mounts []mountEntry) map[string]mountEntry {
	byID := map[int]mountEntry{}
	for _, m := range mounts {
		byID[m.ID] = m
	}
	covered := map[int]bool{}
	for _, m := range mounts {
		if p, ok := byID[m.Parent]; ok && p.Point == m.Point {
			covered[p.ID] = true
		}
	}
	top := map[string]mountEntry{}
	for _, m := range mounts {
		if !covered[m.ID] {
			top[m.Point] = m
		}
	}
	return top
}

// externals classifies the mounts of a task's namespace: the init's binds
// of host directories and every host mount but the root become external
// mounts (criu's --external mnt[point]:key on dump); the init's tmpfs and
// proc mounts are dumped with the namespace. It fills l.Externals and
// returns criu's dump arguments; it fails where a host mount shares its
// mount point with one of the init's (the init detaches the host's at
// /proc, the cgroup root and below hidden paths, so only a host mount that
// holds the task's directory can).
func (l *nsLayout) externals(mounts []mountEntry) ([]string, error) {
	top := topmost(mounts)
	own := map[int]bool{}
	for _, p := range append(append(append([]string(nil), l.Tmpfs...), l.Proc...), l.CgroupRoot) {
		if m, ok := top[p]; ok {
			own[m.ID] = true
		}
	}
	var exts []nsExt
	addOwn := func(point, key, kind, path string) {
		if m, ok := top[point]; ok && point != "" {
			own[m.ID] = true
			exts = append(exts, nsExt{Key: key, Kind: kind, Point: point, Path: path})
		}
	}
	addOwn(l.Sandbox, "strata-sandbox", extSandbox, "")
	addOwn(l.Exe, "strata-exe", extExe, "")
	for _, cg := range l.Cgroups {
		rel, err := filepath.Rel(l.CgroupRoot, cg)
		if err != nil || rel == "." {
			rel = ""
		}
		addOwn(cg, "strata-cg/"+rel, extCgroup, rel)
	}
	ownPoints := map[string]bool{}
	for _, m := range mounts {
		if own[m.ID] {
			ownPoints[m.Point] = true
		}
	}
	seen := map[string]bool{}
	for _, m := range mounts {
		if own[m.ID] || m.Point == "/" || seen[m.Point] {
			continue
		}
		if ownPoints[m.Point] {
			// criu names an external mount by its mount point: this
			// host mount and the init's own could not be told apart.
			return nil, fmt.Errorf("the host's %s mount at %s lies under the task's own mount there; criu cannot tell them apart", m.FSType, m.Point)
		}
		seen[m.Point] = true
		exts = append(exts, nsExt{Key: "h" + m.Point, Kind: extHost, Point: m.Point, Path: m.Point})
	}
	sort.Slice(exts, func(i, j int) bool { return exts[i].Key < exts[j].Key })
	var args []string
	for _, e := range exts {
		args = append(args, "--external", "mnt["+e.Point+"]:"+e.Key)
	}
	l.Externals = exts
	return args, nil
}

// dumpLayout works out the external mounts of a namespaced task's dump,
// writes the layout into the image directory and returns criu's arguments
// for them.
func (d *Driver) dumpLayout(t *task, dir string) ([]string, error) {
	var l nsLayout
	ok, err := taskfile.ReadJSON(filepath.Join(t.handle.TaskDir, layoutFile), &l)
	if err != nil {
		return nil, err
	}
	if !ok {
		// Started here: the spec says where the init mounted.
		var s spec
		if ok, err := taskfile.ReadJSON(filepath.Join(t.handle.TaskDir, specFile), &s); !ok || err != nil {
			return nil, fmt.Errorf("read the task's spec: %v", err)
		}
		l = *layoutOf(&s)
	}
	mounts, err := readMountInfo(strconv.Itoa(t.handle.InitPID))
	if err != nil {
		return nil, fmt.Errorf("the task's mounts: %w", err)
	}
	args, err := l.externals(mounts)
	if err != nil {
		return nil, err
	}
	if err := taskfile.WriteJSON(filepath.Join(dir, layoutFile), &l); err != nil {
		return nil, err
	}
	return args, nil
}

// readLayout reads an image's layout; nil for an image of a task without
// namespaces.
func readLayout(dir string) (*nsLayout, error) {
	var l nsLayout
	ok, err := taskfile.ReadJSON(filepath.Join(dir, layoutFile), &l)
	if err != nil {
		return nil, fmt.Errorf("image layout: %w", err)
	}
	if !ok {
		return nil, nil
	}
	return &l, nil
}

// restoreExternals maps an image's external mounts to this node's paths
// for the task s: its own directory, its cgroup directories, the strata
// binary, and the host mounts at the same paths. It fails, naming the
// mount, when this node has nothing to bind there.
func (d *Driver) restoreExternals(l *nsLayout, s *spec) ([]string, error) {
	cgroupDir := map[string]string{}
	for _, dir := range s.CgroupDirs {
		rel := ""
		if s.CgroupVersion == 1 {
			r, err := filepath.Rel(s.CgroupRoot, dir)
			if err != nil {
				return nil, err
			}
			rel, _, _ = strings.Cut(r, string(filepath.Separator))
		}
		cgroupDir[rel] = dir
	}
	var args []string
	for _, e := range l.Externals {
		var path string
		switch e.Kind {
		case extHost:
			path = e.Path
		case extSandbox:
			path = s.SandboxDir
		case extExe:
			exe, err := filepath.EvalSymlinks(d.cfg.ShimCommand[0])
			if err != nil {
				return nil, fmt.Errorf("external mount %s: %w", e.Point, err)
			}
			path = exe
		case extCgroup:
			path = cgroupDir[e.Path]
		default:
			return nil, fmt.Errorf("external mount %s: unknown kind %q", e.Point, e.Kind)
		}
		if path == "" {
			return nil, fmt.Errorf("external mount %s (%s %s): nothing on this node to bind there", e.Point, e.Kind, e.Path)
		}
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("external mount %s (%s): %w", e.Point, e.Kind, err)
		}
		args = append(args, "--external", "mnt["+e.Key+"]:"+path)
	}
	return args, nil
}
