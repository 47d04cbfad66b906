package microvm

import (
	_ "embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/strata-dev/strata/api"
)

// guestInit is PID 1 of every guest.
//
//go:embed guest/init.sh
var guestInit []byte

// Paths inside the guest. Everything the driver adds lives under /.strata
// so that it never collides with the image's own files.
const (
	guestDir      = ".strata"
	guestInitPath = "/.strata/init"
)

// basePath is the PATH a task gets when neither its image nor its
// environment sets one.
const basePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// guestTask is what the init runs: argv, environment and working directory,
// and the nonce that makes its console markers unmistakable.
type guestTask struct {
	Argv     []string
	Env      []string // NAME=value, sorted
	WorkDir  string
	Hostname string
	Nonce    string
	// Secrets are files in guestSecretsDir, readable by root only (the
	// command runs as root in its own VM).
	Secrets map[string]string
}

// guestSecretsDir holds a task's secret files in the guest; the command
// finds it in $STRATA_SECRETS_DIR, as under the exec driver.
const guestSecretsDir = "/.strata/secrets"

// Console markers. The nonce is random per start, so a task's own output
// cannot end it by accident.
func (g guestTask) bootedMarker() string { return "STRATA-BOOTED-" + g.Nonce }
func (g guestTask) exitMarker() string   { return "STRATA-EXIT-" + g.Nonce }
func (g guestTask) stopLine() string     { return "STRATA-STOP-" + g.Nonce }

// newGuestTask merges the task with its image's config the way container
// runtimes do: the task's command replaces Entrypoint+Cmd, its environment
// is laid over the image's, its working directory wins.
func newGuestTask(command []string, workDir string, env map[string]string, secrets []*api.Secret, img ImageConfig, hostname, nonce string) (guestTask, error) {
	argv := command
	if len(argv) == 0 {
		argv = append(append([]string(nil), img.Entrypoint...), img.Cmd...)
	}
	if len(argv) == 0 || argv[0] == "" {
		return guestTask{}, fmt.Errorf("command: the task sets none and its image has no Entrypoint or Cmd")
	}
	if strings.Contains(argv[0], "=") {
		return guestTask{}, fmt.Errorf("command: program %q must not contain '='", argv[0])
	}
	merged := map[string]string{"PATH": basePath, "HOME": "/root"}
	for _, kv := range img.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			merged[k] = v
		}
	}
	for k, v := range env {
		merged[k] = v
	}
	files := map[string]string{}
	for _, sec := range secrets {
		if sec.Env != "" {
			merged[sec.Env] = sec.Value
		} else {
			files[sec.Name] = sec.Value
		}
	}
	if len(files) > 0 {
		merged["STRATA_SECRETS_DIR"] = guestSecretsDir
	} else {
		files = nil
	}
	envList := make([]string, 0, len(merged))
	for k, v := range merged {
		envList = append(envList, k+"="+v)
	}
	sort.Strings(envList)
	dir := workDir
	if dir == "" {
		dir = img.WorkingDir
	}
	if dir == "" {
		dir = "/"
	}
	return guestTask{Argv: argv, Env: envList, WorkDir: dir, Hostname: hostname, Nonce: nonce, Secrets: files}, nil
}

// shellQuote quotes s for a POSIX shell: inside single quotes nothing is
// special but the quote itself.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// script is /.strata/task, sourced by the init.
func (g guestTask) script() []byte {
	var b strings.Builder
	for _, kv := range [][2]string{
		{"STRATA_WORKDIR", g.WorkDir},
		{"STRATA_HOSTNAME", g.Hostname},
		{"STRATA_BOOTED", g.bootedMarker()},
		{"STRATA_EXIT", g.exitMarker()},
		{"STRATA_STOP", g.stopLine()},
	} {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], shellQuote(kv[1]))
	}
	b.WriteString("set --")
	for _, s := range append(append([]string(nil), g.Env...), g.Argv...) {
		b.WriteString(" " + shellQuote(s))
	}
	b.WriteString("\n")
	return []byte(b.String())
}

// writeGuestArchive writes the driver's own cpio archive: busybox, the init,
// the task file and /dev/console (the kernel opens it for the init's stdio
// before any devtmpfs is mounted). It is appended after the image's
// archive, so its files win.
func writeGuestArchive(w io.Writer, busybox []byte, g guestTask) error {
	cw := newCPIOWriter(w)
	for _, e := range []cpioEntry{
		{Name: guestDir, Mode: fs.ModeDir | 0o755},
		{Name: "dev", Mode: fs.ModeDir | 0o755},
		{Name: "dev/console", Mode: fs.ModeDevice | fs.ModeCharDevice | 0o600, RdevMajor: 5, RdevMinor: 1},
	} {
		if err := cw.WriteHeader(&e); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		mode fs.FileMode
		data []byte
	}{
		{guestDir + "/busybox", 0o755, busybox},
		{guestDir + "/init", 0o755, guestInit},
		{guestDir + "/task", 0o644, g.script()},
	} {
		if err := cw.WriteFile(cpioEntry{Name: f.name, Mode: f.mode}, f.data); err != nil {
			return err
		}
	}
	if len(g.Secrets) > 0 {
		if err := cw.WriteHeader(&cpioEntry{Name: guestSecretsDir[1:], Mode: fs.ModeDir | 0o500}); err != nil {
			return err
		}
		names := make([]string, 0, len(g.Secrets))
		for n := range g.Secrets {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if err := cw.WriteFile(cpioEntry{Name: guestSecretsDir[1:] + "/" + n, Mode: 0o400}, []byte(g.Secrets[n])); err != nil {
				return err
			}
		}
	}
	return cw.Close()
}

// buildInitrd writes the task's initramfs to path: the image's flattened
// root file system, then the guest archive. The kernel unpacks
// concatenated archives in order. It returns the file's size.
func buildInitrd(path string, img *image, busybox []byte, g guestTask) (int64, error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int64, error) {
		f.Close()
		os.Remove(tmp)
		return 0, err
	}
	if err := writeRootfs(img, f); err != nil {
		return fail(fmt.Errorf("unpack image %s: %w", img.ref, err))
	}
	if err := writeGuestArchive(f, busybox, g); err != nil {
		return fail(fmt.Errorf("guest archive: %w", err))
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	return size, nil
}
