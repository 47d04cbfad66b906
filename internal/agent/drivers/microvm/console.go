package microvm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
)

// consoleMaxLine is how much of a line without a newline is held before it
// is written out anyway; a marker is found only within one such piece.
const consoleMaxLine = 64 << 10

// consoleCopier copies the guest's serial console into the task's log and
// takes out the init's markers: the boot marker (userspace runs) and the
// exit marker with the command's exit code. Kernel lines end in CR LF; the
// CR is dropped so the log reads like an ordinary process's output.
type consoleCopier struct {
	out          io.Writer
	booted, exit []byte
	onBoot       func()

	exitCode int
	exited   bool
}

func newConsoleCopier(out io.Writer, g guestTask, onBoot func()) *consoleCopier {
	return &consoleCopier{out: out, booted: []byte(g.bootedMarker()), exit: []byte(g.exitMarker()), onBoot: onBoot}
}

// ExitCode returns the exit code the guest reported, if it did.
func (c *consoleCopier) ExitCode() (int, bool) { return c.exitCode, c.exited }

// Run copies r until EOF.
func (c *consoleCopier) Run(r io.Reader) error {
	br := bufio.NewReaderSize(r, consoleMaxLine)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if werr := c.line(line); werr != nil {
				return werr
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			return nil
		default:
			return err
		}
	}
}

// line handles one line (or a piece of a long one). Text before a marker on
// the same line is the command's unterminated last output and is kept.
func (c *consoleCopier) line(line []byte) error {
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line = append(line[:n-2], '\n')
	}
	for _, m := range [][]byte{c.booted, c.exit} {
		i := bytes.Index(line, m)
		if i < 0 {
			continue
		}
		if i > 0 {
			if _, err := c.out.Write(line[:i]); err != nil {
				return err
			}
		}
		rest := bytes.TrimSpace(line[i+len(m):])
		if bytes.Equal(m, c.exit) {
			if code, err := strconv.Atoi(string(rest)); err == nil {
				c.exitCode, c.exited = code, true
			}
		} else if c.onBoot != nil {
			c.onBoot()
		}
		return nil
	}
	_, err := c.out.Write(line)
	return err
}
