package drivers

import "testing"

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		res  ExitResult
		want string
		ok   bool
	}{
		{ExitResult{}, "exit code 0", true},
		{ExitResult{ExitCode: 1}, "exit code 1", false},
		{ExitResult{ExitCode: 137, Signal: 9}, "killed by signal 9", false},
		{ExitResult{ExitCode: 137, Signal: 9, OOMKilled: true, MemoryMax: 64 << 20}, "OOM killed (memory limit 64MiB)", false},
		{ExitResult{ExitCode: 1, OOMKilled: true}, "OOM killed", false},
		{ExitResult{ExitCode: -1, Err: "task shim exited without a result"}, "task shim exited without a result", false},
	} {
		if got := tc.res.Describe(); got != tc.want {
			t.Errorf("Describe(%+v) = %q, want %q", tc.res, got, tc.want)
		}
		if got := tc.res.Successful(); got != tc.ok {
			t.Errorf("Successful(%+v) = %v, want %v", tc.res, got, tc.ok)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{100: "100B", 1536 << 10: "1536KiB", 32 << 20: "32MiB", 2 << 30: "2GiB", 1<<20 + 1: "1048577B"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestUndoRunsOnce(t *testing.T) {
	var u Undo
	if err := u.Run(); err != nil {
		t.Fatalf("Run with nothing set = %v", err)
	}
	n := 0
	u.Set(func() error { n++; return nil })
	u.Run()
	u.Run()
	if n != 1 {
		t.Fatalf("undone %d times, want once", n)
	}
}
