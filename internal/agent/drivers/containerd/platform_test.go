package containerd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerd/platforms"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/containerd/ctrtest"
)

func TestPlatformMismatch(t *testing.T) {
	amd64 := ocispec.Platform{OS: "linux", Architecture: "amd64"}
	arm64 := ocispec.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	for _, tc := range []struct {
		name string
		have []ocispec.Platform
		want string // "" when it runs
	}{
		{"no platform named", nil, ""},
		{"single match", []ocispec.Platform{amd64}, ""},
		{"index with a match", []ocispec.Platform{arm64, amd64}, ""},
		{"arm64 only", []ocispec.Platform{arm64}, "image r is for linux/arm64/v8, this node is linux/amd64: require cpu.arch in (arm64)"},
		{"two others", []ocispec.Platform{arm64, {OS: "linux", Architecture: "ppc64le"}}, "require cpu.arch in (arm64, ppc64le)"},
		{"windows amd64", []ocispec.Platform{{OS: "windows", Architecture: "amd64"}}, "is for windows/amd64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := platformMismatch("r", tc.have, platforms.Only(amd64), amd64)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("platformMismatch = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, drivers.ErrWrongNode) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("platformMismatch = %v, want ErrWrongNode with %q", err, tc.want)
			}
		})
	}
}

func TestApplyHardware(t *testing.T) {
	s := &specs.Spec{}
	applyHardware(s, &drivers.TaskConfig{Mems: []int{0, 2}, Resources: api.Resources{HugePages2Mi: 64 << 20}})
	r := s.Linux.Resources
	if r.CPU == nil || r.CPU.Mems != "0,2" {
		t.Errorf("mems = %+v, want 0,2", r.CPU)
	}
	if len(r.HugepageLimits) != 0 {
		t.Errorf("hugepage limits in the spec = %+v; the driver writes them itself", r.HugepageLimits)
	}
	s = &specs.Spec{}
	applyHardware(s, &drivers.TaskConfig{})
	if s.Linux != nil {
		t.Errorf("nothing asked, got %+v", s.Linux)
	}
}

// TestHugePagesReachTheContainer: a container asking for one 2Mi page
// runs in a hugetlb group limited to it (on this project's hybrid hosts
// the cgroup2 mount's, which runc cannot limit), and the group goes with
// the container.
func TestHugePagesReachTheContainer(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	how := cgroup.HugetlbEnforced(d.version, d.cfg.CgroupRoot)
	if how == "" {
		t.Skip("no hugetlb controller on this host")
	}
	cfg := newTask(t, ArchivePrefix+archive, "sleep", "60").build()
	cfg.Resources.HugePages2Mi = 2 << 20
	h := start(t, d, cfg)
	var dir, file string
	switch how {
	case "v1 hugetlb hierarchy":
		dir, file = filepath.Join(d.cfg.CgroupRoot, "hugetlb", h.Cgroup), "hugetlb.2MB.limit_in_bytes"
	case "cgroup2 hugetlb (hybrid)":
		dir, file = filepath.Join(d.cfg.CgroupRoot, "unified", h.Cgroup), "hugetlb.2MB.max"
	default:
		dir, file = filepath.Join(d.cfg.CgroupRoot, h.Cgroup), "hugetlb.2MB.max"
	}
	if got, err := os.ReadFile(filepath.Join(dir, file)); err != nil || strings.TrimSpace(string(got)) != strconv.Itoa(2<<20) {
		t.Errorf("%s = %q, %v; want %d", file, got, err, 2<<20)
	}
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil || !strings.Contains(string(procs), strconv.Itoa(h.PID)) {
		t.Errorf("container pid %d not in %s (%q, %v)", h.PID, dir, procs, err)
	}
	d.StopTask(cfg.ID, 100*time.Millisecond)
	wait(t, d, cfg.ID)
	if err := d.DestroyTask(cfg.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", dir, err)
	}
}

// TestForeignArchitectureImageFailsFast: an archive whose image is for
// another architecture is refused before anything runs, with ErrWrongNode
// and the rule that would place it.
func TestForeignArchitectureImageFailsFast(t *testing.T) {
	e := newEnv(t)
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	archive := ctrtest.BusyboxArchiveWith(t, ctrtest.ImageOptions{Architecture: other})
	d := e.driver()
	cfg := newTask(t, ArchivePrefix+archive, "true").build()
	_, err := d.StartTask(context.Background(), cfg)
	if !errors.Is(err, drivers.ErrWrongNode) || !strings.Contains(err.Error(), "require cpu.arch in ("+other+")") {
		t.Fatalf("StartTask = %v, want ErrWrongNode naming cpu.arch %s", err, other)
	}
	if _, err := d.client.LoadContainer(d.namespaced(context.Background()), containerID(cfg.ID)); err == nil {
		t.Fatal("a container was created for an image of another architecture")
	}
}
