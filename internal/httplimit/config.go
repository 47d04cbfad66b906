package httplimit

import (
	"net/http"
	"syscall"
	"time"
)

// Config sets a server's limits. A zero field takes its default; a
// negative one turns that limit off.
type Config struct {
	// ReadHeaderTimeout bounds reading a request's headers (slowloris).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds a response, from the end of the request headers.
	// Blocking queries extend it by their wait (Extend); streams refresh it
	// before each write (Stream), so it bounds a stalled reader, not a
	// stream's length.
	WriteTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request.
	IdleTimeout time.Duration
	// MaxConnsPerClient caps the open connections of one client address.
	MaxConnsPerClient int
	// MaxConns caps all open connections; by default three quarters of the
	// process's file descriptor limit, so that the server never runs out
	// of descriptors for its own files, raft and new clients.
	MaxConns int
	// MaxHeaderBytes bounds a request's header block.
	MaxHeaderBytes int
}

// Defaults, documented in docs/limits.md.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	// DefaultWriteTimeout is above the 30 s a raft proposal may take, so a
	// slow commit is still answered.
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 30 * time.Second
	DefaultMaxConnsPerClient = 256
	DefaultMaxHeaderBytes    = 64 << 10
	// minMaxConns is the total cap when the descriptor limit is tiny or
	// unknown.
	minMaxConns = 64
)

// WithDefaults returns c with every zero field set to its default and every
// negative one to 0 ("none", as net/http reads it). Caps of 0 mean no cap.
func (c Config) WithDefaults() Config {
	dur := func(v *time.Duration, def time.Duration) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = 0
		}
	}
	dur(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	dur(&c.ReadTimeout, DefaultReadTimeout)
	dur(&c.WriteTimeout, DefaultWriteTimeout)
	dur(&c.IdleTimeout, DefaultIdleTimeout)
	count := func(v *int, def int) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = 0
		}
	}
	count(&c.MaxConnsPerClient, DefaultMaxConnsPerClient)
	count(&c.MaxConns, DefaultMaxConns())
	count(&c.MaxHeaderBytes, DefaultMaxHeaderBytes)
	return c
}

// DefaultMaxConns is three quarters of the soft RLIMIT_NOFILE (which Go
// raises to the hard limit at start), at least 64.
func DefaultMaxConns() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur == 0 {
		return minMaxConns
	}
	if lim.Cur > 1<<30 { // RLIM_INFINITY and friends
		return 1 << 30
	}
	return max(minMaxConns, int(lim.Cur)*3/4)
}

// NewServer returns an http.Server for h with c's timeouts. Serve it on
// Listen(ln, c, logger) to enforce the caps too.
func NewServer(h http.Handler, c Config) *http.Server {
	c = c.WithDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.WriteTimeout,
		IdleTimeout:       c.IdleTimeout,
		MaxHeaderBytes:    c.MaxHeaderBytes,
	}
}
