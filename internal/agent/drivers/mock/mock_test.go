package mock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

func cfg(id string, env map[string]string) *drivers.TaskConfig {
	return &drivers.TaskConfig{ID: id, Task: &api.Task{Name: id}, Env: env}
}

func TestMockExitsStopsAndRecovers(t *testing.T) {
	d := New()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h, err := d.StartTask(ctx, cfg("a", map[string]string{"MOCK_RUN_FOR": "10ms", "MOCK_EXIT_CODE": "4"}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.WaitTask(ctx, h.ID)
	if err != nil || res.ExitCode != 4 {
		t.Fatalf("WaitTask = %+v, %v; want exit 4", res, err)
	}
	if _, err := d.StartTask(ctx, cfg("b", map[string]string{"MOCK_START_ERROR": "no image"})); err == nil {
		t.Fatal("start error not reported")
	}
	hb, _ := d.StartTask(ctx, cfg("c", map[string]string{"MOCK_OOM": "true", "MOCK_RUN_FOR": "1ms"}))
	if res, _ := d.WaitTask(ctx, hb.ID); !res.OOMKilled || res.Signal != 9 {
		t.Errorf("OOM result %+v", res)
	}
	hc, _ := d.StartTask(ctx, cfg("d", nil)) // runs until stopped
	if err := d.RecoverTask(hc); err != nil {
		t.Errorf("RecoverTask of a live task: %v", err)
	}
	if err := d.StopTask(hc.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	if res, _ := d.WaitTask(ctx, hc.ID); res.Signal != 15 {
		t.Errorf("stopped result %+v", res)
	}
	d.DestroyTask(hc.ID)
	if err := New().RecoverTask(hc); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Errorf("RecoverTask on another driver = %v, want ErrTaskNotFound", err)
	}
}
