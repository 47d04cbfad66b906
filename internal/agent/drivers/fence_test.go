package drivers

import (
	"errors"
	"testing"
	"time"
)

// TestFenceWatch is the decision every fence watcher (exec's shim,
// containerd's log process) takes on each look at the lease file, as a
// story of looks.
func TestFenceWatch(t *testing.T) {
	f := func(stop, kill time.Duration) LeaseFence { return LeaseFence{StopAt: stop, KillAt: kill, Why: "lease"} }
	type look struct {
		fence   LeaseFence
		ok      bool
		err     error
		now     time.Duration
		started bool
		want    FenceStep
		why     string
	}
	unreadable := errors.New("EIO")
	for _, tc := range []struct {
		name  string
		looks []look
	}{
		{"a renewed fence never fires", []look{
			{fence: f(10, 20), ok: true, now: 5, started: true, want: FenceWait},
			{fence: f(30, 40), ok: true, now: 15, started: true, want: FenceWait},
			{fence: f(50, 60), ok: true, now: 35, started: true, want: FenceWait},
		}},
		{"SIGTERM at the stop time, once, then SIGKILL", []look{
			{fence: f(10, 20), ok: true, now: 10, started: true, want: FenceTerm, why: "lease"},
			{fence: f(10, 20), ok: true, now: 15, started: true, want: FenceWait},
			{fence: f(10, 20), ok: true, now: 20, started: true, want: FenceKill, why: "lease"},
		}},
		{"SIGTERM waits for the command, SIGKILL does not", []look{
			{fence: f(10, 20), ok: true, now: 12, started: false, want: FenceWait},
			{fence: f(10, 20), ok: true, now: 13, started: true, want: FenceTerm, why: "lease"},
			{fence: f(10, 20), ok: true, now: 21, started: false, want: FenceKill, why: "lease"},
		}},
		{"an unreadable file keeps the last fence", []look{
			{fence: f(10, 20), ok: true, now: 5, started: true, want: FenceWait},
			{err: unreadable, now: 10, started: true, want: FenceTerm, why: "lease"},
		}},
		{"a missing file is the fence reached now, with the last grace", []look{
			{fence: f(100, 105), ok: true, now: 5, started: true, want: FenceWait},
			{ok: false, now: 6, started: true, want: FenceTerm, why: FenceGoneWhy},
			{ok: false, now: 10, started: true, want: FenceWait},
			{ok: false, now: 11, started: true, want: FenceKill, why: FenceGoneWhy},
		}},
		{"a file that comes back does not lift the stop", []look{
			{fence: f(100, 200), ok: true, now: 5, started: true, want: FenceWait},
			{ok: false, now: 6, started: true, want: FenceTerm, why: FenceGoneWhy},
			{fence: f(300, 400), ok: true, now: 7, started: true, want: FenceWait},
			{fence: f(300, 400), ok: true, now: 106, started: true, want: FenceKill, why: FenceGoneWhy},
		}},
		{"missing from the first look: the default grace", []look{
			{ok: false, now: 50, started: false, want: FenceWait},
			{ok: false, now: 51, started: true, want: FenceTerm, why: FenceGoneWhy},
			{ok: false, now: 50 + DefaultFenceGrace, started: true, want: FenceKill, why: FenceGoneWhy},
		}},
		{"a missing file after a fence already reached keeps the earlier times", []look{
			{fence: f(10, 20), ok: true, now: 12, started: true, want: FenceTerm, why: "lease"},
			{ok: false, now: 15, started: true, want: FenceWait},
			{ok: false, now: 20, started: true, want: FenceKill, why: "lease"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w FenceWatch
			for i, l := range tc.looks {
				step, why := w.Observe(l.fence, l.ok, l.err, l.now, l.started)
				if step != l.want || (l.why != "" && why != l.why) {
					t.Fatalf("look %d at %d: %v %q, want %v %q", i, l.now, step, why, l.want, l.why)
				}
			}
		})
	}
}
