// Command healthserver is a task for the end-to-end health tests: it
// serves HTTP on the port the scheduler gave it ($STRATA_PORT_HTTP) and
// answers GET /ready with 200 until a file named "unready" appears in its
// task directory ($STRATA_TASK_DIR), then with 503.
//
// Arguments, both optional: a version, which GET / answers with (the
// rolling-update tests tell the old version from the new by it), and
// "never-ready", which makes /ready answer 503 from the start (a broken
// update).
package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
)

func main() {
	port := os.Getenv("STRATA_PORT_HTTP")
	if port == "" {
		fmt.Fprintln(os.Stderr, "STRATA_PORT_HTTP is not set")
		os.Exit(2)
	}
	version, neverReady := "v0", false
	for _, arg := range os.Args[1:] {
		if arg == "never-ready" {
			neverReady = true
		} else {
			version = arg
		}
	}
	marker := filepath.Join(os.Getenv("STRATA_TASK_DIR"), "unready")
	http.HandleFunc("/ready", func(w http.ResponseWriter, r *http.Request) {
		if _, err := os.Stat(marker); err == nil || neverReady {
			http.Error(w, "unready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, version)
	})
	fmt.Println("listening on port", port, "version", version)
	if err := http.ListenAndServe("127.0.0.1:"+port, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
