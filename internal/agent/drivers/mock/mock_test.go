package mock

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/driverstest"
)

// TestCloseEndsEveryGoroutine: the goroutine of every fake task ends when
// the driver closes (issue 17: a driver's goroutines are tracked).
func TestCloseEndsEveryGoroutine(t *testing.T) {
	baseline := runtime.NumGoroutine()
	d := New()
	for _, id := range []string{"a/t", "b/t", "c/t"} {
		if _, err := d.StartTask(context.Background(), &drivers.TaskConfig{ID: id, Env: map[string]string{}}); err != nil {
			t.Fatal(err)
		}
	}
	if runtime.NumGoroutine() < baseline+3 {
		t.Fatalf("%d goroutines with 3 tasks, baseline %d", runtime.NumGoroutine(), baseline)
	}
	d.Close()
	driverstest.NoGoroutinesLeft(t, baseline, 5*time.Second)
	if _, err := d.WaitTask(context.Background(), "a/t"); err == nil {
		t.Error("a wait after Close returned a result")
	}
}
