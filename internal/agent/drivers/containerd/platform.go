package containerd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	client "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/containerd/platforms"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// checkPlatform refuses an image none of whose platforms (an index's
// manifests, or a manifest's config) runs on this node. Only the agent
// sees images (a registry or an archive on the node), so the scheduler
// cannot: the task fails at once with drivers.ErrWrongNode and a reason
// that names the cpu.arch rule that would have placed it
// (docs/hardware.md).
func (d *Driver) checkPlatform(ctx context.Context, ref string, img client.Image) error {
	have, err := images.Platforms(ctx, img.ContentStore(), img.Target())
	if err != nil {
		return fmt.Errorf("%w: %s: read its platforms: %w", ErrBadImage, ref, err)
	}
	return platformMismatch(ref, have, platforms.Default(), platforms.DefaultSpec())
}

// platformMismatch is checkPlatform's rule: nil when have is empty (an
// image that names no platform runs where it can) or one of have matches
// host.
func platformMismatch(ref string, have []ocispec.Platform, host platforms.Matcher, hostSpec ocispec.Platform) error {
	if len(have) == 0 {
		return nil
	}
	var names, arches []string
	for _, p := range have {
		if host.Match(p) {
			return nil
		}
		names = append(names, platforms.Format(p))
		arches = append(arches, p.Architecture)
	}
	slices.Sort(names)
	slices.Sort(arches)
	return fmt.Errorf("%w: image %s is for %s, this node is %s: require cpu.arch in (%s) to place it where it runs",
		drivers.ErrWrongNode, ref, strings.Join(slices.Compact(names), ", "), platforms.Format(hostSpec),
		strings.Join(slices.Compact(arches), ", "))
}

// pullPlatformError turns the error a pull gives when the image's index
// has no manifest for this node's platform into the same reason.
func pullPlatformError(ref string, err error) error {
	if err == nil || !strings.Contains(err.Error(), "no match for platform") {
		return err
	}
	return fmt.Errorf("%w: image %s has no variant for this node's platform %s: require the cpu.arch of its platforms: %w",
		drivers.ErrWrongNode, ref, platforms.Format(platforms.DefaultSpec()), err)
}

// withHardware sets cpuset.mems from the task's memory tiers. Huge page
// limits are not put in the spec: runc 1.1 cannot set them on a hybrid
// host (the hugetlb controller bound to the cgroup2 mount), so the driver
// writes them itself between creating and starting the task
// (cgroup.LimitHugePages), the same way on every layout.
func withHardware(cfg *drivers.TaskConfig) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		applyHardware(s, cfg)
		return nil
	}
}

// applyHardware writes the task's cpuset.mems into the spec.
func applyHardware(s *specs.Spec, cfg *drivers.TaskConfig) {
	if len(cfg.Mems) == 0 {
		return
	}
	if s.Linux == nil {
		s.Linux = &specs.Linux{}
	}
	if s.Linux.Resources == nil {
		s.Linux.Resources = &specs.LinuxResources{}
	}
	if s.Linux.Resources.CPU == nil {
		s.Linux.Resources.CPU = &specs.LinuxCPU{}
	}
	s.Linux.Resources.CPU.Mems = cgroup.FormatCPUList(cfg.Mems)
}

// hugePageLimits are the task's huge page limits for LimitHugePages.
func hugePageLimits(cfg *drivers.TaskConfig) cgroup.Limits {
	return cgroup.Limits{HugePages2Mi: cfg.Resources.HugePages2Mi, HugePages1Gi: cfg.Resources.HugePages1Gi}
}
