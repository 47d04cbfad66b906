package trace

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func writeTemp(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.csv")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadBackblaze(t *testing.T) {
	p := writeTemp(t, `date,serial_number,model,capacity_bytes,failure,smart_5_normalized,smart_5_raw,smart_197_raw
2013-04-10,A,m1,1,0,,3,
2013-04-10,B,m2,1,0,,0,1
2013-04-11,A,m1,1,1,,4,0
`)
	tb, err := LoadBackblaze(p, []int{1, 5, 197})
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Attrs) != 2 || tb.Attrs[0] != 5 || tb.Attrs[1] != 197 {
		t.Fatalf("attrs %v: only the columns the file has", tb.Attrs)
	}
	if len(tb.Rows) != 3 || len(tb.Serial) != 2 || tb.Model[1] != "m2" || !tb.Rows[2].Failed || tb.Rows[2].Day != tb.Rows[0].Day+1 {
		t.Fatalf("rows %+v serials %v models %v", tb.Rows, tb.Serial, tb.Model)
	}
	if v := tb.Value(0, 1); !math.IsNaN(v) {
		t.Errorf("an empty cell is %v, want absent (NaN)", v)
	}
	if DateOf(int(tb.Rows[0].Day)) != "2013-04-10" {
		t.Errorf("day %d is %s", tb.Rows[0].Day, DateOf(int(tb.Rows[0].Day)))
	}
	for _, tc := range []struct{ name, body, col string }{
		{"a bad date", "date,serial_number,failure\n2013-13-01,A,0\n", "date"},
		{"days going back", "date,serial_number,failure\n2013-04-11,A,0\n2013-04-10,A,0\n", "date"},
		{"a bad failure flag", "date,serial_number,failure\n2013-04-10,A,yes\n", "failure"},
		{"a value that is not a number", "date,serial_number,failure,smart_5_raw\n2013-04-10,A,0,lots\n", "smart_5_raw"},
		{"no serial column", "date,failure\n2013-04-10,0\n", "serial_number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadBackblaze(writeTemp(t, tc.body), []int{5})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Column != tc.col {
				t.Errorf("err %v, want a parse error naming %s", err, tc.col)
			}
		})
	}
}

func TestLoadSSDTickets(t *testing.T) {
	p := writeTemp(t, `model,failure_time,failure,app,disk_id,node_id,rack_id,machine_room_id
A2,2018-01-02 22:45:16,1,RM,2,n2,r1,m
A2,2018-01-02 19:15:32,1,RM,1,n1,r1,m
`)
	tks, err := LoadSSDTickets(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tks) != 2 || tks[0].Node != "n1" || tks[0].Time >= tks[1].Time || tks[0].Room != "m" {
		t.Fatalf("tickets %+v: want both, in time order", tks)
	}
	if _, err := LoadSSDTickets(writeTemp(t, "failure_time,disk_id,node_id,rack_id\nyesterday,1,n,r\n")); err == nil {
		t.Error("a bad time was accepted")
	}
	if _, err := LoadSSDTickets(writeTemp(t, "failure_time,disk_id,node_id,rack_id\n2018-01-02 19:15:32,1,n,\n")); err == nil {
		t.Error("a ticket without a rack was accepted")
	}
}
