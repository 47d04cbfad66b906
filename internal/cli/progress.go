package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress of long commands on stderr. On a terminal a bar is redrawn in
// place; anywhere else (a log, a pipe, CI) a plain line comes every few
// seconds, so that a script's output shows the command is alive and how
// far it is: `strata sim --policy all` used to run 15 minutes in silence.

// progressEvery is how often a plain progress line is written where stderr
// is not a terminal: $STRATA_PROGRESS_EVERY (a duration), else 5s.
func progressEvery() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("STRATA_PROGRESS_EVERY")); err == nil && d > 0 {
		return d
	}
	return 5 * time.Second
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// writesToTerminal reports whether w is a terminal.
func writesToTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// progressShow is how progress is shown on stderr.
type progressShow int

const (
	showNone  progressShow = iota
	showBar                // one redrawn line on a terminal
	showPlain              // a line every so often, for logs and pipes
)

// progressStyle reads --no-progress and --progress (auto, bar, plain,
// none): auto is a bar when w is a terminal and plain lines elsewhere.
func progressStyle(w io.Writer, noProgress bool, style string) (progressShow, error) {
	if noProgress {
		return showNone, nil
	}
	switch style {
	case "auto", "":
		if writesToTerminal(w) {
			return showBar, nil
		}
		return showPlain, nil
	case "bar":
		return showBar, nil
	case "plain":
		return showPlain, nil
	case "none":
		return showNone, nil
	}
	return showNone, failf("--progress: unknown %q (want auto, bar, plain or none)", style)
}

// progressBar shows a run's progress: a bar redrawn on one line, or plain
// lines at most once per interval (the first at once, and the last).
type progressBar struct {
	mu    sync.Mutex
	w     io.Writer
	show  progressShow
	every time.Duration
	drawn bool
	last  time.Time // of the latest plain line
}

func newProgressBar(w io.Writer, show progressShow) *progressBar {
	every := progressEvery()
	if show == showPlain && writesToTerminal(w) {
		every = time.Second // asked for plain lines on a terminal
	}
	return &progressBar{w: w, show: show, every: every}
}

// autoBar is a bar on a terminal and plain lines elsewhere when enabled,
// nothing otherwise.
func autoBar(w io.Writer, enabled bool) *progressBar {
	switch {
	case !enabled:
		return newProgressBar(w, showNone)
	case writesToTerminal(w):
		return newProgressBar(w, showBar)
	}
	return newProgressBar(w, showPlain)
}

// func_ returns the Progress callback of one run named label (nil when
// nothing is shown).
func (p *progressBar) func_(label, unit string) func(done, total int) {
	if p.show == showNone {
		return nil
	}
	return func(done, total int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if total <= 0 {
			return
		}
		if p.show == showPlain {
			if now := time.Now(); p.last.IsZero() || now.Sub(p.last) >= p.every || done == total {
				p.last = now
				fmt.Fprintf(p.w, "%s: %d/%d %s (%.1f%%)\n", label, done, total, unit, 100*float64(done)/float64(total))
			}
			return
		}
		const width = 30
		n := done * width / total
		fmt.Fprintf(p.w, "\r%-22s [%s%s] %3d%%", label, strings.Repeat("=", n), strings.Repeat(" ", width-n), done*100/total)
		p.drawn = true
	}
}

func (p *progressBar) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = time.Time{}
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// waitProgress keeps saying what a command waits for (a rollout, a drain,
// a migration) where stderr is not a terminal: a line every progressEvery()
// with the latest state and the time waited. On a terminal it says
// nothing; the command's own output shows each change as it comes.
type waitProgress struct {
	mu    sync.Mutex
	state string
	stop  chan struct{}
	done  chan struct{}
}

// startWaitProgress starts saying "what: state (waited 35s)" on g.stderr.
func startWaitProgress(g *globals, what string) *waitProgress {
	p := &waitProgress{stop: make(chan struct{}), done: make(chan struct{})}
	if writesToTerminal(g.stderr) {
		close(p.done)
		return p
	}
	start := time.Now()
	go func() {
		defer close(p.done)
		t := time.NewTicker(progressEvery())
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case now := <-t.C:
				p.mu.Lock()
				state := p.state
				p.mu.Unlock()
				if state == "" {
					state = "waiting"
				}
				fmt.Fprintf(g.stderr, "%s: %s (waited %s)\n", what, state, now.Sub(start).Round(time.Second))
			}
		}
	}()
	return p
}

// set is the state the next line reports.
func (p *waitProgress) set(state string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state = state
}

// end stops the lines; it waits until none is being written.
func (p *waitProgress) end() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}
