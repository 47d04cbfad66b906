package httplimit

import (
	"errors"
	"net/http"
	"time"
)

// Extend gives the request being served d more time from now, for reading
// (a blocking query's context would otherwise be cancelled when the read
// deadline passes) and for writing. A handler that waits up to wait calls
// Extend(w, wait+writeTimeout) before it waits.
func Extend(w http.ResponseWriter, d time.Duration) {
	rc := http.NewResponseController(w)
	at := time.Now().Add(d)
	rc.SetReadDeadline(at)  // an error means the writer cannot: nothing to extend
	rc.SetWriteDeadline(at) // likewise
}

// ExtendBy gives a request that may wait up to wait (a blocking query)
// that long plus c's write timeout (or its default, when write timeouts are
// off) to be answered.
func (c Config) ExtendBy(w http.ResponseWriter, wait time.Duration) {
	slack := c.WithDefaults().WriteTimeout
	if slack == 0 {
		slack = DefaultWriteTimeout
	}
	Extend(w, wait+slack)
}

// Stream returns a writer for a response of unbounded length (a followed
// log): the read deadline is lifted, and before each write the write
// deadline is set to perWrite from now. A client that keeps reading keeps
// the stream; one that stops reading for perWrite is dropped. Writes are
// flushed at once. The writer is w's ResponseWriter too (a reverse proxy
// relays a stream through it), and unwraps to w.
func Stream(w http.ResponseWriter, perWrite time.Duration) http.ResponseWriter {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	return &streamWriter{ResponseWriter: w, rc: rc, perWrite: perWrite}
}

type streamWriter struct {
	http.ResponseWriter
	rc       *http.ResponseController
	perWrite time.Duration
}

// Unwrap lets http.ResponseController reach the connection.
func (s *streamWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *streamWriter) Write(p []byte) (int, error) {
	if s.perWrite > 0 {
		s.rc.SetWriteDeadline(time.Now().Add(s.perWrite))
	} else {
		s.rc.SetWriteDeadline(time.Time{})
	}
	n, err := s.ResponseWriter.Write(p)
	if err != nil {
		return n, err
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return n, err
	}
	return n, nil
}
