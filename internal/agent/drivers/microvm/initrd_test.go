package microvm

import (
	"bytes"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
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
			got, err := newGuestTask(tc.command, tc.workDir, tc.env, nil, tc.img, "", "")
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

func TestGuestArchiveCarriesSecrets(t *testing.T) {
	secrets := []*api.Secret{{Name: "token", Value: "s3cret"}, {Name: "db", Env: "DB_PASSWORD", Value: "pw"}}
	g, err := newGuestTask([]string{"/app"}, "", nil, secrets, ImageConfig{}, "h", "n")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(g.Env, "DB_PASSWORD=pw") || !slices.Contains(g.Env, "STRATA_SECRETS_DIR="+guestSecretsDir) {
		t.Errorf("env %v lacks the env secret or the secrets dir", g.Env)
	}
	var buf bytes.Buffer
	if err := writeGuestArchive(&buf, []byte("busybox"), g); err != nil {
		t.Fatal(err)
	}
	got := map[string]parsedEntry{}
	for _, e := range parseCPIO(t, buf.Bytes()) {
		got[e.Name] = e
	}
	if e := got[".strata/secrets/token"]; e.Data != "s3cret" || e.Mode != modeRegular|0o400 {
		t.Errorf("secret file %+v, want s3cret, mode 0400", e)
	}
	if _, ok := got[".strata/secrets/db"]; ok {
		t.Error("an env secret was also written as a file")
	}
	if e := got["dev/console"]; e.Mode != modeChar|0o600 || e.Major != 5 || e.Minor != 1 {
		t.Errorf("dev/console %+v, want char 5:1", e)
	}
	if e := got[".strata/init"]; e.Data != string(guestInit) || e.Mode&0o111 == 0 {
		t.Errorf("init %o, not the executable script", e.Mode)
	}
}
