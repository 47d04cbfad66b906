package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/test/faultnet"
)

// strataBin is the strata binary the scenarios run, built once per test
// process (only where faultnet can run: the tests skip elsewhere).
var strataBin string

func TestMain(m *testing.M) {
	if faultnet.Available() != nil {
		os.Exit(m.Run()) // every scenario skips, saying why
	}
	dir, err := os.MkdirTemp("", "strata-faults-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	strataBin = filepath.Join(dir, "strata")
	build := exec.Command("go", "build", "-o", strataBin, "github.com/strata-dev/strata/cmd/strata")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "faults: building strata:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
