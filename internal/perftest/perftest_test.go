package perftest

import (
	"errors"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The write_lat_* files are perftest 4.5+0.17 (version string 6.06)
// outputs captured in the soft-RoCE VM: ib_write_lat -d rxe0 -x 1 -s SIZE
// -n 5000 -F, server and client, standard output only. The *_U_* files are
// the same with -U and -n 1000, one of each tool (ib_send_lat -c RC and
// UD, ib_atomic_lat -A FETCH_AND_ADD), run unpinned. The malformed_*
// and header_only files are the client's output damaged by hand;
// old_three_stats_all_sizes is older perftest's -a table (t_min, t_max,
// t_typical only).

func parseFile(t *testing.T, name string) (*LatencyReport, error) {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return ParseLatency(f)
}

func TestParseClient(t *testing.T) {
	rep, err := parseFile(t, "write_lat_client_2.txt")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Title != "RDMA_Write Latency Test" {
		t.Errorf("Title = %q", rep.Title)
	}
	wantInfo := map[string]string{
		"Dual-port": "OFF", "Device": "rxe0",
		"Number of qps": "1", "Transport type": "IB",
		"Connection type": "RC", "Using SRQ": "OFF",
		"PCIe relax order": "OFF",
		"ibv_wr* API":      "OFF",
		"TX depth":         "1",
		"Mtu":              "1024[B]",
		"Link type":        "Ethernet",
		"GID index":        "1",
		"Max inline data":  "0[B]",
		"rdma_cm QPs":      "OFF", // the key holds a tab in perftest's output
		"Data ex. method":  "Ethernet",
	}
	if !reflect.DeepEqual(rep.Info, wantInfo) {
		t.Errorf("Info =\n%v\nwant\n%v", rep.Info, wantInfo)
	}
	want := []LatencyRow{{Bytes: 2, Iterations: 5000, Values: map[Stat]float64{
		Min: 9.45, Max: 20583.80, Typical: 15.02, Avg: 86.06, StdDev: 520.32, P99: 3991.83, P999: 4182.19,
	}}}
	if !reflect.DeepEqual(rep.Rows, want) {
		t.Errorf("Rows = %+v, want %+v", rep.Rows, want)
	}
	for _, s := range []Stat{Min, Max, Typical, Avg, StdDev, P99, P999} {
		if rep.Units[s] != "usec" {
			t.Errorf("Units[%s] = %q, want usec", s, rep.Units[s])
		}
	}
	if len(rep.Notes) != 0 {
		t.Errorf("Notes = %q, want none", rep.Notes)
	}
	if _, ok := rep.Row(4096); ok {
		t.Error("Row(4096) found a row")
	}
	row, ok := rep.Row(2)
	if v, has := row.Get(P99); !ok || !has || v != 3991.83 {
		t.Errorf("Row(2).Get(P99) = %v, %v, %v", v, has, ok)
	}
}

func TestParseServer(t *testing.T) {
	// The server prints a banner first and no TX depth line.
	rep, err := parseFile(t, "write_lat_server_4096.txt")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Title != "RDMA_Write Latency Test" || rep.Info["Device"] != "rxe0" || rep.Info["GID index"] != "1" {
		t.Errorf("Title %q, Info %v", rep.Title, rep.Info)
	}
	if _, ok := rep.Info["TX depth"]; ok {
		t.Error("server Info has TX depth")
	}
	want := []LatencyRow{{Bytes: 4096, Iterations: 5000, Values: map[Stat]float64{
		Min: 69.33, Max: 8546.38, Typical: 91.09, Avg: 108.72, StdDev: 163.35, P99: 357.47, P999: 2857.03,
	}}}
	if !reflect.DeepEqual(rep.Rows, want) {
		t.Errorf("Rows = %+v, want %+v", rep.Rows, want)
	}
}

func TestParseOldAllSizes(t *testing.T) {
	rep, err := parseFile(t, "old_three_stats_all_sizes.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rep.Rows))
	}
	r, _ := rep.Row(8)
	want := LatencyRow{Bytes: 8, Iterations: 1000, Values: map[Stat]float64{Min: 9.58, Max: 998.40, Typical: 15.20}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("Row(8) = %+v, want %+v", r, want)
	}
	if _, ok := r.Get(P99); ok {
		t.Error("Get(P99) found a column the table lacks")
	}
}

func TestParseVariants(t *testing.T) {
	hdr := " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
	const dash = "---------------------------------------------------------------------------------------\n"
	for _, tc := range []struct {
		name string
		in   string
		want LatencyRow
		note []string
	}{
		{
			name: "duration mode",
			in:   dash + " #bytes        #iterations       t_avg[usec]    tps average\n 2       2841234           1.75           569211.27\n" + dash,
			want: LatencyRow{Bytes: 2, Iterations: 2841234, Values: map[Stat]float64{Avg: 1.75, TPSAverage: 569211.27}},
		},
		{
			name: "warning inside the table",
			in:   dash + hdr + "Conflicting CPU frequency values detected: 2400.000000 != 2399.998000. CPU Frequency is not max.\n 2       1000          9.60           1266.22      15.06    \t       16.95       \t19.33  \t\t96.53   \t\t1266.22\n" + dash,
			want: LatencyRow{Bytes: 2, Iterations: 1000, Values: map[Stat]float64{Min: 9.60, Max: 1266.22, Typical: 15.06, Avg: 16.95, StdDev: 19.33, P99: 96.53, P999: 1266.22}},
			note: []string{"Conflicting CPU frequency values detected: 2400.000000 != 2399.998000. CPU Frequency is not max."},
		},
		{
			name: "cpu util column",
			in:   hdr[:len(hdr)-2] + "    CPU_Util[%]\n 2       1000          9.60           1266.22      15.06    \t       16.95       \t19.33  \t\t96.53   \t\t1266.22  3.25\n",
			want: LatencyRow{Bytes: 2, Iterations: 1000, Values: map[Stat]float64{Min: 9.60, Max: 1266.22, Typical: 15.06, Avg: 16.95, StdDev: 19.33, P99: 96.53, P999: 1266.22, "CPU_Util": 3.25}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := ParseLatency(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Rows) != 1 || !reflect.DeepEqual(rep.Rows[0], tc.want) {
				t.Errorf("Rows = %+v, want [%+v]", rep.Rows, tc.want)
			}
			if !reflect.DeepEqual(rep.Notes, tc.note) {
				t.Errorf("Notes = %q, want %q", rep.Notes, tc.note)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		file    string
		noTable bool
		line    int
		msg     string
	}{
		{file: "write_lat_noserver.txt", noTable: true},
		{file: "malformed_short_row.txt", line: 22, msg: "row has 5 fields, the header 9 columns"},
		{file: "malformed_number.txt", line: 22, msg: `t_typical: "15.o2" is not a number`},
		{file: "header_only.txt", line: 21, msg: "header but no row"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := parseFile(t, tc.file)
			if tc.noTable {
				if !errors.Is(err, ErrNoTable) {
					t.Fatalf("err = %v, want ErrNoTable", err)
				}
				return
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SyntaxError", err)
			}
			if se.Line != tc.line || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("err = %v, want line %d and %q", err, tc.line, tc.msg)
			}
		})
	}
	// perftest 4.5 with -F when its CPU frequency estimate failed: every
	// figure inf or -nan (captured in the VM under load; standard error
	// appended).
	if _, err := parseFile(t, "write_lat_client_noclock.txt"); !errors.Is(err, ErrNoClock) || !strings.Contains(err.Error(), "line 22") {
		t.Errorf("inf/nan figures: err = %v, want ErrNoClock at line 22", err)
	}
	// Empty output: the test failed before printing anything.
	if _, err := ParseLatency(strings.NewReader("")); !errors.Is(err, ErrNoTable) {
		t.Errorf("empty output: err = %v, want ErrNoTable", err)
	}
	// A header whose first columns are not #bytes #iterations.
	_, err := ParseLatency(strings.NewReader(" #bytes t_min[usec]\n 2 9.5\n"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 1 {
		t.Errorf("bad header: err = %v, want a *SyntaxError at line 1", err)
	}
}

// The other latency tests, captured the same way (perftest 4.5+0.17 in the
// soft-RoCE VM, -d rxe0 -x 1 -n 2000 -F, 2 bytes; atomics take no -s):
// ib_read_lat -s 2, ib_send_lat -s 2 -c RC|UD -I 0, ib_atomic_lat -A
// FETCH_AND_ADD. Read and atomic are reported by the client only, not
// halved (the whole operation); the send server reports too.
func TestParseOtherTests(t *testing.T) {
	for _, tc := range []struct {
		file, title, conn string
		bytes             int
		typical, p99      float64
	}{
		{"read_lat_client_2.txt", "RDMA_Read Latency Test", "RC", 2, 56.66, 253.04},
		{"send_lat_rc_client_2.txt", "Send Latency Test", "RC", 2, 15.68, 14369.27},
		{"send_lat_rc_server_2.txt", "Send Latency Test", "RC", 2, 15.70, 13529.07},
		{"send_lat_ud_client_2.txt", "Send Latency Test", "UD", 2, 42.04, 40826.88},
		{"atomic_lat_client.txt", "Atomic FETCH_AND_ADD Latency Test", "RC", 8, 50.56, 8671.11},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rep, err := parseFile(t, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Title != tc.title || rep.Info["Connection type"] != tc.conn || rep.Info["Device"] != "rxe0" {
				t.Errorf("Title %q, Connection type %q, Device %q", rep.Title, rep.Info["Connection type"], rep.Info["Device"])
			}
			row, ok := rep.Row(tc.bytes)
			if !ok || len(rep.Rows) != 1 || row.Iterations != 2000 {
				t.Fatalf("rows %+v, want one of %d bytes, 2000 iterations", rep.Rows, tc.bytes)
			}
			for _, s := range []Stat{Min, Max, Typical, Avg, StdDev, P99, P999} {
				if _, ok := row.Get(s); !ok {
					t.Errorf("no %s", s)
				}
			}
			if v, _ := row.Get(Typical); v != tc.typical {
				t.Errorf("t_typical %v, want %v", v, tc.typical)
			}
			if v, _ := row.Get(P99); v != tc.p99 {
				t.Errorf("99%% %v, want %v", v, tc.p99)
			}
		})
	}
	// Read and atomic servers print their parameters and no table.
	for _, f := range []string{"read_lat_server_2.txt", "atomic_lat_server.txt"} {
		if _, err := parseFile(t, f); !errors.Is(err, ErrNoTable) {
			t.Errorf("%s: err %v, want ErrNoTable", f, err)
		}
	}
	// perftest 4.5 has no --write_with_imm: usage text, no table.
	if _, err := parseFile(t, "write_imm_unsupported.txt"); !errors.Is(err, ErrNoTable) {
		t.Errorf("write_imm_unsupported.txt: err %v, want ErrNoTable", err)
	}
}

// perftestRow applies print_report_lat's statistics to -U's samples, as
// perftest 4.5 does: sort, drop the 2 largest; t_min the smallest, t_max
// the largest left, t_typical the median, t_avg the mean of those left,
// 99% and 99.9% the samples at index ceil(n*p).
func perftestRow(samples []float64) map[Stat]float64 {
	xs := slices.Clone(samples)
	slices.Sort(xs)
	n := len(xs) - 2
	med := xs[n/2]
	if n%2 == 0 {
		med = (xs[n/2] + xs[n/2-1]) / 2
	}
	var sum float64
	for _, x := range xs[:n] {
		sum += x
	}
	return map[Stat]float64{
		Min: xs[0], Max: xs[n], Typical: med, Avg: sum / float64(n),
		P99: xs[int(math.Ceil(float64(n)*0.99))], P999: xs[int(math.Ceil(float64(n)*0.999))],
	}
}

// TestParseSamples reads -U dumps recorded in the VM (perftest 4.5,
// 1000 iterations: 999 samples; READ and atomic servers measure nothing)
// and checks each against perftest's own table: its statistics over the
// parsed samples reproduce the printed row, to the dump's 6 significant
// digits and the table's 2 decimals.
func TestParseSamples(t *testing.T) {
	for _, tc := range []struct {
		file        string
		first, last float64
	}{
		{"write_lat_U_2_client.txt", 3422.34, 11.587},
		{"write_lat_U_2_server.txt", 0, 0},
		{"write_lat_U_4096_client.txt", 0, 0}, // its t_stdev is -nan
		{"read_lat_U_2_client.txt", 1550.06, 37.7116},
		{"send_lat_U_2_client.txt", 0, 0},
		{"send_lat_U_2_server.txt", 0, 0},
		{"send_ud_lat_U_2_client.txt", 0, 0},
		{"atomic_lat_U_client.txt", 0, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rep, err := parseFile(t, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Samples) != 999 || rep.SampleUnit != "usec" {
				t.Fatalf("%d samples in %q, want 999 in usec", len(rep.Samples), rep.SampleUnit)
			}
			if tc.first != 0 && (rep.Samples[0] != tc.first || rep.Samples[998] != tc.last) {
				t.Errorf("samples %v ... %v, want %v ... %v", rep.Samples[0], rep.Samples[998], tc.first, tc.last)
			}
			if len(rep.Rows) != 1 {
				t.Fatalf("%d rows, want 1", len(rep.Rows))
			}
			for s, want := range perftestRow(rep.Samples) {
				got, ok := rep.Rows[0].Get(s)
				if !ok || math.Abs(got-want) > 0.005+want*5e-6 {
					t.Errorf("%s: table %v (present %v), from the samples %v", s, got, ok, want)
				}
			}
		})
	}
	rep, err := parseFile(t, "write_lat_client_2.txt") // no -U
	if err != nil || rep.Samples != nil {
		t.Errorf("without -U: %v, samples %v", err, rep.Samples)
	}
	for _, f := range []string{"read_lat_U_2_server.txt", "atomic_lat_U_server.txt"} {
		// The READ and atomic servers measure nothing and print no table.
		if _, err := parseFile(t, f); !errors.Is(err, ErrNoTable) {
			t.Errorf("%s: %v, want ErrNoTable", f, err)
		}
	}
	rep, err = parseFile(t, "write_lat_U_4096_client.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rep.Rows[0].Get(StdDev); ok {
		t.Error("t_stdev -nan read as a value")
	}
}

// TestParseSamplesDamaged: a dump cut short, misnumbered or holding
// nan is an error, never a shorter set of samples.
func TestParseSamplesDamaged(t *testing.T) {
	b, err := os.ReadFile("testdata/write_lat_U_2_client.txt")
	if err != nil {
		t.Fatal(err)
	}
	good := string(b)
	for _, tc := range []struct {
		name, text string
		want       string // in the error
		noClock    bool
	}{
		{"cut", good[:strings.Index(good, "\n500, ")], "stops after 499 samples", false},
		{"misnumbered", strings.Replace(good, "\n500, ", "\n501, ", 1), "want 500", false},
		{"not a time", strings.Replace(good, "\n500, 11.", "\n500, x11.", 1), "not a time", false},
		{"nan", strings.Replace(good, "\n500, 11.582", "\n500, -nan", 1), "", true},
	} {
		_, err := ParseLatency(strings.NewReader(tc.text))
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if tc.noClock != errors.Is(err, ErrNoClock) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
