package microvm

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
)

// vmmFootprint splits qemu's resident memory: the guest's RAM mapping
// (the anonymous mapping of -m's size), the TCG translation cache (the
// largest other anonymous mapping, 1 GiB of address space under TCG), the
// file-backed part and the rest. VMM overhead is everything but the
// guest's RAM.
type vmmFootprint struct {
	TotalKiB, GuestRAMKiB, CodeCacheKiB int64
	// FileKiB is resident file-backed memory (qemu and its libraries):
	// page cache that every VM on the node shares.
	FileKiB int64
}

func (f vmmFootprint) OverheadKiB() int64 { return f.TotalKiB - f.GuestRAMKiB }

func readFootprint(pid int, guestMiB int64) (vmmFootprint, error) {
	file, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return vmmFootprint{}, err
	}
	defer file.Close()
	type mapping struct {
		sizeKiB, rssKiB int64
		anon            bool
	}
	var maps []mapping
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch {
		case strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			// A mapping line: "start-end perms offset dev inode [path]".
			maps = append(maps, mapping{anon: len(fields) == 5 || strings.HasPrefix(fields[5], "[")})
		case fields[0] == "Size:" && len(maps) > 0:
			maps[len(maps)-1].sizeKiB, _ = strconv.ParseInt(fields[1], 10, 64)
		case fields[0] == "Rss:" && len(maps) > 0:
			maps[len(maps)-1].rssKiB, _ = strconv.ParseInt(fields[1], 10, 64)
		}
	}
	var f vmmFootprint
	guestKiB := guestMiB << 10
	var others []mapping
	for _, m := range maps {
		f.TotalKiB += m.rssKiB
		// qemu rounds guest RAM up and adds a guard page or two.
		if m.anon && f.GuestRAMKiB == 0 && m.sizeKiB >= guestKiB && m.sizeKiB <= guestKiB+4096 {
			f.GuestRAMKiB = m.rssKiB
			continue
		}
		if m.anon {
			others = append(others, m)
		} else {
			f.FileKiB += m.rssKiB
		}
	}
	sort.Slice(others, func(i, j int) bool { return others[i].sizeKiB > others[j].sizeKiB })
	if len(others) > 0 && others[0].sizeKiB >= 256<<10 {
		f.CodeCacheKiB = others[0].rssKiB
	}
	return f, sc.Err()
}

// BenchmarkMicroVMBoot boots a busybox image guest per iteration and
// reports boot time to userspace (qemu start to the init's first line) and
// qemu's memory beyond the guest's RAM while the command runs:
//
//	go test -run '^$' -bench MicroVMBoot -benchtime 5x ./internal/agent/drivers/microvm/
func BenchmarkMicroVMBoot(b *testing.B) {
	d := newVMDriver(b)
	image := busyboxImage(b, d)
	const guestMiB = 128
	var boots []time.Duration
	var overheads, caches, files []int64
	for i := 0; i < b.N; i++ {
		cfg := vmTask(b, image, api.Resources{CPUMilli: 1000, MemoryBytes: guestMiB << 20}, "/bin/sh", "-c", "echo up; sleep 2")
		h, err := d.StartTask(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		pollLog(b, cfg.TaskDir, "up", time.Minute) // the footprint of a guest whose command runs
		fp, err := readFootprint(h.PID, guestMiB)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := d.WaitTask(ctx, h.ID)
		cancel()
		if err != nil || !res.Successful() {
			b.Fatalf("task: %+v %v", res, err)
		}
		var boot bootInfo
		if _, err := taskfile.ReadJSON(filepath.Join(cfg.TaskDir, bootFile), &boot); err != nil {
			b.Fatal(err)
		}
		d.DestroyTask(h.ID)
		boots = append(boots, boot.Boot)
		overheads = append(overheads, fp.OverheadKiB())
		caches = append(caches, fp.CodeCacheKiB)
		files = append(files, fp.FileKiB)
		b.Logf("boot %s, qemu RSS %d KiB: guest RAM %d KiB, overhead %d KiB (TCG code cache %d KiB, file-backed %d KiB)",
			boot.Boot.Round(time.Millisecond), fp.TotalKiB, fp.GuestRAMKiB, fp.OverheadKiB(), fp.CodeCacheKiB, fp.FileKiB)
	}
	sort.Slice(boots, func(i, j int) bool { return boots[i] < boots[j] })
	sort.Slice(overheads, func(i, j int) bool { return overheads[i] < overheads[j] })
	sort.Slice(caches, func(i, j int) bool { return caches[i] < caches[j] })
	sort.Slice(files, func(i, j int) bool { return files[i] < files[j] })
	b.ReportMetric(float64(boots[len(boots)/2].Milliseconds()), "boot-ms-p50")
	b.ReportMetric(float64(overheads[len(overheads)/2])/1024, "vmm-overhead-MiB-p50")
	b.ReportMetric(float64(caches[len(caches)/2])/1024, "tcg-cache-MiB-p50")
	b.ReportMetric(float64(files[len(files)/2])/1024, "file-backed-MiB-p50")
	b.Logf("accel %s (%s)", d.Host().Accel, d.Host().AccelReason)
}
