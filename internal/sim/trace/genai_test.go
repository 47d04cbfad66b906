package trace

import (
	"errors"
	"strings"
	"testing"
)

func TestReadUsageSeries(t *testing.T) {
	in := "value,timestamp_anon,container_ip\n" +
		"0.5,120.0,b\n0.25,60.0,a\n0.75,60.0,b\n-0.00001,180.0,a\n"
	got, err := ReadUsageSeries("u.csv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Pod != "a" || got[1].Pod != "b" {
		t.Fatalf("pods = %+v, want a then b", got)
	}
	if s := got[0].Samples; len(s) != 2 || s[0] != (UsageSample{60, 0.25}) || s[1] != (UsageSample{180, 0}) {
		t.Errorf("pod a = %+v, want (60, 0.25) then (180, 0): a hair below zero reads as zero", s)
	}
	if s := got[1].Samples; len(s) != 2 || s[0].Time != 60 || s[1].Time != 120 {
		t.Errorf("pod b = %+v, want time order", s)
	}
}

func TestReadGenAIErrorsNameTheCell(t *testing.T) {
	cases := []struct {
		name, in string
		read     func(string) error
		want     string
	}{
		{"usage value", "value,timestamp_anon,container_ip\nx,1,a\n", usage, "u.csv:2:value"},
		{"usage column", "value,container_ip\n1,a\n", usage, "u.csv:1:timestamp_anon"},
		{"usage pod", "value,timestamp_anon,container_ip\n1,1,\n", usage, "u.csv:2:container_ip"},
		{"request time", "gmt_create,exec_time_seconds\n2024/11/15,3\n", requests, "u.csv:2:gmt_create"},
		{"request exec", "gmt_create,exec_time_seconds\n2024-11-15 10:00:00,-3\n", requests, "u.csv:2:exec_time_seconds"},
		{"latency", "timestamp_anon,value,container_ip\n1,fast,a\n", latencies, "u.csv:2:value"},
		{"no latency", "timestamp_anon,value,container_ip\n", latencies, "no latencies"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.read(c.in)
			var pe *ParseError
			if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want a ParseError naming %q", err, c.want)
			}
		})
	}
}

func usage(in string) error {
	_, err := ReadUsageSeries("u.csv", strings.NewReader(in))
	return err
}

func requests(in string) error {
	_, err := ReadRequests("u.csv", strings.NewReader(in))
	return err
}

func latencies(in string) error {
	_, err := ReadStartupLatencies("u.csv", strings.NewReader(in))
	return err
}

func TestReadRequestsAndLatencies(t *testing.T) {
	reqs, err := ReadRequests("r.csv", strings.NewReader("gmt_create,predict_type,predict_status,exec_time_seconds,groupId\n"+
		"2024-11-15 16:57:50,TXT_2_IMG,SUCCEED,32.0,G0\n2024-11-15 16:57:40,IMG_2_IMG,FAILED,,G1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Arrival != 1731689860 || reqs[0].Exec != 0 || reqs[0].Status != "FAILED" ||
		reqs[1].Exec != 32 || reqs[1].Group != "G0" {
		t.Errorf("requests = %+v, want arrival order, UTC seconds, an empty execution time as 0", reqs)
	}
	lat, err := ReadStartupLatencies("l.csv", strings.NewReader("timestamp_anon,value,container_ip\n1,2639.0,a\n2,500,b\n"))
	if err != nil || len(lat) != 2 || lat[0] != 2.639 || lat[1] != 0.5 {
		t.Errorf("latencies = %v, %v; want seconds in file order", lat, err)
	}
}
