package dbbench

import (
	"slices"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
)

func TestNodeSpec(t *testing.T) {
	tests := []struct {
		spec    string
		i, k    int
		want    string
		wantErr bool
	}{
		{"snowflake", 0, 1, "snowflake", false},
		{"snowflake", 2, 4, "snowflake:node=2", false},
		{"snowflake:layout=discord", 3, 4, "snowflake:layout=discord,node=3", false},
		{"sonyflake", 1, 2, "sonyflake:machine=1", false},
		{"ulid", 1, 2, "ulid", false},
		{"snowflake:node=1", 1, 2, "", true},
		// Names and keys in any case, as idkit.New reads them.
		{"SNOWFLAKE", 2, 4, "SNOWFLAKE:node=2", false},
		{"SonyFlake", 1, 2, "SonyFlake:machine=1", false},
		{"snowflake:Layout=discord", 3, 4, "snowflake:Layout=discord,node=3", false},
		{"snowflake:WORKER=1", 1, 2, "", true},
		{"snowflake:lease=etcd://127.0.0.1:1/x", 1, 2, "", true},
		{"snowflake:", 1, 2, "", true},
	}
	for _, tt := range tests {
		got, err := engine.NodeSpec(tt.spec, tt.i, tt.k)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("nodeSpec(%q, %d, %d) = %q, %v; want %q (error %v)", tt.spec, tt.i, tt.k, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestRecorderCurve(t *testing.T) {
	r := engine.NewRecorder(1000, 4, 100, nil)
	for i := 0; i < 10; i++ {
		r.Add(100)
	}
	c := r.Curve()
	if len(c) != 4 || c[0].Rows != 300 || c[3].Rows != 1000 {
		t.Errorf("curve %+v, want chunks of 300 rows ending at 1000", c)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestDefaultSchemesByEngine: a run whose scheme list the user did not choose (empty, or
// any engine's table-workload default, as idbench's --schemes holds when not given) gets its
// engine's list for its workload from the engine table; a chosen list is kept.
func TestDefaultSchemesByEngine(t *testing.T) {
	mine := []string{"snowflake", "uuidv4"}
	for _, tc := range []struct {
		db, workload string
		given, want  []string
	}{
		{EnginePGLocal, "", nil, DefaultSchemes()},
		{EnginePGLocal, WorkloadTable, InnoDBSchemes(), DefaultSchemes()},
		{EnginePGLocal, WorkloadApp, DefaultSchemes(), AppSchemes(false)},
		{EngineSQLite, WorkloadApp, nil, AppSchemes(false)},
		{EngineMariaDBLocal, "", DefaultSchemes(), InnoDBSchemes()},
		{EngineMariaDBLocal, WorkloadApp, InnoDBSchemes(), AppSchemes(true)},
		{EngineMariaDBLocal, WorkloadApp, DefaultSchemes(), AppSchemes(true)},
		{"mysql://root@127.0.0.1:3306/", WorkloadApp, nil, AppSchemes(true)},
		{"mysql://root@127.0.0.1:3306/", "", nil, InnoDBSchemes()},
		{EngineMariaDBLocal, WorkloadApp, mine, mine},
		{EnginePGLocal, WorkloadTable, AppSchemes(false), AppSchemes(false)},
	} {
		cfg, err := Config{DB: tc.db, Workload: tc.workload, Schemes: tc.given}.withDefaults()
		if err != nil {
			t.Fatalf("%s %q %v: %v", tc.db, tc.workload, tc.given, err)
		}
		if !slices.Equal(cfg.Schemes, tc.want) {
			t.Errorf("%s %q given %v: schemes %v, want %v", tc.db, tc.workload, tc.given, cfg.Schemes, tc.want)
		}
	}
}

// TestParseLoadAverage: the three load averages of a /proc/loadavg line, and nothing from a
// line that does not start with three numbers.
func TestParseLoadAverage(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"2.47 0.91 0.35 3/412 22898\n", "2.47 0.91 0.35"},
		{"38.12 37.49 29.57 1/900 1\n", "38.12 37.49 29.57"},
		{"0.00 0.01 0.05", "0.00 0.01 0.05"},
		{"", ""},
		{"2.47 0.91", ""},
		{"2.47 x 0.35 1/2 3", ""},
	} {
		if got := parseLoadAverage(tc.line); got != tc.want {
			t.Errorf("parseLoadAverage(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}
