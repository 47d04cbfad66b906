package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/resources"
)

// FuzzParse checks what the server relies on when it stores a workload:
// Parse never panics; it returns either a workload or a non-empty *Errors;
// an accepted workload keeps every documented bound (quantities, group
// totals, durations, names, no NUL) and survives a JSON round trip, and
// parsing is deterministic; a refusal lists problems in document order,
// each with a message and a printable path. Seeds: the examples and
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(oneTask(cmd + "          resources: {cpu: 1.5, gpu: 0.5, gpuModels: [A]}\n")))
	f.Add([]byte(doc("  containers: [{name: c, image: i}]\n  placementConstraints: {rack: avoid-x-peak-hours, minBandwidthGbps: 1.5}\n")))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse(data)
		if err != nil {
			if w != nil {
				t.Fatal("Parse returned a workload and an error")
			}
			checkRefusal(t, err)
			return
		}
		if w == nil {
			t.Fatal("Parse returned neither a workload nor an error")
		}
		checkWorkloadBounds(t, w)
		again, err := Parse(data)
		if err != nil || !reflect.DeepEqual(again, w) {
			t.Fatalf("Parse is not deterministic: %v", err)
		}
		first, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		var back api.Workload
		if err := json.Unmarshal(first, &back); err != nil {
			t.Fatalf("the stored form does not decode: %v", err)
		}
		if second, _ := json.Marshal(&back); !bytes.Equal(first, second) {
			t.Fatalf("JSON round trip changed the workload:\n%s\n%s", first, second)
		}
	})
}

// FuzzParseCellConfig: a cell configuration is accepted whole, written
// back as a document and accepted again as the same configuration, or
// refused with its problems listed.
func FuzzParseCellConfig(f *testing.F) {
	f.Add([]byte("apiVersion: strata.dev/v1\nkind: CellConfig\nschedulingPolicy: spread\ntimeWindows:\n" +
		"  - {name: peak-hours, days: [mon, fri], start: \"09:00\", end: \"18:00\", timeZone: Europe/Berlin}\n"))
	f.Add([]byte(`{"apiVersion": "strata.dev/v1", "kind": "CellConfig", "timeWindows": [{"name": "night", "start": "22:00", "end": "06:00"}]}`))
	f.Add([]byte("apiVersion: strata.dev/v1\nkind: CellConfig\nschedulingPolicy: \"spread\\0\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCellConfig(data)
		if err != nil {
			if c != nil {
				t.Fatal("ParseCellConfig returned a config and an error")
			}
			checkRefusal(t, err)
			return
		}
		fields := map[string]any{"apiVersion": APIVersion, "kind": CellConfigKind}
		if c.SchedulingPolicy != "" {
			fields["schedulingPolicy"] = c.SchedulingPolicy
		}
		if c.TimeWindows != nil {
			fields["timeWindows"] = c.TimeWindows
		}
		doc, _ := json.Marshal(fields)
		again, err := ParseCellConfig(doc)
		if err != nil {
			t.Fatalf("the accepted configuration, written back, is refused: %v\n%s", err, doc)
		}
		if !reflect.DeepEqual(normalized(again), normalized(c)) {
			t.Fatalf("round trip changed the configuration:\n%+v\n%+v", c, again)
		}
	})
}

// normalized treats a nil and an empty list alike.
func normalized(c *api.CellConfig) string {
	b, _ := json.Marshal(c)
	return strings.ReplaceAll(string(b), `"days":[],`, "")
}

func checkRefusal(t *testing.T, err error) {
	t.Helper()
	var errs *Errors
	if !errors.As(err, &errs) || len(errs.List) == 0 {
		t.Fatalf("error %T %v is not a non-empty *Errors", err, err)
	}
	for i, fe := range errs.List {
		if fe.Message == "" {
			t.Fatalf("problem %d at %q has no message", i, fe.Path)
		}
		if !printable(fe.Path) {
			t.Fatalf("problem %d names an unprintable path %q", i, fe.Path)
		}
		if i > 0 && fe.Line < errs.List[i-1].Line {
			t.Fatalf("problems out of document order: line %d after %d", fe.Line, errs.List[i-1].Line)
		}
	}
}

func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// checkWorkloadBounds asserts the documented bounds on an accepted
// workload, independently of how the parser enforces them.
func checkWorkloadBounds(t *testing.T, w *api.Workload) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("accepted workload breaks a bound: "+format, args...)
	}
	noNUL := func(what, s string) {
		if strings.IndexByte(s, 0) >= 0 {
			fail("%s %q holds a NUL", what, s)
		}
	}
	if checkName(w.Name) != "" {
		fail("name %q", w.Name)
	}
	for k, v := range w.Labels {
		noNUL("label", k+v)
	}
	if lo, hi, ok := PriorityRange(w.PriorityClass); !ok || w.Priority < lo || w.Priority > hi {
		fail("priority %d of class %q", w.Priority, w.PriorityClass)
	}
	replicas := 0
	for _, g := range w.Groups {
		replicas += g.Replicas
		if checkName(g.Name) != "" || g.Replicas < 0 || g.Replicas > MaxReplicas || len(g.Tasks) == 0 {
			fail("group %q with %d replicas and %d tasks", g.Name, g.Replicas, len(g.Tasks))
		}
		if v := resources.OutOfRange(g.Resources()); v != nil {
			fail("group %q totals %+v: %s", g.Name, g.Resources(), v[0].Problem)
		}
		rp := g.RestartPolicy
		if rp.Delay < 0 || rp.Delay > MaxDuration || rp.MaxDelay < rp.Delay || rp.MaxDelay > MaxDuration {
			fail("group %q restart delays %v, %v", g.Name, rp.Delay, rp.MaxDelay)
		}
		if gg := g.Gang; gg != nil && (gg.MinMember < 1 && g.Replicas > 0 || gg.MinMember > g.Replicas || gg.Timeout < 0 || gg.Timeout > MaxDuration) {
			fail("group %q gang %+v", g.Name, *gg)
		}
		for _, task := range g.Tasks {
			r := task.Resources
			if v := resources.OutOfRange(r); v != nil || r.CPUMilli <= 0 || r.MemoryBytes <= 0 {
				fail("task %q resources %+v", task.Name, r)
			}
			if task.KillTimeout < 0 || task.KillTimeout > MaxKillTimeout || task.PidsLimit < 1 || task.PidsLimit > MaxPidsLimit {
				fail("task %q killTimeout %v pidsLimit %d", task.Name, task.KillTimeout, task.PidsLimit)
			}
			if checkName(task.Name) != "" {
				fail("task name %q", task.Name)
			}
			for _, a := range task.Command {
				noNUL("command argument", a)
			}
			for k, v := range task.Env {
				noNUL("env", k+v)
			}
			noNUL("workDir", task.WorkDir)
			noNUL("image", task.Image)
			for _, m := range task.GPUModels {
				noNUL("gpu model", m)
			}
		}
	}
	if replicas > MaxReplicas {
		fail("%d replicas in all", replicas)
	}
}
