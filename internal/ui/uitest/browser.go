package uitest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is one headless Chromium with one tab.
type Browser struct {
	t      testing.TB
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	problems []string // uncaught exceptions and console errors of the page
}

// chromium returns the browser to run, or why there is none.
func chromium() (string, error) {
	if p := os.Getenv("STRATA_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium on PATH (apt-get install chromium, or set STRATA_CHROMIUM)")
}

// New starts a browser for the test, stopped when it ends. The window is
// width by height CSS pixels; flags are more Chromium switches, without
// their dashes ("ignore-certificate-errors").
func New(t testing.TB, width, height int, flags ...string) *Browser {
	t.Helper()
	path, err := chromium()
	if err != nil {
		if os.Getenv("STRATA_REQUIRE_BROWSER") == "1" {
			t.Fatalf("uitest: %v", err)
		}
		t.Skipf("uitest: %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.WindowSize(width, height),
	}
	for _, f := range flags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	b := &Browser{t: t, ctx: ctx, cancel: func() { cancelTab(); cancelAlloc() }}
	// Listen starts the browser; its func must only record (it runs on the
	// loop that reads the browser's events).
	err = chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			b.problem(fmt.Sprintf("uncaught: %s (%s:%d)", msg, d.URL, d.LineNumber+1))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, strings.Trim(string(a.Value), `"`)+a.Description)
				}
				b.problem("console.error: " + strings.Join(parts, " "))
			}
		}
	})
	if err == nil {
		err = chromedp.Do(ctx, chromedp.Navigate("about:blank"))
	}
	if err != nil {
		b.cancel()
		t.Fatalf("uitest: start %s: %v", path, err)
	}
	t.Cleanup(func() {
		b.cancel()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, p := range b.problems {
			t.Errorf("the page reported: %s", p)
		}
	})
	return b
}

func (b *Browser) problem(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, s)
}

// Context is the tab's context, for chromedp actions of a test's own.
func (b *Browser) Context() context.Context { return b.ctx }

// Run runs actions in the tab within timeout, failing the test on error.
func (b *Browser) Run(timeout time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// Open navigates to url and waits for the page's shell.
func (b *Browser) Open(url string) {
	b.t.Helper()
	b.Run(30*time.Second, "open "+url, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#view")))
}

// Go shows the view of a hash route (#/nodes/...) in the open page.
func (b *Browser) Go(route string) {
	b.t.Helper()
	b.Eval(fmt.Sprintf("location.hash = %q", route), nil)
}

// Click clicks the first element matching the CSS selector, once visible.
func (b *Browser) Click(sel string) {
	b.t.Helper()
	b.Run(30*time.Second, "click "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
}

// SetValue sets an input's or textarea's value and tells the page, as
// typing would.
func (b *Browser) SetValue(sel, value string) {
	b.t.Helper()
	b.Run(30*time.Second, "set "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
	v, _ := json.Marshal(value)
	b.Eval(fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.value = %s; el.dispatchEvent(new Event('input', {bubbles: true})); })()`, sel, v), nil)
}

// Eval evaluates a JavaScript expression in the page; a promise is
// awaited. out, when set, receives the result (decoded from JSON).
func (b *Browser) Eval(expr string, out any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[any](expr, chromedp.EvalAwaitPromise))
	if err != nil && !errors.Is(err, chromedp.ErrJSUndefined) && !errors.Is(err, chromedp.ErrJSNull) {
		b.t.Fatalf("eval %s: %v", firstLine(expr), err)
	}
	if out != nil && err == nil {
		raw, _ := json.Marshal(v)
		if err := json.Unmarshal(raw, out); err != nil {
			b.t.Fatalf("eval %s: decode %s: %v", firstLine(expr), raw, err)
		}
	}
}

// Text is the text content of the first element matching sel, "" when
// none does.
func (b *Browser) Text(sel string) string {
	b.t.Helper()
	var s string
	b.Eval(fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ''`, sel), &s)
	return s
}

// WaitText waits until the element matching sel contains want, failing the
// test with what it last showed after timeout.
func (b *Browser) WaitText(sel, want string, timeout time.Duration) {
	b.t.Helper()
	b.WaitFor(timeout, fmt.Sprintf("%s to show %q", sel, want), func() (bool, string) {
		got := b.Text(sel)
		return strings.Contains(got, want), got
	})
}

// WaitFor polls cond every 100 ms until it holds, failing after timeout
// with what cond last said.
func (b *Browser) WaitFor(timeout time.Duration, what string, cond func() (bool, string)) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if len(last) > 600 {
				last = last[:600] + "…"
			}
			b.t.Fatalf("waited %s for %s; last: %q", timeout, what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Screenshot writes a PNG of the whole page to path.
func (b *Browser) Screenshot(path string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatalf("write screenshot: %v", err)
	}
}

// Shot saves a screenshot of the page as name.png in the directory
// STRATA_UI_SCREENSHOTS names (docs/ui.md's pictures come from there), and
// does nothing without it.
func (b *Browser) Shot(name string) {
	b.t.Helper()
	if dir := os.Getenv("STRATA_UI_SCREENSHOTS"); dir != "" {
		b.Screenshot(filepath.Join(dir, name+".png"))
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
