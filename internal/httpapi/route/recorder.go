package route

import "net/http"

// Recorder remembers the status a handler answered with (200 when it
// wrote without one). Unwrap keeps http.ResponseController (flushes,
// deadlines) working through it, and Flush lets handlers that assert
// http.Flusher stream too.
type Recorder struct {
	http.ResponseWriter
	Status int // 0 until the handler answers
}

func (r *Recorder) WriteHeader(code int) {
	if r.Status == 0 {
		r.Status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *Recorder) Write(b []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *Recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Answered is the status the handler answered with, 200 if it wrote
// nothing at all.
func (r *Recorder) Answered() int {
	if r.Status == 0 {
		return http.StatusOK
	}
	return r.Status
}
