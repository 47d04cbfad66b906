package microvm

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

func TestConsoleCopierTakesOutMarkers(t *testing.T) {
	g := guestTask{Nonce: "n0nce"}
	for _, tc := range []struct {
		name     string
		console  string
		wantLog  string
		wantCode int
		exited   bool
		booted   bool
	}{
		{
			name:    "kernel CR LF becomes LF, markers vanish",
			console: "[    1.0] Run /init\r\nSTRATA-BOOTED-n0nce\r\nhello\nSTRATA-EXIT-n0nce 0\r\n[    1.2] reboot: Power down\r\n",
			wantLog: "[    1.0] Run /init\nhello\n[    1.2] reboot: Power down\n", exited: true, booted: true,
		},
		{
			name:    "unterminated last output is kept",
			console: "STRATA-BOOTED-n0nce\nno newline" + "STRATA-EXIT-n0nce 7\n",
			wantLog: "no newline", wantCode: 7, exited: true, booted: true,
		},
		{
			name:    "a marker with another nonce is the task's output",
			console: "STRATA-BOOTED-n0nce\nSTRATA-EXIT-other 3\n",
			wantLog: "STRATA-EXIT-other 3\n", booted: true,
		},
		{
			name:    "no exit marker: the guest died",
			console: "Kernel panic - not syncing\r\n",
			wantLog: "Kernel panic - not syncing\n",
		},
		{
			name:    "a lone CR is the task's",
			console: "50%\r100%\n",
			wantLog: "50%\r100%\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			booted := false
			c := newConsoleCopier(&out, g, func() { booted = true })
			// One byte at a time: markers must be found across reads.
			if err := c.Run(iotest.OneByteReader(strings.NewReader(tc.console))); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.wantLog {
				t.Errorf("log %q, want %q", out.String(), tc.wantLog)
			}
			code, exited := c.ExitCode()
			if exited != tc.exited || code != tc.wantCode {
				t.Errorf("exit (%d, %v), want (%d, %v)", code, exited, tc.wantCode, tc.exited)
			}
			if booted != tc.booted {
				t.Errorf("booted %v, want %v", booted, tc.booted)
			}
		})
	}
}

func TestConsoleCopierWritesLongLinesInPieces(t *testing.T) {
	var out bytes.Buffer
	long := strings.Repeat("x", 3*consoleMaxLine+10)
	c := newConsoleCopier(&out, guestTask{Nonce: "n"}, nil)
	if err := c.Run(strings.NewReader(long + "\nSTRATA-EXIT-n 1\n")); err != nil {
		t.Fatal(err)
	}
	if out.String() != long+"\n" {
		t.Errorf("log has %d bytes, want %d", out.Len(), len(long)+1)
	}
	if code, ok := c.ExitCode(); !ok || code != 1 {
		t.Errorf("exit (%d, %v), want (1, true)", code, ok)
	}
}
