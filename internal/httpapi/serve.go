package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/strata-dev/strata/internal/httpapi/route"
)

// The one wrapper every route goes through, outermost first:
//
//	replica.Gate      readiness; the leader serves it, or it is forwarded
//	                  there, or served here with ?stale (route.Local: here,
//	                  at once)
//	instrument        strata_http_request_seconds{route, code}
//	caller            who calls, in the request's context
//	audited           the audit log's entry of a write (route.Audit)
//	authorize         the route's rule: ACLs, or the node's credentials
//	handler           returns its error; Fail answers it
//
// Requests the mux answers itself (no route: 404, a method the path does
// not take: 405) go through it too, as an open route.

// mount builds the table into one handler; a pattern twice or a route
// without a rule is refused.
func (s *API) mount(table route.Group) (http.Handler, error) {
	mux := http.NewServeMux()
	seen := map[string]bool{}
	var errs []error
	for _, rt := range table {
		switch {
		case seen[rt.Pattern]:
			errs = append(errs, fmt.Errorf("route %q twice", rt.Pattern))
			continue
		case !rt.Rule.Given():
			errs = append(errs, fmt.Errorf("route %q has no rule: give it one (route.Open for none)", rt.Pattern))
			continue
		case rt.Handle == nil:
			errs = append(errs, fmt.Errorf("route %q has no handler", rt.Pattern))
			continue
		}
		seen[rt.Pattern] = true
		mux.Handle(rt.Pattern, s.wrap(rt))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("httpapi: the route table: %w", err)
	}
	unmatched := s.wrap(route.Route{Rule: route.Open, Handle: func(w http.ResponseWriter, r *http.Request) error {
		mux.ServeHTTP(w, r) // the mux's own 404 or 405
		return nil
	}})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern == "" {
			unmatched.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	}), nil
}

// wrap is the wrapper (see the top of this file) around rt's handler.
func (s *API) wrap(rt route.Route) http.Handler {
	serve := func(w http.ResponseWriter, r *http.Request) {
		if err := s.authorize(r, rt); err != nil {
			route.Fail(w, err, s.logger)
			return
		}
		if err := rt.Handle(w, r); err != nil {
			route.Fail(w, err, s.logger)
		}
	}
	withCaller := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, &caller{}))
		s.audited(w, r, rt, serve)
	})
	return s.replica.Gate(rt, s.instrument(rt.Pattern, withCaller))
}

// metrics are the API's (docs/metrics.md), and the handler that serves
// every metric of the server.
type metrics struct {
	requests *prometheus.HistogramVec
	serve    http.Handler
}

// latencyBuckets run from 0.5 ms to about 33 s.
var latencyBuckets = prometheus.ExponentialBuckets(0.0005, 2, 17)

func newMetrics(reg prometheus.Registerer, all prometheus.Gatherer) *metrics {
	m := &metrics{requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "strata_http_request_seconds",
		Help: "HTTP API requests by route pattern (method and path template) and status code.", Buckets: latencyBuckets},
		[]string{"route", "code"}), serve: promhttp.HandlerFor(all, promhttp.HandlerOpts{})}
	reg.MustRegister(m.requests)
	return m
}

// instrument times every request by its route's pattern (never the raw
// path, whose ids would make a series per object).
func (s *API) instrument(pattern string, next http.Handler) http.Handler {
	label := pattern
	if label == "" || label == "/" {
		label = "unmatched"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &route.Recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		s.metrics.requests.WithLabelValues(label, statusClass(rec.Answered())).Observe(time.Since(start).Seconds())
	})
}

// statusClass keeps the code label to a handful of values per route.
func statusClass(code int) string {
	switch {
	case code < 300:
		return "2xx"
	case code < 400:
		return "3xx"
	case code < 500:
		return "4xx"
	}
	return "5xx"
}

// handleMetrics serves every metric of the server (docs/metrics.md).
func (s *API) handleMetrics(w http.ResponseWriter, r *http.Request) error {
	s.metrics.serve.ServeHTTP(w, r)
	return nil
}

// handleNoRoute answers a path no route has.
func handleNoRoute(_ http.ResponseWriter, r *http.Request) error {
	return route.NotFound("no such endpoint: %s %s", r.Method, r.URL.Path)
}
