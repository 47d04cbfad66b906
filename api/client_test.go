package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The agent's watch learns that the server forgot its node, and so
// re-registers, instead of reading "no allocations".
func TestNodeAllocationsReportsUnknownNode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error": "node n1 is not registered", "code": "node-unknown"}`))
	}))
	defer srv.Close()
	_, _, err := NewClient(srv.URL).NodeAllocations(context.Background(), "n1", 0, 0)
	if !errors.Is(err, ErrNodeUnknown) {
		t.Fatalf("err = %v, want ErrNodeUnknown", err)
	}
}
