package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestMicroVMTasks(t *testing.T) {
	const driver = "          driver: microvm\n"
	for _, tc := range []struct {
		name       string
		fields     string
		wantPaths  []string
		wantMsg    string
		wantMemory int64
	}{
		{name: "image and command", fields: driver + "          image: oci-archive:/srv/app.tar\n" + cmd, wantMemory: MicroVMMinMemoryBytes},
		{name: "image alone runs its entrypoint", fields: driver + "          image: oci:/srv/app\n", wantMemory: MicroVMMinMemoryBytes},
		{name: "more memory is kept", fields: driver + "          image: oci:/srv/app\n          resources: {memory: 1Gi}\n", wantMemory: 1 << 30},
		{name: "memory set elsewhere in resources still defaults", fields: driver + "          image: oci:/srv/app\n          resources: {cpu: 2}\n", wantMemory: MicroVMMinMemoryBytes},
		{name: "no image", fields: driver + cmd, wantPaths: []string{"spec.groups[0].tasks[0].image"}, wantMsg: "required for driver microvm"},
		{name: "registry image", fields: driver + "          image: busybox:latest\n", wantPaths: []string{"spec.groups[0].tasks[0].image"}, wantMsg: "want oci-archive:PATH or oci:DIR"},
		{name: "scheme without a path", fields: driver + "          image: \"oci:\"\n", wantPaths: []string{"spec.groups[0].tasks[0].image"}},
		{name: "too little memory", fields: driver + "          image: oci:/x\n          resources: {memory: 64Mi}\n",
			wantPaths: []string{"spec.groups[0].tasks[0].resources.memory"}, wantMsg: "a micro-VM needs at least 128MiB, got 64MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Parse([]byte(oneTask(tc.fields)))
			if len(tc.wantPaths) > 0 {
				var errs *Errors
				if !errors.As(err, &errs) {
					t.Fatalf("error %v, want field errors %q", err, tc.wantPaths)
				}
				if got := errs.Paths(); !slices.Equal(got, tc.wantPaths) {
					t.Fatalf("paths %q, want %q\n%v", got, tc.wantPaths, err)
				}
				if !strings.Contains(errs.List[0].Message, tc.wantMsg) {
					t.Errorf("message %q lacks %q", errs.List[0].Message, tc.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			task := w.Groups[0].Tasks[0]
			if task.Driver != DriverMicroVM || task.Resources.MemoryBytes != tc.wantMemory {
				t.Errorf("driver %q memory %d, want microvm %d", task.Driver, task.Resources.MemoryBytes, tc.wantMemory)
			}
		})
	}
}
