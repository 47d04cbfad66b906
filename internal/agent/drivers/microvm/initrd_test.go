package microvm

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestNewGuestTaskMergesImageConfig(t *testing.T) {
	img := ImageConfig{Entrypoint: []string{"/bin/app"}, Cmd: []string{"--serve"}, Env: []string{"PATH=/app/bin", "MODE=image", "EMPTY="}, WorkingDir: "/srv"}
	for _, tc := range []struct {
		name    string
		command []string
		workDir string
		env     map[string]string
		img     ImageConfig
		want    guestTask
		err     string
	}{
		{
			name: "image defaults", img: img,
			want: guestTask{Argv: []string{"/bin/app", "--serve"}, Env: []string{"EMPTY=", "HOME=/root", "MODE=image", "PATH=/app/bin"}, WorkDir: "/srv"},
		},
		{
			name: "task overrides", img: img, command: []string{"/bin/sh", "-c", "x"}, workDir: "/tmp", env: map[string]string{"MODE": "task"},
			want: guestTask{Argv: []string{"/bin/sh", "-c", "x"}, Env: []string{"EMPTY=", "HOME=/root", "MODE=task", "PATH=/app/bin"}, WorkDir: "/tmp"},
		},
		{
			name: "bare image", command: []string{"/x"},
			want: guestTask{Argv: []string{"/x"}, Env: []string{"HOME=/root", "PATH=" + basePath}, WorkDir: "/"},
		},
		{name: "nothing to run", err: "command: the task sets none"},
		{name: "program that env would take for a variable", command: []string{"A=b"}, err: "must not contain '='"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := newGuestTask(tc.command, tc.workDir, tc.env, tc.img, "", "")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
}

// Any argument survives the task file's quoting: the guest's shell sees
// exactly the strings the task gave.
func TestShellQuoteRoundTrips(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	rapid.Check(t, func(rt *rapid.T) {
		s := rapid.StringMatching(`[^\x00]{0,40}`).Draw(rt, "s")
		out, err := exec.Command(sh, "-c", "printf %s "+shellQuote(s)).Output()
		if err != nil {
			rt.Fatal(err)
		}
		if string(out) != s {
			rt.Fatalf("%q came back as %q", s, out)
		}
	})
}
