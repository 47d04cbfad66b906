package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asStrata makes the test binary run strata's own main: a test starts
// `os.Args[0] sim …` with it set and gets a real strata process, the same
// code as the built binary (main only dispatches to internal/cli).
const asStrata = "STRATA_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asStrata) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// writeGoogleTrace writes a cell of machines and a task_events part in the
// Google 2011 format (no header, normalized requests): tasks arriving
// every 0.1 s and finishing 10 minutes later.
func writeGoogleTrace(t *testing.T, dir string, machines, tasks int) (machinesCSV, taskEvents string) {
	t.Helper()
	machinesCSV, taskEvents = filepath.Join(dir, "machines.csv"), filepath.Join(dir, "task_events.csv")
	var b strings.Builder
	b.WriteString("machine_id,cpu,memory\n")
	for i := 0; i < machines; i++ {
		fmt.Fprintf(&b, "%d,0.5,0.4995\n", 1000+i)
	}
	if err := os.WriteFile(machinesCSV, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	for i := 0; i < tasks; i++ {
		us := int64(i) * 100_000
		job, task := 6000000+i/50, i%50
		cpu := 0.0125 * float64(1+i%4)
		fmt.Fprintf(&b, "%d,,%d,%d,,0,u,0,2,%g,0.01,0.0001,0\n", us, job, task, cpu)
		fmt.Fprintf(&b, "%d,,%d,%d,,4,u,0,2,%g,0.01,0.0001,0\n", us+600_000_000, job, task, cpu)
	}
	if err := os.WriteFile(taskEvents, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return machinesCSV, taskEvents
}

// TestSimStopsWithinASecondOfASignal sends SIGINT or SIGTERM to a running
// `strata sim` replay through the server's scheduler (scoring every
// feasible node, so the run lasts minutes) and requires it to exit within a
// second, saying it was interrupted, with the conventional status 128+signal.
func TestSimStopsWithinASecondOfASignal(t *testing.T) {
	machines, tasks := writeGoogleTrace(t, t.TempDir(), 12580, 5000)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "sim", "--format", "google", "--pods", tasks, "--machines-csv", machines,
				"--mode", "replay", "--policy", "strata-binpack", "--sample", "-1", "--progress", "plain")
			cmd.Env = append(os.Environ(), asStrata+"=1")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

			// Wait until the run reports progress: it is past loading,
			// inside the simulation.
			lines := make(chan string, 100)
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			var log []string
			started := time.After(2 * time.Minute)
			for running := false; !running; {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("strata sim ended before reporting progress:\n%s", strings.Join(log, "\n"))
					}
					log = append(log, l)
					running = strings.Contains(l, "events") && !strings.Contains(l, " 0/")
				case <-started:
					t.Fatalf("no progress within 2 minutes:\n%s", strings.Join(log, "\n"))
				}
			}

			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			exited := make(chan error, 1)
			go func() {
				for l := range lines {
					log = append(log, l)
				}
				exited <- cmd.Wait()
			}()
			var werr error
			select {
			case werr = <-exited:
			case <-time.After(30 * time.Second):
				t.Fatalf("strata sim still running 30 s after %v", sig)
			}
			took := time.Since(sent)
			t.Logf("stopped %v after %v", took.Round(time.Millisecond), sig)
			if took > time.Second {
				t.Errorf("strata sim took %v to stop after %v, want under a second", took.Round(time.Millisecond), sig)
			}
			var ee *exec.ExitError
			if !errors.As(werr, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("exit: %v, want status %d", werr, 128+int(sig))
			}
			if out := strings.Join(log, "\n"); !strings.Contains(out, "interrupted") {
				t.Errorf("stderr does not say the run was interrupted:\n%s", out)
			}
		})
	}
}
