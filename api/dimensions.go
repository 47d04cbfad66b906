package api

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// A resource dimension — CPU, memory, disk, whole GPUs, GPU shares,
// bandwidth, huge pages of each size — is one entry of Dimensions and one
// int64 field of Resources, in the same order. Everything that handles
// Resources dimension by dimension walks the table: the arithmetic here,
// the bounds and the quantity syntax (internal/resources), the workload
// parser (internal/spec), the scheduler's fit checks and rejection
// reasons, the CLI's node views. Adding a dimension (usage telemetry, a
// new device class measured in units) is one field, one entry, and, for a
// unit of its own, that unit's parse and format; the init check below and
// the round-trip test (internal/resources) hold the rest to it.

// Unit is how a dimension's integer is written and read: internal/resources
// parses and formats each.
type Unit uint8

const (
	UnitMilliCPU Unit = iota + 1 // millicores: "500m", "2"
	UnitBytes                    // bytes: "64Mi", "1.5GiB", "512M"
	UnitCount                    // whole things: "4"
	UnitMilliGPU                 // thousandths of one GPU: "0.5" is 500
	UnitMbps                     // megabits per second: "100Mbps", "10Gbps"
)

// Fit is how the scheduler fits a request of a dimension on a node.
type Fit uint8

const (
	// FitAggregate: the node's free total (capacity minus what its
	// allocations hold) must cover the request.
	FitAggregate Fit = iota + 1
	// FitPerDevice: the request is cut from one device, judged by the
	// node's per-device occupancy (GPU shares), never against a total.
	FitPerDevice
)

// SpecForm is how a workload document writes a dimension under a task's
// resources.
type SpecForm uint8

const (
	// FormQuantity: resources.<key>: <quantity in the unit>.
	FormQuantity SpecForm = iota + 1
	// FormGPU: resources.gpu: a whole number of GPUs, or a fraction
	// below one, which is a share (gpuMilli).
	FormGPU
	// FormHugePages: resources.hugepages.<page size>: <bytes>, a whole
	// number of pages.
	FormHugePages
)

// Dimension describes one dimension of Resources.
type Dimension struct {
	// Name names the dimension in workload documents' limits and in
	// messages: cpu, memory, disk, gpu, gpuMilli, bandwidth,
	// hugepages.2Mi, hugepages.1Gi.
	Name string
	// Field is its Resources JSON field: cpuMilli, memoryBytes, ….
	Field string
	Unit  Unit
	// Max is the most one task, one group instance or one node may
	// declare (docs/workload-spec.md, "Limits"): far above any machine
	// and far below int64, so that sums of bounded values never overflow.
	Max int64
	// Fit is how the scheduler fits it; Noun words its rejection,
	// "insufficient <Noun>" (a node's reason in a group's failure).
	Fit  Fit
	Noun string
	// Capacity: a node offers it. A dimension a node does not offer
	// (a GPU share, cut from whole GPUs) must be 0 in a node's capacity.
	Capacity bool
	// Share, for a FitPerDevice dimension, is the dimension whose units
	// it divides and into how many parts (gpuMilli: 1000 of one gpu):
	// what a share is worth next to a node's capacity.
	Share struct {
		Of    string
		Parts int64
	}
	// Spec says how a workload document writes it: Form, the key under
	// a task's resources (cpu, memory, disk, bandwidth, gpu, hugepages),
	// an example quantity for messages, whether a request of zero is
	// refused (zero memory kills a task at once, zero CPU starves it),
	// and for huge pages the page size.
	Spec struct {
		Form     SpecForm
		Key      string
		Example  string
		NonZero  bool
		PageSize int64
	}
}

// Dimensions lists every dimension, in the order of Resources' fields.
var Dimensions = []Dimension{
	dim("cpu", "cpuMilli", UnitMilliCPU, 1_000_000*1000, FitAggregate, "cpu", true).
		spec(FormQuantity, "cpu", "500m or 2", true),
	dim("memory", "memoryBytes", UnitBytes, 1<<50, FitAggregate, "memory", true).
		spec(FormQuantity, "memory", "64Mi", true),
	dim("disk", "diskBytes", UnitBytes, 8<<50, FitAggregate, "disk", true).
		spec(FormQuantity, "disk", "100Mi", false),
	dim("gpu", "gpus", UnitCount, 4096, FitAggregate, "gpu", true).
		spec(FormGPU, "gpu", "1 or 0.5", false),
	dim("gpuMilli", "gpuMilli", UnitMilliGPU, 999, FitPerDevice, "gpu", false).
		spec(FormGPU, "gpu", "1 or 0.5", false).share("gpu", 1000),
	dim("bandwidth", "netMbps", UnitMbps, 1_000_000_000, FitAggregate, "bandwidth", true).
		spec(FormQuantity, "bandwidth", "100Mbps", false),
	dim("hugepages.2Mi", "hugePages2MiBytes", UnitBytes, 1<<50, FitAggregate, "2Mi huge pages", true).
		spec(FormHugePages, "hugepages", "64Mi", false).pages(2 << 20),
	dim("hugepages.1Gi", "hugePages1GiBytes", UnitBytes, 1<<50, FitAggregate, "1Gi huge pages", true).
		spec(FormHugePages, "hugepages", "1Gi", false).pages(1 << 30),
}

// numDims is the number of dimensions: Resources' fields.
const numDims = 8

// dim, spec, share and pages build the table's entries.
func dim(name, field string, unit Unit, maximum int64, fit Fit, noun string, capacity bool) Dimension {
	return Dimension{Name: name, Field: field, Unit: unit, Max: maximum, Fit: fit, Noun: noun, Capacity: capacity}
}

func (d Dimension) spec(form SpecForm, key, example string, nonZero bool) Dimension {
	d.Spec.Form, d.Spec.Key, d.Spec.Example, d.Spec.NonZero = form, key, example, nonZero
	return d
}

func (d Dimension) share(of string, parts int64) Dimension {
	d.Share.Of, d.Share.Parts = of, parts
	return d
}

func (d Dimension) pages(size int64) Dimension {
	d.Spec.PageSize = size
	return d
}

// vector is r's dimensions as an array, in table order: Resources is
// numDims int64 fields and nothing else (checked at init), so the
// table's loops cost what the unrolled code did.
func (r *Resources) vector() *[numDims]int64 { return (*[numDims]int64)(unsafe.Pointer(r)) }

// Of returns a pointer to dimension k of r (k indexes Dimensions).
func (r *Resources) Of(k int) *int64 { return &r.vector()[k] }

// Get returns dimension k of r.
func (r Resources) Get(k int) int64 { return r.vector()[k] }

// DimensionIndex returns the index in Dimensions of the dimension named
// name, or -1.
func DimensionIndex(name string) int {
	for k := range Dimensions {
		if Dimensions[k].Name == name {
			return k
		}
	}
	return -1
}

// aggregate is, per dimension, whether it is fitted against totals
// (Exceeds compares only those).
var aggregate [numDims]bool

func init() {
	if err := checkDimensions(); err != nil {
		panic(err)
	}
	for k, d := range Dimensions {
		aggregate[k] = d.Fit == FitAggregate
	}
}

// checkDimensions holds the table to Resources: one int64 field per
// entry, in order, laid out as an array, each with its entry's JSON name;
// names unique; every entry complete; shares of an aggregate dimension.
func checkDimensions() error {
	t := reflect.TypeFor[Resources]()
	if t.NumField() != len(Dimensions) || len(Dimensions) != numDims || t.Size() != numDims*8 {
		return fmt.Errorf("api.Dimensions: %d entries (numDims %d) for %d fields of Resources", len(Dimensions), numDims, t.NumField())
	}
	seen := map[string]bool{}
	for k, d := range Dimensions {
		f := t.Field(k)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Type.Kind() != reflect.Int64 || f.Offset != uintptr(8*k):
			return fmt.Errorf("api.Dimensions: Resources.%s is not the int64 at position %d", f.Name, k)
		case tag != d.Field:
			return fmt.Errorf("api.Dimensions[%d] %q: field %q, but Resources' field %d is %q", k, d.Name, d.Field, k, tag)
		case d.Name == "" || d.Noun == "" || d.Unit == 0 || d.Fit == 0 || d.Max <= 0 || d.Spec.Form == 0 || d.Spec.Key == "" || d.Spec.Example == "":
			return fmt.Errorf("api.Dimensions[%d] %q: incomplete entry %+v", k, d.Name, d)
		case seen[d.Name]:
			return fmt.Errorf("api.Dimensions: %q twice", d.Name)
		case d.Fit == FitPerDevice && (d.Share.Parts <= 0 || DimensionIndex(d.Share.Of) < 0 || Dimensions[DimensionIndex(d.Share.Of)].Fit != FitAggregate):
			return fmt.Errorf("api.Dimensions[%d] %q: a per-device dimension must share an aggregate one", k, d.Name)
		case d.Spec.Form == FormHugePages && d.Spec.PageSize <= 0:
			return fmt.Errorf("api.Dimensions[%d] %q: huge pages without a page size", k, d.Name)
		}
		seen[d.Name] = true
	}
	return nil
}
