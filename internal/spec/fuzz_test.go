package spec

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics, and that it returns either a
// workload or a non-empty *Errors, never both or neither.
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
		if err == nil {
			if w == nil {
				t.Fatal("Parse returned neither a workload nor an error")
			}
			return
		}
		var errs *Errors
		if !errors.As(err, &errs) || len(errs.List) == 0 {
			t.Fatalf("error %T %v is not a non-empty *Errors", err, err)
		}
		if w != nil {
			t.Fatal("Parse returned a workload and an error")
		}
	})
}
