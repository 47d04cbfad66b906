package faultnet

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// DialContext opens a connection from inside h, as a program running on h
// would: the socket is made in h's network namespace, so h's links, cuts
// and addresses apply to it. It suits http.Transport.DialContext.
func (h *Host) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	target, err := os.Open("/run/netns/" + h.ns)
	if err != nil {
		return nil, fmt.Errorf("faultnet: open namespace of %s: %w", h.name, err)
	}
	defer target.Close()
	// A socket belongs to the namespace of the thread that made it, for
	// good; so make it on a locked thread switched into h, then switch
	// back. A thread that cannot switch back stays locked and dies with
	// this goroutine rather than serve others from the wrong namespace.
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("faultnet: open own namespace: %w", err)
	}
	defer orig.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("faultnet: enter namespace of %s: %w", h.name, err)
	}
	// The timeout bounds a dial the HTTP transport keeps going after its
	// request gave up, which would otherwise hold a thread in h until the
	// kernel's SYN retries end.
	d := net.Dialer{Timeout: dialTimeout}
	conn, dialErr := d.DialContext(ctx, network, addr)
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		if conn != nil {
			conn.Close()
		}
		return nil, fmt.Errorf("faultnet: leave namespace of %s: %w", h.name, err)
	}
	runtime.UnlockOSThread()
	return conn, dialErr
}

// dialTimeout bounds every connection attempt from a host.
const dialTimeout = 3 * time.Second

// HTTPClient returns a client whose connections start on h, each request
// bounded by timeout (0: none), trusting the cell's servers over TLS with
// a CLI certificate (Net.ClientTLS). Connections are not reused across
// requests, so a cut applies to the next request at once instead of
// waiting for a pooled connection to time out.
func (h *Host) HTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext:       h.DialContext,
		DisableKeepAlives: true,
		TLSClientConfig:   h.net.ClientTLS(),
	}}
}
