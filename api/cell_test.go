package api

import (
	"testing"
	"time"
)

func TestTimeWindowActive(t *testing.T) {
	weekdays := TimeWindow{Name: "peak", Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "18:00"}
	night := TimeWindow{Name: "night", Days: []string{"fri"}, Start: "22:00", End: "06:00"}
	berlin := TimeWindow{Name: "b", Start: "09:00", End: "10:00", TimeZone: "Europe/Berlin"}
	at := func(day, hour, minute int) time.Time { return time.Date(2026, 12, day, hour, minute, 0, 0, time.UTC) } // Dec 7 2026 is a Monday
	tests := []struct {
		name string
		w    TimeWindow
		t    time.Time
		want bool
	}{
		{"monday inside", weekdays, at(7, 12, 0), true},
		{"start is inclusive", weekdays, at(7, 9, 0), true},
		{"end is exclusive", weekdays, at(7, 18, 0), false},
		{"before", weekdays, at(7, 8, 59), false},
		{"sunday", weekdays, at(6, 12, 0), false},
		{"friday night", night, at(11, 23, 0), true},
		{"saturday small hours belong to friday", night, at(12, 5, 59), true},
		{"saturday at six", night, at(12, 6, 0), false},
		{"thursday small hours", night, at(10, 3, 0), false},
		{"time zone", berlin, at(7, 8, 30), true}, // 09:30 in Berlin (UTC+1 in December)
		{"time zone outside", berlin, at(7, 9, 30), false},
		{"start equal to end: the whole day", TimeWindow{Name: "d", Days: []string{"mon"}, Start: "06:00", End: "06:00"}, at(7, 3, 0), true},
		{"whole day, other day", TimeWindow{Name: "d", Days: []string{"mon"}, Start: "06:00", End: "06:00"}, at(8, 3, 0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.w.Active(tt.t); got != tt.want {
				t.Fatalf("Active(%v) = %v, want %v", tt.t, got, tt.want)
			}
		})
	}
}

func TestParseClockIsStrict(t *testing.T) {
	for _, bad := range []string{"-1:00", "+9:00", " 9:00", "09:-5", "9:0 0", "1e:00", "24:00", "12:60", "9:00", "09:00:00", ""} {
		if m, err := ParseClock(bad); err == nil {
			t.Errorf("ParseClock(%q) = %d, want an error", bad, m)
		}
	}
	if m, err := ParseClock("23:59"); err != nil || m != 23*60+59 {
		t.Fatalf("ParseClock(23:59) = %d, %v", m, err)
	}
	if errs := (&TimeWindow{Name: "x", Start: "09:00", End: "10:00", TimeZone: "Local"}).Validate(); len(errs) != 1 || errs[0].Path != "timeZone" {
		t.Fatalf("Local accepted: %v", errs)
	}
}
